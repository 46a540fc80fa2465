"""NumPy's temporary elision (numpy/_core/src/multiarray/temp_elide.c): from 256 KiB
a Python operator ``l + r`` / ``l * r`` whose right operand is a fresh temporary and
whose left one is not runs as ``np.add(r, l, out=r)``, so where two NaNs meet the
temporary's payload wins. The kernels follow it (ppy-llvm `_nan_order.swap_nodes`,
the dispatcher's elision bits) on flat calls and rows in NumPy's order, and send any
other NaN result of such a call to NumPy. Every call is compared with NumPy bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, counting, outcome_difference, run_world
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def add_scaled(x, v, dt):
    return x + dt * v


def times_sum(x, v, w):
    return x * (v + w)


def left_temp(x, v, w):
    return 2.0 * x + v * w


def minus(x, v, w):
    return x - v * w


def temp_left(x, v, w):
    return (v * w) + x


def assign(b, x, v, w):
    b[...] = x + v * w


def iadd(a, v, w):
    a += v * w


def iadd_inner(a, x, v, w):
    a += x + v * w


def outer(x, v, w, c):
    return x * (v + w) * c


def total(x, v, w):
    return np.sum(x + v * w)
"""

#: float64 elements from which NumPy elides a temporary (NPY_MIN_ELIDE_BYTES)
ELIDED = 256 * 1024 // 8
SIZES = (ELIDED - 1, ELIDED, ELIDED + 1, 10**5)
PAYLOADS = np.array([0x7FF8000000000001, 0xFFF800000000BEEF], dtype=np.uint64).view(np.float64)
MAPS = ("times_sum", "left_temp", "minus", "temp_left")
NAN_RESULT = {"result: nan/zero": 1}


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "elision", SOURCE)


