"""A module of many distinct kernels compiles them on every CPU (`_parallel`): worker
processes publish the very objects the builder would have compiled itself, byte for
byte, and a worker that fails costs only time."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from ppy_core.cache import using_root, verify_build

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

KERNEL = """\
define double @k{i}(double %x) {{
  %y = fmul double %x, {c}
  %z = fadd double %y, 1.0
  ret double %z
}}
"""


def _modules(n: int) -> list[str]:
    return [KERNEL.format(i=i, c=f"{i + 0.5:.1f}") for i in range(n)]


def test_many_kernels_compile_in_workers_to_the_same_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ppy_llvm import _parallel, _toolchain

    monkeypatch.setattr(_parallel, "PARALLEL_MIN", 4 * len(KERNEL))  # bytes of IR
    monkeypatch.setattr(_parallel, "cpus", lambda: 2)
    used: list[int] = []
    real = _parallel.emit_in_workers

    def counted(*args: object) -> int:
        used.append(real(*args))  # type: ignore[arg-type]
        return used[-1]

    monkeypatch.setattr(_toolchain, "emit_in_workers", counted)
    modules = _modules(12)
    with using_root(tmp_path / "cache"):
        library = _toolchain.build_linked(modules, "many")
        folder = _toolchain.cache_dir()
        assert used == [2]  # a second process compiled half of them
        lib = ctypes.CDLL(str(library))
        for i in (0, 5, 11):
            fn = getattr(lib, f"k{i}")
            fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double]
            assert fn(2.0) == 2.0 * (i + 0.5) + 1.0
        for text in modules:  # each object as this process compiles it, byte for byte
            obj = folder / f"obj-{_toolchain._key(text)}.o"
            assert verify_build(obj)
            assert obj.read_bytes() == _toolchain._emit(text, tmp_path / "x.ll")


def test_a_failing_worker_leaves_its_share_to_the_builder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ppy_llvm import _parallel, _toolchain

    monkeypatch.setattr(_parallel, "PARALLEL_MIN", 4 * len(KERNEL))  # bytes of IR
    monkeypatch.setattr(_parallel, "cpus", lambda: 2)
    monkeypatch.setattr(_parallel.sys, "executable", "/bin/true")  # a worker compiling nothing
    modules = _modules(9)
    with using_root(tmp_path / "cache"):
        library = _toolchain.build_linked(modules, "fallback")
        lib = ctypes.CDLL(str(library))
        fn = lib.k8
        fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double]
        assert fn(1.0) == 8.5 + 1.0
        for text in modules:
            assert verify_build(_toolchain.cache_dir() / f"obj-{_toolchain._key(text)}.o")
