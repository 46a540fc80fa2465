"""Build region extensions with ninja, cached by torch build and source hash.

Layout under the core's cache root (`ppy_core.cache.backend_dir("torch")`), in
`<toolchain key>/`:

    prelude/   ppy_aten_prelude.h(.gch), helpers, shim.o, build.ninja, done.json
    regions/<source hash>/   region.cpp, build.ninja, build.log, <module><EXT_SUFFIX>, done

A finished extension (its `done` marker written after ninja succeeded) is a cache
hit: nothing is compiled and no compiler starts; an extension a killed build left
half-linked has no marker and is rebuilt. Files are written only when their
content changed (no spurious rebuilds), and each directory is built under the
core's build lock (`ppy_core.cache.build_lock`: a dead builder's lock is broken at
once, a live one's expires after LOCK_EXPIRY_S).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import subprocess
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Final

from ppy_core.cache import (
    BuildLock,
    backend_dir,
    publish_bytes,
    record_build,
    verify_build,
    write_if_changed,
)
from ppy_core.cache import build_lock as core_build_lock
from ppy_torch import codegen, toolchain
from ppy_torch.errors import BUILD_FAILED, TOOLCHAIN_MISSING, RegionBuildError

log = logging.getLogger("ppy.torch.build")

# A C++ region build takes tens of seconds; a live holder older than this is hung.
LOCK_EXPIRY_S: Final = 900.0
DONE: Final = "done"
_CSRC: Final = ("shim.cpp", "ppy_region_abi.h", "ppy_aten_helpers.h")


@dataclass(frozen=True, slots=True)
class BuildResult:
    """A built (or found) extension: its path, whether the compiler ran, how long."""

    path: Path
    module: str
    compiled: bool
    seconds: float
    log: Path


def build_lock(directory: Path) -> contextlib.AbstractContextManager[BuildLock]:
    """The core's build lock on `directory/.lock`, with a C++ build's expiry."""
    directory.mkdir(parents=True, exist_ok=True)
    return core_build_lock(directory / ".lock", expiry=LOCK_EXPIRY_S)


class RegionBuilder:
    """Builds region sources against the installed torch, with a shared prelude."""

    def __init__(self, root: Path | None = None) -> None:
        self.build = toolchain.torch_build()
        self.tools = toolchain.toolchain()
        if self.tools.missing:
            raise RegionBuildError(
                "cannot build ATen regions: missing " + ", ".join(self.tools.missing),
                code=TOOLCHAIN_MISSING,
                hint="install what is named, or run without regions",
            )
        self.flags = toolchain.compile_flags(self.build, self.tools)
        key_text = "\n".join(
            [
                toolchain.FORMAT_VERSION,
                self.build.fingerprint,
                self.tools.cxx,
                self.tools.cxx_id,
                *self.flags,
                *(text for _, text in sorted(self._prelude_files().items())),
            ]
        )
        self.key = hashlib.sha256(key_text.encode()).hexdigest()[:20]
        self._root = root

    @property
    def root(self) -> Path:
        """`<root>/torch/<key>`; without an explicit root, the cache root in force now
        (a project's `cache-dir` while its module builds), read at every build."""
        base = self._root / "torch" if self._root is not None else backend_dir("torch")
        return base / self.key

    @property
    def prelude(self) -> Path:
        return self.root / "prelude"

    # -- prelude: precompiled header + shim, once per torch build ----------------
    @staticmethod
    def _prelude_files() -> dict[str, str]:
        files = {
            name: resources.files("ppy_torch").joinpath("csrc", name).read_text() for name in _CSRC
        }
        files["ppy_aten_prelude.h"] = codegen.prelude_source()
        return files

    def ensure_prelude(self) -> bool:
        """Build the precompiled header and the shim if needed; True if ninja ran them."""
        files = self._prelude_files()
        if self._prelude_done(files):
            return False
        with build_lock(self.prelude):
            if self._prelude_done(files):  # the holder we waited for built it
                return False
            (self.prelude / "done.json").unlink(missing_ok=True)  # until ninja succeeds
            for name, text in files.items():
                write_if_changed(self.prelude / name, text)
            write_if_changed(self.prelude / "build.ninja", self._prelude_ninja())
            self._ninja(self.prelude, self.prelude / "build.log", self.prelude / "shim.cpp")
            record_build(self.prelude / "shim.o")  # checked before every reuse
            write_if_changed(self.prelude / "done.json", json.dumps(sorted(files)))
        return True

    def _prelude_done(self, files: dict[str, str]) -> bool:
        for name, text in files.items():
            try:
                if (self.prelude / name).read_text() != text:
                    return False
            except OSError:
                return False
        outputs = [self.prelude / "shim.o", self.prelude / "done.json"]
        if self.tools.is_gcc:
            outputs.append(self.prelude / "ppy_aten_prelude.h.gch")
        return all(p.is_file() for p in outputs) and verify_build(self.prelude / "shim.o")

    def _common_ninja(self) -> list[str]:
        return [
            "ninja_required_version = 1.3",
            f"cxx = {self.tools.cxx}",
            "cflags = " + " ".join(self.flags),
            "",
        ]

    def _prelude_ninja(self) -> str:
        lines = [
            *self._common_ninja(),
            "rule pch",
            "  command = $cxx $cflags -x c++-header $in -o $out",
            "  description = precompile $in",
            "rule cxx",
            "  command = $cxx $cflags -MMD -MF $out.d -c $in -o $out",
            "  depfile = $out.d",
            "  deps = gcc",
            "",
            "build shim.o: cxx shim.cpp | ppy_region_abi.h",
        ]
        if self.tools.is_gcc:
            lines.append(
                "build ppy_aten_prelude.h.gch: pch ppy_aten_prelude.h | "
                "ppy_aten_helpers.h ppy_region_abi.h"
            )
        return "\n".join(lines) + "\n"

    # -- one module's regions ---------------------------------------------------
    def module_name(self, source_key: str) -> str:
        return f"ppy_aten_{source_key[:16]}"

    def build_module(self, module: str, source: str) -> BuildResult:
        """Build `source` (a `module_source`) as extension `module`; a hit compiles nothing."""
        directory = self.root / "regions" / module
        target = directory / f"{module}{toolchain.ext_suffix()}"
        log_path = directory / "build.log"
        start = time.perf_counter()
        if self._built(directory, target, source):
            return BuildResult(target, module, False, 0.0, log_path)
        self.ensure_prelude()
        with build_lock(directory):
            if self._built(directory, target, source):  # the holder we waited for built it
                return BuildResult(target, module, False, 0.0, log_path)
            (directory / DONE).unlink(missing_ok=True)
            write_if_changed(directory / "region.cpp", source)
            write_if_changed(directory / "build.ninja", self._module_ninja(target.name))
            self._ninja(directory, log_path, directory / "region.cpp")
            record_build(target)  # its hash, checked before it is reused or copied
            publish_bytes(directory / DONE, hashlib.sha256(source.encode()).hexdigest().encode())
        return BuildResult(target, module, True, time.perf_counter() - start, log_path)

    @staticmethod
    def _built(directory: Path, target: Path, source: str) -> bool:
        """Whether `target` is a finished build of `source` (its marker names the source)."""
        try:
            marker = (directory / DONE).read_text()
        except OSError:
            return False
        if marker != hashlib.sha256(source.encode()).hexdigest():
            return False
        return verify_build(target)  # the library's hash as recorded when it was built

    def _module_ninja(self, target: str) -> str:
        pre = self.prelude
        pch_dep = f" | {pre}/ppy_aten_prelude.h.gch" if self.tools.is_gcc else ""
        lines = [
            *self._common_ninja(),
            f"ldflags = {' '.join(toolchain.link_flags(self.build))}",
            "rule cxx",
            f"  command = $cxx $cflags -Winvalid-pch -I{pre} -c $in -o $out",
            "  description = compile regions $in",
            "rule link",
            "  command = $cxx $in -o $out $ldflags",
            "",
            f"build region.o: cxx region.cpp{pch_dep}",
            f"build {target}: link region.o {pre}/shim.o",
        ]
        return "\n".join(lines) + "\n"

    def _ninja(self, directory: Path, log_path: Path, source: Path) -> None:
        cmd = [self.tools.ninja, "-C", str(directory), "-j", "1"]
        log.info("building %s", directory)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise RegionBuildError(
                f"cannot run ninja ({self.tools.ninja}): {exc}", code=TOOLCHAIN_MISSING
            ) from exc
        log_path.write_text(f"$ {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}", encoding="utf-8")
        if proc.returncode != 0:
            raise RegionBuildError(
                f"building ATen regions failed; source {source}, build log {log_path}",
                code=BUILD_FAILED,
                hint="the log has the compiler's message",
            )


__all__ = ["RegionBuilder", "BuildResult", "write_if_changed", "build_lock"]
