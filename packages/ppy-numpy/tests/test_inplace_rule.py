"""`t -= v` with nothing to fuse stays NumPy's own in-place loop: a store site would
go through a temporary (its target is one of its operands) and take about twice
NumPy's time (measured with benchmarks/npbench.py's second suite, 2.1x at 1e5). A
store with arithmetic to fuse (`t -= v * 2.0`) is still a site, with NumPy's bits. So
is any value that converges nowhere (`t += A @ v`): one operation, NumPy's."""

from __future__ import annotations

import numpy as np
import pytest
from _npharness import Pair, compile_pair, counting

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def one(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    t -= v
    return t


def fused(t: np.ndarray, v: np.ndarray) -> np.ndarray:
    t -= v * 2.0
    return t


def matvec(t: np.ndarray, A: np.ndarray, v: np.ndarray) -> np.ndarray:
    t += A @ v
    t -= 2.0 * A @ v
    return t


def trace(a: np.ndarray) -> np.ndarray:
    s = 0.0
    for i in range(a.shape[0]):
        s += np.tanh(a[i, i]) * 2.0
    return a + s
"""


@pytest.fixture(scope="module")
def pair(project) -> Pair:
    return compile_pair(project, "inplace_rule", SOURCE)


def test_one_in_place_operation_stays_numpys(pair: Pair) -> None:
    assert not pair.records("one")
    remarks = [r["message"] for r in pair.manifest["remarks"] if r["function"] == "one"]
    assert "one in-place operation stays the library's" in remarks
    t, v = np.linspace(-1.0, 1.0, 1000), np.full(1000, 0.25)
    got, want = pair.fast.one(t.copy(), v), pair.plain.one(t.copy(), v)
    assert got.tobytes() == want.tobytes()


def test_one_in_place_operation_over_any_unfused_value_stays_numpys(pair: Pair) -> None:
    """`t += A @ v` (mvt, gemver): the value converges nowhere, so the store would be
    one operation through a temporary; `2.0 * A` inside the second value is still its
    own site."""
    records = pair.records("matvec")
    assert all(r.get("store") is None for r in records), records
    assert [r["text"] for r in records] == ["2.0 * A"], records
    remarks = [r["message"] for r in pair.manifest["remarks"] if r["function"] == "matvec"]
    assert remarks.count("one in-place operation stays the library's") == 2, remarks
    rng = np.random.default_rng(2)
    t, A, v = rng.standard_normal(64), rng.standard_normal((64, 64)), rng.standard_normal(64)
    with counting(pair, "matvec") as c:
        got = pair.fast.matvec(t.copy(), A, v)
    assert got.tobytes() == pair.plain.matvec(t.copy(), A, v).tobytes()
    assert c == {"fast": 1, "fallback": {}}, c


def test_an_in_place_store_with_arithmetic_is_a_site(pair: Pair) -> None:
    (record,) = pair.records("fused")
    assert record["unit"] is not None, record
    assert record.get("store") == "name", record
    t = np.linspace(-1.0, 1.0, 1000)
    with counting(pair, "fused") as c:
        got = pair.fast.fused(t.copy(), np.full(1000, 0.25))
    assert got.tobytes() == pair.plain.fused(t.copy(), np.full(1000, 0.25)).tobytes()
    assert c == {"fast": 1, "fallback": {}}, c
    specials = np.array([np.nan, -0.0, 5e-324, np.inf] * 250)
    with np.errstate(all="ignore"):
        got, want = pair.fast.fused(t.copy(), specials), pair.plain.fused(t.copy(), specials)
    assert got.tobytes() == want.tobytes()


def test_a_number_accumulated_in_place_is_no_store_site(pair: Pair) -> None:
    """`s += np.tanh(a[i, i]) * 2.0` where `s = 0.0` (NPBench's go_fast): Python
    rebinds a number; a store site there failed its target guard on every iteration
    (1.33x NumPy's time). The value may still be a site; the answer is Python's."""
    assert all(r.get("store") is None for r in pair.records("trace"))
    a = np.linspace(-2.0, 2.0, 400).reshape(20, 20)
    with counting(pair, "trace") as c:
        got = pair.fast.trace(a)
    assert got.tobytes() == pair.plain.trace(a).tobytes()
    assert "guard: target" not in c["fallback"], c
