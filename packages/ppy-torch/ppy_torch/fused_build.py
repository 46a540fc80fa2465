"""Build the run-time dispatcher of fused float64 sites (compile-time side).

The dispatcher (`csrc/fused_site.cpp`, extension `ppy_torch_fused`) is the same for
every site: it is built once per torch build, against the region prelude's
precompiled header, under `<torch cache>/<toolchain key>/fused/<source hash>/`, and
copied beside each module's kernels so an artifact carries it.

    companion_files(build_dir) -> ("ppy_torch_fused<EXT_SUFFIX>",)

is what the `torch` runtime adapter (`ppy_torch.fused.TorchAdapter.companion_files`)
does when a backend asks it, through the core, for the files a kernel over torch
tensors needs beside it: it ensures the dispatcher is built (a cache hit starts no
compiler), copies it into the build folder, and names the copy. Without a toolchain
it raises `RegionBuildError` (E2003) and the site stays Python with that reason.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from importlib import resources
from pathlib import Path
from typing import Final

from ppy_torch import toolchain
from ppy_torch.build import BuildResult, RegionBuilder, build_lock, write_if_changed

MODULE: Final = "ppy_torch_fused"
SOURCE: Final = "fused_site.cpp"

_builder: RegionBuilder | None = None


def _region_builder() -> RegionBuilder:
    global _builder
    if _builder is None:
        _builder = RegionBuilder()
    return _builder


def library_name() -> str:
    """The dispatcher's file name: `ppy_torch_fused<EXT_SUFFIX>`."""
    return f"{MODULE}{toolchain.ext_suffix()}"


def build_dispatcher(builder: RegionBuilder | None = None) -> BuildResult:
    """The built dispatcher (compiled now only if no build of this source exists)."""
    builder = builder or _region_builder()
    source = resources.files("ppy_torch").joinpath("csrc", SOURCE).read_text()
    digest = hashlib.sha256("\n".join([builder.key, source]).encode()).hexdigest()[:16]
    directory = builder.root / "fused" / digest
    target = directory / library_name()
    log_path = directory / "build.log"
    if target.is_file():
        return BuildResult(target, MODULE, False, 0.0, log_path)
    start = time.perf_counter()
    builder.ensure_prelude()
    with build_lock(directory):
        if not target.is_file():
            write_if_changed(directory / SOURCE, source)
            write_if_changed(directory / "build.ninja", _ninja(builder, target.name))
            builder._ninja(directory, log_path, directory / SOURCE)
    return BuildResult(target, MODULE, True, time.perf_counter() - start, log_path)


def _ninja(builder: RegionBuilder, target: str) -> str:
    pre = builder.prelude
    pch_dep = f" | {pre}/ppy_aten_prelude.h.gch" if builder.tools.is_gcc else ""
    lines = [
        "ninja_required_version = 1.3",
        f"cxx = {builder.tools.cxx}",
        "cflags = " + " ".join(builder.flags),
        f"ldflags = {' '.join(toolchain.link_flags(builder.build))}",
        "",
        "rule cxx",
        f"  command = $cxx $cflags -Winvalid-pch -I{pre} -c $in -o $out",
        "  description = compile the fused-site dispatcher",
        "rule link",
        "  command = $cxx $in -o $out $ldflags",
        "",
        f"build fused_site.o: cxx {SOURCE}{pch_dep}",
        f"build {target}: link fused_site.o",
    ]
    return "\n".join(lines) + "\n"


def companion_files(build_dir: str | Path) -> tuple[str, ...]:
    """Ensure the dispatcher is built and copied into `build_dir`; its file name."""
    built = build_dispatcher().path
    dest = Path(build_dir) / built.name
    if not (dest.is_file() and dest.read_bytes() == built.read_bytes()):
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        shutil.copy2(built, tmp)
        os.replace(tmp, dest)  # never truncate a library a process may have mapped
    return (dest.name,)


__all__ = ["MODULE", "build_dispatcher", "companion_files", "library_name"]
