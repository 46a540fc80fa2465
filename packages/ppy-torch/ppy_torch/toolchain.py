"""What a region build needs, probed lazily and cached per process.

Nothing here runs at import time. `torch_build()` imports torch (the fingerprint
needs its version); `toolchain()` also looks for a C++ compiler and ninja and
starts the compiler once (`--version`) to identify it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Final

FORMAT_VERSION: Final = "1"  # bump when the generated code or flags change meaning
# torch versions whose THPVariable layout the light declarations were checked against.
LIGHT_LAYOUT_VERIFIED: Final = frozenset({"2.13.0"})


@dataclass(frozen=True, slots=True)
class TorchBuild:
    """The installed torch as a region build sees it."""

    version: str
    cxx11abi: bool
    cuda: str | None
    root: Path

    @property
    def fingerprint(self) -> str:
        abi = 1 if self.cxx11abi else 0
        return f"v1:torch={self.version}:cxx11abi={abi}:cuda={self.cuda or 'none'}"

    @property
    def include_dirs(self) -> tuple[Path, ...]:
        inc = self.root / "include"
        return inc, inc / "torch" / "csrc" / "api" / "include"

    @property
    def lib_dir(self) -> Path:
        return self.root / "lib"

    @property
    def light_layout(self) -> bool:
        return self.version.split("+")[0] in LIGHT_LAYOUT_VERIFIED


@dataclass(frozen=True, slots=True)
class Toolchain:
    """A compiler, ninja and the headers, or what is missing (`missing` non-empty)."""

    cxx: str
    cxx_id: str
    ninja: str
    python_include: Path
    pybind11_include: Path | None
    missing: tuple[str, ...]

    @property
    def is_gcc(self) -> bool:
        return "clang" not in self.cxx_id.lower()


@functools.cache
def torch_build() -> TorchBuild:
    """The installed torch (imports it)."""
    import torch

    return TorchBuild(
        version=str(torch.__version__),
        cxx11abi=bool(torch._C._GLIBCXX_USE_CXX11_ABI),
        cuda=torch.version.cuda,
        root=Path(torch.__file__).parent,
    )


def _find_cxx() -> str | None:
    env = os.environ.get("CXX")
    if env:
        return shutil.which(env) or (env if Path(env).is_file() else None)
    for name in ("c++", "g++", "clang++"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _find_ninja() -> str | None:
    env = os.environ.get("PPY_NINJA")
    if env:
        return env if Path(env).is_file() else None
    beside = Path(sys.executable).parent / "ninja"
    if beside.is_file():
        return str(beside)
    found = shutil.which("ninja")
    if found:
        return found
    try:
        import ninja  # the pip distribution ships the binary

        path = Path(ninja.BIN_DIR) / "ninja"
        return str(path) if path.is_file() else None
    except (ImportError, AttributeError):
        return None


def _compiler_id(cxx: str) -> str | None:
    try:
        out = subprocess.run(
            [cxx, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    first = out.stdout.strip().splitlines()[:1]
    return first[0] if out.returncode == 0 and first else None


def _pybind11_include(build: TorchBuild) -> Path | None:
    bundled = build.include_dirs[0]
    if (bundled / "pybind11" / "pybind11.h").is_file():
        return bundled  # torch's own copy: the one its ABI was built with
    try:
        import pybind11

        return Path(pybind11.get_include())
    except ImportError:
        return None


@functools.cache
def toolchain() -> Toolchain:
    """Probe once per process; `missing` names each absent piece."""
    build = torch_build()
    missing: list[str] = []
    cxx = _find_cxx()
    cxx_id = _compiler_id(cxx) if cxx else None
    if not cxx or not cxx_id:
        missing.append(f"a C++ compiler ({os.environ.get('CXX') or 'c++, g++ or clang++'})")
    ninja = _find_ninja()
    if not ninja:
        missing.append("ninja (pip install ninja)")
    py_inc = Path(sysconfig.get_paths()["include"])
    if not (py_inc / "Python.h").is_file():
        missing.append(f"the Python headers ({py_inc / 'Python.h'})")
    if not (build.include_dirs[0] / "ATen" / "core" / "Tensor.h").is_file():
        missing.append(f"the torch headers ({build.include_dirs[0]})")
    pyb = _pybind11_include(build)
    if pyb is None:
        missing.append("the pybind11 headers (pip install pybind11)")
    return Toolchain(cxx or "", cxx_id or "", ninja or "", py_inc, pyb, tuple(missing))


def compile_flags(build: TorchBuild, tools: Toolchain) -> list[str]:
    """Flags shared by the precompiled header, the shim and every region source."""
    flags = [
        "-std=c++20",
        "-O2",
        "-fPIC",
        "-fvisibility=hidden",
        "-DAT_PER_OPERATOR_HEADERS",
        f"-D_GLIBCXX_USE_CXX11_ABI={1 if build.cxx11abi else 0}",
    ]
    if build.cuda:
        flags.append("-DPPY_WITH_CUDA")
    if not build.light_layout:
        flags.append("-DPPY_TORCH_PYTHON_HEADERS")
    includes = [*build.include_dirs, tools.python_include]
    if tools.pybind11_include is not None and tools.pybind11_include not in includes:
        includes.append(tools.pybind11_include)
    flags += [f"-isystem{path}" for path in includes]
    return flags


def link_flags(build: TorchBuild) -> list[str]:
    """Link against the torch libraries the region's symbols come from."""
    libs = ["-lc10", "-ltorch_cpu", "-ltorch_python"]
    if build.cuda:
        libs.insert(1, "-lc10_cuda")
    return ["-shared", f"-L{build.lib_dir}", *libs, f"-Wl,-rpath,{build.lib_dir}"]


def ext_suffix() -> str:
    return str(sysconfig.get_config_var("EXT_SUFFIX") or ".so")


def reset() -> None:
    """Forget the probes (tests change CXX or PATH)."""
    torch_build.cache_clear()
    toolchain.cache_clear()


__all__ = [
    "TorchBuild",
    "Toolchain",
    "torch_build",
    "toolchain",
    "compile_flags",
    "link_flags",
    "ext_suffix",
    "reset",
    "FORMAT_VERSION",
    "LIGHT_LAYOUT_VERIFIED",
]
