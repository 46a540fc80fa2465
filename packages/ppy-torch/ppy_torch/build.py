"""Build region extensions with ninja, cached by torch build and source hash.

Layout under `cache_root()/torch/<toolchain key>/`:

    prelude/   ppy_aten_prelude.h(.gch), helpers, shim.o, build.ninja  (once per torch build)
    regions/<source hash>/   region.cpp, build.ninja, build.log, <module><EXT_SUFFIX>

A finished extension is a cache hit: nothing is compiled and no compiler starts.
Files are written only when their content changed (no spurious rebuilds), and
each directory is built under an `O_CREAT|O_EXCL` lock that expires.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Final

from ppy_torch import codegen, toolchain
from ppy_torch.errors import BUILD_FAILED, TOOLCHAIN_MISSING, RegionBuildError, RegionLockError

log = logging.getLogger("ppy.torch.build")

LOCK_STALE_S: Final = 900.0
LOCK_WAIT_S: Final = 1800.0
_CSRC: Final = ("shim.cpp", "ppy_region_abi.h", "ppy_aten_helpers.h")


@dataclass(frozen=True, slots=True)
class BuildResult:
    """A built (or found) extension: its path, whether the compiler ran, how long."""

    path: Path
    module: str
    compiled: bool
    seconds: float
    log: Path


def write_if_changed(path: Path, text: str) -> bool:
    """Write `text` unless the file already holds it; True when written."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return True


@contextlib.contextmanager
def build_lock(directory: Path) -> Iterator[None]:
    """Hold `directory/.lock` (O_CREAT|O_EXCL); a lock older than LOCK_STALE_S or whose
    process is gone is broken; waiting longer than LOCK_WAIT_S is an error (E3002)."""
    directory.mkdir(parents=True, exist_ok=True)
    lock = directory / ".lock"
    start = time.monotonic()
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if _stale(lock):
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()
                continue
            if time.monotonic() - start > LOCK_WAIT_S:
                raise RegionLockError(
                    f"the build lock {lock} is held by another process",
                    hint="remove the file if no ppy build is running",
                ) from None
            time.sleep(0.2)
            continue
        with os.fdopen(fd, "w") as handle:
            json.dump({"pid": os.getpid(), "time": time.time()}, handle)
        break
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()


def _stale(lock: Path) -> bool:
    try:
        info = json.loads(lock.read_text())
        pid, stamp = int(info["pid"]), float(info["time"])
    except (OSError, ValueError, KeyError, TypeError):
        try:
            return time.time() - lock.stat().st_mtime > 5.0
        except OSError:
            return False
    if time.time() - stamp > LOCK_STALE_S:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


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
        self.root = (root or toolchain.cache_root()) / "torch" / self.key
        self.prelude = self.root / "prelude"

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
            for name, text in files.items():
                write_if_changed(self.prelude / name, text)
            write_if_changed(self.prelude / "build.ninja", self._prelude_ninja())
            self._ninja(self.prelude, self.prelude / "build.log", self.prelude / "shim.cpp")
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
        return all(p.is_file() for p in outputs)

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
        if (
            target.is_file()
            and (directory / "region.cpp").is_file()
            and (directory / "region.cpp").read_text() == source
        ):
            return BuildResult(target, module, False, 0.0, log_path)
        self.ensure_prelude()
        with build_lock(directory):
            write_if_changed(directory / "region.cpp", source)
            write_if_changed(directory / "build.ninja", self._module_ninja(target.name))
            self._ninja(directory, log_path, directory / "region.cpp")
        return BuildResult(target, module, True, time.perf_counter() - start, log_path)

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
