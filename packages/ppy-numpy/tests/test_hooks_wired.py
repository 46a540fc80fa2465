"""The NumPy plugin's `adjust_call`, its lowering specs and its effects, end to end:
keywords at NumPy's defaults fuse, other keywords stay NumPy with a reason; a call
that writes an array (`out=`, `np.copyto`) splits the tree around it, so the answer
stays Python's, bit for bit; `np.sin` carries an IntrinsicSpec the llvm backend reads."""

from __future__ import annotations

import numpy as np
import pytest
from _npharness import Pair, compile_pair, difference

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np
from numpy.typing import NDArray


def total(a: NDArray[np.float64]) -> float:
    return np.sum(a, axis=None, keepdims=False) * 2.0 - 1.0


def method_total(a: NDArray[np.float64]) -> float:
    return (a.sum(axis=None, dtype=None) + 1.0) * 3.0


def per_column(a: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.sum(a, axis=0) * 2.0 - 1.0


def sines(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.sin(a, out=None, where=True) * b


def writes_out(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    return (a * 2.0 - b) + np.add(a, b, out=a) * b


def copies(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    return (a * 3.0 + b) - (np.copyto(a, b) or a)
"""


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    project = tmp_path_factory.mktemp("hooks")
    (project / "pyproject.toml").write_text('[tool.ppy]\nbackends = ["llvm"]\n')
    return compile_pair(project, "hooks_wired", SOURCE)


def run_both(pair: Pair, name: str, *arrays: np.ndarray) -> None:
    """Call `name` on fresh copies under ppy and Python: the same bits, and the
    arrays it was given end the same too (a write happened exactly as in Python)."""
    fast_args = [x.copy() for x in arrays]
    plain_args = [x.copy() for x in arrays]
    got = getattr(pair.fast, name)(*fast_args)
    want = getattr(pair.plain, name)(*plain_args)
    assert difference(got, want) is None, difference(got, want)
    for g, w in zip(fast_args, plain_args, strict=True):
        assert difference(g, w) is None


def data(n: int = 1001) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(8)
    return rng.standard_normal(n), rng.uniform(0.5, 2.0, n)


@pytest.mark.parametrize("name", ["total", "method_total", "sines"])
def test_default_keywords_fuse(pair: Pair, name: str) -> None:
    (record,) = pair.records(name)
    assert record["unit"] is not None, record["reasons"]
    ppy.reset_stats()
    run_both(pair, name, *data()[: 1 if name != "sines" else 2])
    assert pair.counts(name) == (1, {})


def test_sin_carries_an_intrinsic_spec_llvm_reads(pair: Pair) -> None:
    (record,) = pair.records("sines")
    assert 'lowering = {kind = "intrinsic", name = "sin"}' in record["ir_final"]
    assert record["backend"] == "llvm"


def test_an_axis_stays_numpy_with_a_reason(pair: Pair) -> None:
    a = np.arange(12.0).reshape(3, 4)
    (record,) = pair.records("per_column")
    assert record["text"] == "np.sum(a, axis=0) * 2.0 - 1.0"
    assert record["leaves"] == ["np.sum(a, axis=0)"]  # the sum is NumPy's, a leaf
    run_both(pair, "per_column", a)


@pytest.mark.parametrize(
    ("name", "site"), [("writes_out", "a * 2.0 - b"), ("copies", "a * 3.0 + b")]
)
def test_a_write_splits_the_tree(pair: Pair, name: str, site: str) -> None:
    records = pair.records(name)
    assert [r["text"] for r in records] == [site]  # only what runs before the write
    ppy.reset_stats()
    run_both(pair, name, *data())
    assert pair.counts(name) == (1, {})


def test_no_site_holds_a_write(pair: Pair) -> None:
    texts = {r["text"] for r in pair.manifest["expr_sites"]}
    assert not any("np.add(a, b, out=a)" in t for t in texts)
    assert not any("copyto" in t for t in texts)
