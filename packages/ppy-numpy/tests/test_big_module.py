"""A module of many small functions compiles kernel by kernel (issue 32 B): each
distinct kernel is an object cached by its own text, so an edit to one function
sends only that function's kernel through LLVM again, and an edit that changes no
kernel sends none; the module's library is relinked from the cached objects. Kernels
that differ only in a literal are one kernel (ppy-llvm's `_hoist`): each site passes
its literals through a small wrapper, all of a module's in one module of their own.

LLVM compiles are counted by wrapping ppy-llvm's `_toolchain._emit` (every IR module
that goes through LLVM's optimiser and code generator passes there). The timing of
the 1,250-function module is `benchmarks/big_module.py`, not a test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _npharness import Pair, compile_pair

import ppy

pytestmark = pytest.mark.needs_llvm

FUNCTIONS = 60


def source(edited: str = "", plain_edit: bool = False) -> str:
    """FUNCTIONS small functions: every other one a NumPy expression of its own
    constant (its own kernel), the rest plain Python; `edited` replaces the body of
    f2, `plain_edit` changes a plain Python function only."""
    lines = ["import numpy as np", ""]
    for i in range(FUNCTIONS):
        if i % 2 == 0:
            body = edited if (i == 2 and edited) else f"np.sin(a * {i + 0.5}) + b"
            lines += [f"def f{i}(a: np.ndarray, b: np.ndarray) -> np.ndarray:"]
            lines += [f"    return {body}", ""]
        else:
            k = i + 1 if (plain_edit and i == 3) else i
            lines += [f"def f{i}(items: list) -> int:", f"    return len(items) * {k}", ""]
    return "\n".join(lines)


@pytest.fixture
def emits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The IR texts LLVM compiles while the test runs."""
    from ppy_llvm import _toolchain

    seen: list[str] = []
    real = _toolchain._emit

    def counting(ir_text: str, ir_path: Path) -> bytes:
        seen.append(ir_text)
        return real(ir_text, ir_path)

    monkeypatch.setattr(_toolchain, "_emit", counting)
    return seen


def check(pair: Pair, names: list[str]) -> None:
    a, b = np.linspace(-2.0, 2.0, 33), np.linspace(1.0, 3.0, 33)
    before = {sid: v["fast"] for sid, v in ppy.stats().items()}
    for name in names:
        fast, plain = getattr(pair.fast, name)(a, b), getattr(pair.plain, name)(a, b)
        assert fast.tobytes() == plain.tobytes(), name
    after = ppy.stats()
    for name in names:
        (sid,) = pair.site_ids(name)
        assert after[sid]["fast"] == before.get(sid, 0) + 1, name  # the kernel ran


def test_an_edit_recompiles_only_the_edited_functions_kernel(
    project: Path, emits: list[str]
) -> None:
    folder = project / "big_module"
    folder.mkdir()
    (folder / "pyproject.toml").write_text((project / "pyproject.toml").read_text())
    arrays = [f"f{i}" for i in range(0, FUNCTIONS, 2)]

    cold = compile_pair(folder, "many", source())
    assert all(cold.compiled(name) for name in arrays)
    cold_emits = len(emits)
    # the functions differ in their literal only: one kernel, and the sites' wrappers
    assert sum("ptr noalias %consts" in text for text in emits) == 1
    assert sum(" = private unnamed_addr constant [1 x double]" in text for text in emits) == 1
    check(cold, arrays)

    edited = compile_pair(folder, "many", source(edited="np.cos(a * 2.5) - b * b"))
    assert edited.manifest["key"] != cold.manifest["key"]  # the module was rebuilt
    assert len(emits) - cold_emits == 2  # f2's new kernel and the wrappers, nothing else
    assert not set(emits[cold_emits:]) & set(emits[:cold_emits])  # kernels new to LLVM
    check(edited, arrays)

    # back to the first f2, and a plain Python function edited: every kernel's object
    # is in the cache, so LLVM compiles nothing; the library is only linked
    plain = compile_pair(folder, "many", source(plain_edit=True))
    assert plain.manifest["key"] not in (cold.manifest["key"], edited.manifest["key"])
    assert len(emits) == cold_emits + 2
    check(plain, arrays)
