"""Reductions of each row along the last axis (issue 27, NPBench softmax): `np.max(x,
axis=-1, keepdims=True)`, `np.sum(x, axis=-1)`, `np.min` of float64 and float32 arrays
are sites of their own (`tensor.reduce {axis = -1}`), the kernel's reduction entry run
once per row (kinds ``sum_rows`` ... ``min_rows_keep``, ppy_numpy/_runtime/_rows.h).

Every call is compared with plain Python's bit for bit (values, dtype, shape, warnings
and exceptions), over rows of 0, 1, 7, 128, 129 and 1000 elements (NumPy's pairwise
sum: sequential below 8, eight accumulators up to 128, halves above) with NaN, inf,
-0.0, subnormal and huge values; the fast path is asserted wherever nothing hands the
call back to NumPy (a NaN or a zero extremum, an FP flag NumPy reports, an empty row,
rows of one element, which NumPy copies faster than a call a row).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, outcome_difference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def row_max(x):
    return np.max(x, axis=-1, keepdims=True)


def row_min(x):
    return np.min(x, axis=-1)


def row_sum(x):
    return np.sum(x, axis=-1)


def row_sum_keep(x):
    return x.sum(axis=-1, keepdims=True)


def row_sum_of(x, y):
    return np.sum(x * y + 1.0, axis=-1)


def softmax(x):
    tmp_max = np.max(x, axis=-1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.sum(tmp_out, axis=-1, keepdims=True)
    return tmp_out / tmp_sum


def other_axis(x):
    return np.sum(x, axis=0)
"""

FUNCTIONS = ("row_max", "row_min", "row_sum", "row_sum_keep")
ROW_LENGTHS = (1, 7, 128, 129, 1000)
SPECIALS = (np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, 5e-324, 3e38, 1e308)


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "row_reductions", SOURCE)


def fast_calls(pair: Pair, function: str) -> int:
    """Fast-path calls of `function`'s sites so far, generic and specialized alike."""
    prefix = f"{pair.name}:{function}."
    return sum(int(s["fast"]) for k, s in ppy.stats().items() if k.startswith(prefix))


def compare(pair: Pair, function: str, *args: Any, **errstate: str) -> int:
    """Call `function` both ways (twice: the first call compiles the signature) and
    assert the same outcome; the fast-path calls the second call made."""
    call(getattr(pair.fast, function), args, **errstate)
    before = fast_calls(pair, function)
    got = call(getattr(pair.fast, function), args, **errstate)
    want = call(getattr(pair.plain, function), args, **errstate)
    assert outcome_difference(got, want) is None, (function, outcome_difference(got, want))
    return fast_calls(pair, function) - before


def _array(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    return (rng.standard_normal(shape) * 4).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("length", ROW_LENGTHS)
def test_rows_of_every_length_take_the_fast_path(pair: Pair, dtype: type, length: int) -> None:
    x = _array(np.random.default_rng(length), (3, 2, length), dtype)
    for function in (*FUNCTIONS, "softmax"):
        fast = compare(pair, function, x, all="ignore")
        if length == 1 and function != "softmax":  # softmax's maps stay fast
            assert fast == 0, function  # rows of one element: NumPy's copy (issue 28)
        else:
            assert fast >= 1, function


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_tree_under_the_sum_fuses_into_its_rows(pair: Pair, dtype: type) -> None:
    rng = np.random.default_rng(7)
    x, y = _array(rng, (5, 300), dtype), _array(rng, (5, 300), dtype)
    assert compare(pair, "row_sum_of", x, y) == 1


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    dtype=st.sampled_from([np.float64, np.float32]),
    lead=st.sampled_from([(1,), (4,), (2, 3)]),
    length=st.sampled_from(ROW_LENGTHS),
    seed=st.integers(0, 2**16),
    specials=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SPECIALS)), max_size=4),
    errstate=st.sampled_from(["ignore", "warn", "raise"]),
)
def test_special_values_answer_as_numpy(
    pair: Pair,
    dtype: type,
    lead: tuple[int, ...],
    length: int,
    seed: int,
    specials: list[tuple[int, float]],
    errstate: str,
) -> None:
    x = _array(np.random.default_rng(seed), (*lead, length), dtype)
    with np.errstate(all="ignore"):  # 1e308 as float32 is inf, as NumPy casts it
        for at, value in specials:
            x.flat[at % x.size] = value
    ordinary = not specials
    for function in (*FUNCTIONS, "softmax"):
        fast = compare(pair, function, x, all=errstate)
        if ordinary and function != "softmax" and length > 1:  # softmax's exp may overflow
            assert fast == 1, function


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_zero_extrema_and_nan_rows_are_numpys(pair: Pair, dtype: type) -> None:
    """A zero max's sign and a NaN's bits follow NumPy's lanes: NumPy answers."""
    x = np.ones((3, 16), dtype=dtype)
    x[1] = -1.0
    x[1, 5] = -0.0  # row 1's max is -0.0
    assert compare(pair, "row_max", x) == 0
    y = np.ones((3, 16), dtype=dtype)
    y[2, 3] = np.nan
    for function in FUNCTIONS:
        assert compare(pair, function, y) == 0, function


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_overflowing_sums_warn_as_numpy(pair: Pair, dtype: type) -> None:
    big = np.finfo(dtype).max
    x = np.full((2, 9), big / 4, dtype=dtype)
    for errstate in ("warn", "raise"):  # the overflow flag hands the call to NumPy
        assert compare(pair, "row_sum", x, over=errstate) == 0
    assert compare(pair, "row_sum", x, over="ignore") == 1  # inf, unreported: the kernel's


def test_what_stays_numpys(pair: Pair) -> None:
    """Empty rows (max raises), a 1-D sum (a scalar), other layouts, another axis."""
    empty = np.ones((3, 0))
    assert compare(pair, "row_max", empty) == 0
    assert compare(pair, "row_sum", empty) == 0
    assert compare(pair, "row_sum", np.arange(5.0)) == 0
    assert compare(pair, "row_max", np.arange(5.0)) == 1  # keepdims: an array of one
    grid = np.arange(24.0).reshape(4, 6)
    assert compare(pair, "row_sum", grid.T) == 0
    assert compare(pair, "row_sum", grid[:, ::2]) == 0
    assert compare(pair, "row_sum", np.arange(6, dtype=np.int64).reshape(2, 3)) == 0
    assert compare(pair, "other_axis", grid) == 0
    assert compare(pair, "row_sum", [[1.0, 2.0]]) == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_split_over_threads_keep_the_bits(pair: Pair, dtype: type) -> None:
    """Past the rows' threading thresholds (1e6 elements for a sum, 4e6 for a max/min)
    the rows split over the pool; each row is still reduced alone, so the bits are one
    thread's."""
    from ppy_numpy._runtime import num_threads, set_num_threads

    x = _array(np.random.default_rng(11), (31100, 129), dtype)
    before = num_threads()
    try:
        for threads in (1, 2):
            set_num_threads(threads)
            for function in (*FUNCTIONS, "softmax"):
                assert compare(pair, function, x) >= 1, (threads, function)
    finally:
        set_num_threads(before)