def _positions(n: int) -> list[int]:
    """The vector body's start and middle, the scalar tail (n % 8 > 0), the end."""
    return sorted({0, 3, n // 2, n - 1, n - n % 8 - 1})


def _operands(n: int, where: list[int]) -> tuple[np.ndarray, ...]:
    """x, v, w of `n` elements, x and v holding different NaN payloads at `where`:
    they meet in ``x + v*w`` and ``x * (v + w)``."""
    rng = np.random.default_rng(n)
    x, v, w = (rng.uniform(-2, 2, n) for _ in range(3))
    for k in where:
        x[k], v[k] = PAYLOADS
    return x, v, w


def _run(pair: Pair, function: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """Both builds on `args`, bit for bit; the fast build's counters' increase."""
    with counting(pair, function) as c:
        got = call(getattr(pair.fast, function), args, all="ignore")
    want = call(getattr(pair.plain, function), args, all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    return c


def test_numpy_elides_from_256_kib() -> None:
    """The model's threshold and operand order are NumPy's own."""
    for n, swapped in ((ELIDED - 1, False), (ELIDED, True)):
        x, v, w = _operands(n, [5])
        bits = (x + v * w).view(np.uint64)[5]
        assert bits == PAYLOADS.view(np.uint64)[1 if swapped else 0], (n, hex(bits))
        assert (x - v * w).view(np.uint64)[5] == PAYLOADS.view(np.uint64)[0]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("function", MAPS)
def test_flat_maps(pair: Pair, function: str, n: int) -> None:
    """All operands one C buffer: the fast path, NumPy's payload on either side of
    the threshold, in the vector body and the scalar tail."""
    c = _run(pair, function, _operands(n, _positions(n)))
    assert (c["fast"], c["fallback"]) == (1, {}), c


@pytest.mark.parametrize("n", SIZES)
def test_weak_float_rows(pair: Pair, n: int) -> None:
    """A Python float beside 1-D arrays (the _splat entry's one row), and a float
    array in its place (flat): `dt` makes no temporary, ``dt * v`` does."""
    x, v, _ = _operands(n, _positions(n))
    for dt in (0.5, np.full(n, 0.5)):
        c = _run(pair, "add_scaled", (x, v, dt))
        assert (c["fast"], c["fallback"]) == (1, {}), c


@pytest.mark.parametrize("rows", [511, 512, 1563])
@pytest.mark.parametrize("function", MAPS)
def test_strided_rows(pair: Pair, function: str, rows: int) -> None:
    """Rows of 64 of wider arrays (the row runner, in NumPy's order without a NaN
    scan): the swapped order where NumPy elides, on the fast path."""
    wide = _operands(rows * 72, [])
    x, v, w = (a.reshape(rows, 72)[:, :64] for a in wide)
    for r, k in ((0, 3), (rows // 2, 33), (rows - 1, 63)):
        x[r, k], v[r, k] = PAYLOADS
    c = _run(pair, function, (x, v, w))
    assert (c["fast"], c["fallback"]) == (1, {}), c


@pytest.mark.parametrize("cols", [ELIDED - 8, ELIDED])
def test_elided_over_a_smaller_shape_goes_to_numpy(pair: Pair, cols: int) -> None:
    """``x * (v + w)`` over rows (1, cols) elided, then broadcast down a column (rows
    of a multiple of 8: NumPy's order, no scan otherwise): the
    kernel does not follow that; a NaN result is NumPy's once NumPy elides."""
    x, v, w = (a.reshape(1, cols) for a in _operands(cols, [0, cols // 2, cols - 1]))
    c = _run(pair, "outer", (x, v, w, np.array([[1.0], [-2.0]])))
    assert (c["fast"], c["fallback"]) == ((0, NAN_RESULT) if cols >= ELIDED else (1, {})), c
    x[0, :] = 1.0  # no NaN: the fast path
    c = _run(pair, "outer", (x, np.ones_like(v), w, np.array([[1.0], [-2.0]])))
    assert (c["fast"], c["fallback"]) == (1, {}), c


@pytest.mark.parametrize("n", SIZES)
def test_stores(pair: Pair, n: int) -> None:
    """``b[...] = x + v*w`` is computed as a fresh result (swapped when elided);
    ``a += v*w`` is ``np.add(a, tmp, out=a)`` (never swapped); ``a += x + v*w``
    swaps the inner add, which only NumPy answers where a NaN results."""
    where = _positions(n)

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        x, v, w = _operands(n, where)
        return [x, v, w], (x, v, w)

    def with_target() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        arrays, args = world()
        a = np.zeros(n)
        a[where] = PAYLOADS[1]
        return [a, *arrays], (a, *args)

    c, _ = run_world(pair, "assign", with_target, all="ignore")
    assert (c["fast"], c["fallback"]) == (1, {}), c

    def without_x() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        arrays, (a, _x, v, w) = with_target()
        return arrays, (a, v, w)

    c, _ = run_world(pair, "iadd", without_x, all="ignore")
    assert (c["fast"], c["fallback"]) == (1, {}), c
    c, _ = run_world(pair, "iadd_inner", with_target, all="ignore")
    assert (c["fast"], c["fallback"]) == ((0, NAN_RESULT) if n >= ELIDED else (1, {})), c


@pytest.mark.parametrize("rows", [511, 512])
def test_strided_store(pair: Pair, rows: int) -> None:
    """``b[...] = x + v*w`` into and from rows of 64 of wider arrays: a NaN result is
    NumPy's (on either side of the threshold: strided stores scan their rows), the
    target untouched until it answers."""

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        base = [a.reshape(rows, 72) for a in _operands(rows * 72, [5, rows * 36])]
        b, x, v, w = (np.zeros((rows, 72)), *base)
        return [b, x, v, w], tuple(a[:, :64] for a in (b, x, v, w))

    c, _ = run_world(pair, "assign", world, all="ignore")
    assert (c["fast"], c["fallback"]) == (0, NAN_RESULT), c


@pytest.mark.parametrize("n", SIZES)
def test_sum_of_a_swapped_tree(pair: Pair, n: int) -> None:
    """``np.sum(x + v*w)`` with two NaN payloads meeting: NumPy answers once it elides."""
    c = _run(pair, "total", _operands(n, [n // 2]))
    assert c["fast"] + sum(c["fallback"].values()) == 1, c
    if n >= ELIDED:
        assert c["fallback"] == NAN_RESULT, c
    c = _run(pair, "total", _operands(n, []))
    assert (c["fast"], c["fallback"]) == (1, {}), c


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from([*MAPS, "add_scaled"]),
    st.sampled_from(SIZES),
    st.lists(st.integers(0, 10**5), max_size=4),
    st.sampled_from([(0, 1), (1, 0), (0, 0)]),
)
def test_payloads_anywhere(
    pair: Pair, function: str, n: int, spots: list[int], order: tuple[int, int]
) -> None:
    """NaN payloads (either one on either side, or one NaN twice) anywhere."""
    x, v, w = _operands(n, [])
    for k in spots:
        x[k % n], v[k % n] = PAYLOADS[list(order)]
    args = (x, v, 0.25) if function == "add_scaled" else (x, v, w)
    c = _run(pair, function, args)
    assert (c["fast"], c["fallback"]) == (1, {}), c
