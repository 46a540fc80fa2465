"""The `_splat` entry of float64 map kernels (`abi.SPLAT_SUFFIX`): a strided
call with an operand broadcast along the row (`alpha[:, None]`, a Python float beside
1-D arrays) reads that operand from a few copies of its value instead of a filled
row, one kernel call per row. Each call is compared bit for bit with NumPy running
the same source; the counters show the fast path and the `_splat` entry ran.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import (
    SPECIALS,
    Pair,
    call,
    compile_pair,
    counting,
    generic,
    outcome_difference,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def blend(a, b, alpha):
    return a * alpha[:, None] + b * (1.0 - alpha[:, None])


def leapfrog(x, v, f, dt):
    return x + dt * v + 0.5 * dt * dt * f


def pairwise(x, y):
    return np.sqrt(
        (x[:, None] - x[None, :]) * (x[:, None] - x[None, :])
        + (y[:, None] - y[None, :]) * (y[:, None] - y[None, :])
    )


def shifted(a, col, s):
    return (a - col) * s > 1.0


def waves(a, col):
    return np.sin(a) * col
"""

#: elements from which NumPy elides a float64 temporary (NPY_MIN_ELIDE_BYTES, 256 KiB)
ELIDED = 256 * 1024 // 8
PAYLOADS = np.array([0x7FF8000000000001, 0xFFF800000000BEEF], dtype=np.uint64).view(np.float64)


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "splat_rows", SOURCE)


def _splat_calls(pair: Pair, function: str) -> int:
    stats = ppy.stats()
    return sum(int(stats.get(sid, {}).get("splat", 0)) for sid in pair.site_ids(function))


def _rows_calls(pair: Pair, function: str) -> int:
    stats = ppy.stats()
    return sum(int(stats.get(sid, {}).get("rows", 0)) for sid in pair.site_ids(function))


def _run(
    pair: Pair, function: str, args: tuple[Any, ...], **err: str
) -> tuple[dict[str, Any], int]:
    """Both builds on `args` (bit for bit); (the counters' increase, _splat calls).
    The generic function's speculative sites run: their _splat entry takes the row
    operands and Python floats they guessed arrays, while an in-process call with a
    float is answered by its specialization, which types the float (test_leaf_guesses)."""
    before = _splat_calls(pair, function)
    with counting(pair, function) as c:
        got = call(generic(pair, function), args, **err)
    want = call(getattr(pair.plain, function), args, **err)
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    return c, _splat_calls(pair, function) - before


def _fast_by_splat(pair: Pair, function: str, args: tuple[Any, ...], splat: int = 1) -> None:
    c, ran = _run(pair, function, args, all="ignore")
    assert (c["fast"], c["fallback"], ran) == (1, {}, splat), (c, ran)


@pytest.mark.parametrize("cols", [1, 3, 7, 8, 9, 16, 257, 1000, 4097, 2 * 4096 + 5])
def test_row_broadcast_rows_run_by_splat(pair: Pair, cols: int) -> None:
    """Rows of any length, a row value repeated, changed, -0.0 after 0.0, subnormal
    (rows of one element coalesce into one row without a broadcast: no _splat)."""
    rng = np.random.default_rng(cols)
    a, b = rng.uniform(-2, 2, (8, cols)), rng.uniform(-2, 2, (8, cols))
    alpha = np.array([0.5, 0.5, 0.0, -0.0, 5e-324, 1e-310, 3.0, 1e300])
    _fast_by_splat(pair, "blend", (a, b, alpha), int(cols > 1))
    if cols > 1:
        _fast_by_splat(pair, "blend", (a[:, ::-1], b, alpha))  # a reversed row: gathered
        _fast_by_splat(pair, "blend", (a[:, ::2], b[:, ::2], alpha))


@pytest.mark.parametrize("n", [2, 8, 9, 4096, 4105, 10**6 + 3])
def test_weak_float_rows_run_by_splat(pair: Pair, n: int) -> None:
    """A Python float beside 1-D arrays: one call over the row (streaming stores for a
    long one), NaN payloads meeting in the vector body and the scalar tail."""
    rng = np.random.default_rng(n)
    x, v, f = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    _fast_by_splat(pair, "leapfrog", (x, v, f, 0.01))
    for where in {0, n // 2, n - 9, n - 1} - {-8, -7, -6, -5, -4, -3, -2, -1}:
        x[where], v[where] = PAYLOADS if n < ELIDED else (PAYLOADS[0], 0.5)
        f[where] = -0.0
    _fast_by_splat(pair, "leapfrog", (x, v, f, 0.01))
    _fast_by_splat(pair, "leapfrog", (v, x, f, -0.0))


def test_two_nans_meeting_where_numpy_elides_a_temporary(pair: Pair) -> None:
    """From 256 KiB NumPy computes ``x + (dt * v)`` in place into the temporary, as
    ``(dt * v) + x``: where two NaNs meet the temporary's wins. The kernels keep the
    source's operand order (this path and the flat one alike), so the bits differ."""
    x, v, f = np.ones(ELIDED), np.ones(ELIDED), np.ones(ELIDED)
    x[3], v[3] = PAYLOADS
    _fast_by_splat(pair, "leapfrog", (x, v, f, 0.01))


def test_flags_of_a_weak_float_go_to_python(pair: Pair) -> None:
    """Python's float arithmetic may raise where NumPy warns: any FP flag -> Python."""
    x = np.array([1.0, 2.0, 3.0] * 10)
    c, _ = _run(pair, "leapfrog", (x, x, x, 1e200))  # 0.5*dt*dt overflows
    assert (c["fast"], c["fallback"]) == (0, {"fp-flags": 1}), c


def test_pairwise_and_bool_result(pair: Pair) -> None:
    """Two row-broadcast operands twice over (twins), and a bool result."""
    rng = np.random.default_rng(9)
    for n in (1, 5, 8, 100, 1003):
        x, y = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
        _fast_by_splat(pair, "pairwise", (x, y), int(n > 1))  # (1, 1): one element
        a = rng.uniform(-3, 3, (4, n))
        _fast_by_splat(pair, "shifted", (a, rng.uniform(-1, 1, (4, 1)), 2.0))  # 2.0: a splat


def test_nan_rows_numpy_may_order_otherwise_go_to_numpy(pair: Pair) -> None:
    """A NaN row value, or a NaN an invalid operation made: NumPy answers."""
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-2, 2, (4, 16)), rng.uniform(-2, 2, (4, 16))
    c, splat = _run(pair, "blend", (a, b, np.array([0.5, np.nan, 0.5, 0.25])), all="ignore")
    assert (c["fallback"], splat) == ({"result: nan/zero": 1}, 1), (c, splat)
    b[2, 3] = 0.0
    c, _ = _run(pair, "blend", (a, b, np.array([0.5, 0.5, -np.inf, 0.25])), all="ignore")
    assert c["fallback"] == {"result: nan/zero": 1}, c


@pytest.mark.parametrize("cols", [8, 16, 1000, 4096 + 8])
def test_rows_in_numpys_order_run_in_one_call(pair: Pair, cols: int) -> None:
    """Rows whose length is a multiple of 8 (NumPy's operand order in every row) run
    through the `_rows_nan` entry, one call per task, rows at any step and alignment (a
    view one element into a wider array); a NaN row value sends them row by row."""
    rng = np.random.default_rng(cols)
    wide = rng.uniform(-2, 2, (6, cols + 3))
    a, b = wide[:, 1 : cols + 1], rng.uniform(-2, 2, (6, cols))
    alpha = np.array([0.5, -0.0, 5e-324, 1e300, 3.0, 0.25])
    for args in ((a, b, alpha), (b, a, alpha[::-1]), (b[::2], a[1::2], alpha[:3])):
        rows = _rows_calls(pair, "blend")
        _fast_by_splat(pair, "blend", args)
        assert _rows_calls(pair, "blend") - rows == 1
    x, y = rng.uniform(-1, 1, cols), rng.uniform(-1, 1, cols)
    x[3], y[5] = 5e-324, -0.0
    rows = _rows_calls(pair, "pairwise")
    _fast_by_splat(pair, "pairwise", (x, y))
    assert _rows_calls(pair, "pairwise") - rows == 1
    alpha[2] = np.nan
    rows = _rows_calls(pair, "blend")
    c, splat = _run(pair, "blend", (a, b, alpha), all="ignore")
    assert (c["fallback"], splat, _rows_calls(pair, "blend") - rows) == (
        {"result: nan/zero": 1},
        1,
        0,
    ), c


@pytest.mark.parametrize("cols", [3, 13, 300, 1001])
def test_rows_off_numpys_order_run_in_one_call(pair: Pair, cols: int) -> None:
    """Rows whose length is not a multiple of 8: NumPy's buffered calls span rows, so
    its scalar tails fall elsewhere and only a NaN result's bits could differ. They
    run through the `_rows_nan` entry in one call; a NaN result it reports sends the
    call to NumPy (a NaN pair in a row's tail, where the rows' order and NumPy's
    differ); a bool result keeps the fast path with NaN operands."""
    rng = np.random.default_rng(cols)
    wide = rng.uniform(-2, 2, (7, cols + 3))
    a, b = wide[:, 1 : cols + 1], rng.uniform(-2, 2, (7, cols))
    alpha = np.array([0.5, -0.0, 5e-324, 1e300, 3.0, 0.25, 1.0])
    rows = _rows_calls(pair, "blend")
    _fast_by_splat(pair, "blend", (a, b, alpha))
    assert _rows_calls(pair, "blend") - rows == 1
    a[3, cols - 1], b[3, cols - 1] = PAYLOADS
    rows = _rows_calls(pair, "blend")
    c, splat = _run(pair, "blend", (a, b, alpha), all="ignore")
    assert (c["fallback"], splat, _rows_calls(pair, "blend") - rows) == (
        {"result: nan/zero": 1},
        1,
        1,
    ), c
    x, y = rng.uniform(-1, 1, cols), rng.uniform(-1, 1, cols)
    x[cols // 2], y[0] = 5e-324, -0.0
    rows = _rows_calls(pair, "pairwise")
    _fast_by_splat(pair, "pairwise", (x, y), int(cols > 1))
    assert _rows_calls(pair, "pairwise") - rows == int(cols > 1)
    col = rng.uniform(-1, 1, (7, 1))
    rows = _rows_calls(pair, "shifted")
    _fast_by_splat(pair, "shifted", (a, col, 2.0))
    assert _rows_calls(pair, "shifted") - rows == 1


@pytest.mark.parametrize("where", [0.1, 0.9])
def test_threads_rows_off_order_report_nan(pair: Pair, where: float) -> None:
    """Rows off NumPy's order split over two threads (a `_rows_nan` call each): a NaN
    pair in either thread's rows sends the call to NumPy; none keeps the fast path."""
    from ppy_numpy._runtime import num_threads, set_num_threads

    before = num_threads()
    set_num_threads(2)
    try:
        rng = np.random.default_rng(7)
        cols = 1001
        a, b = rng.uniform(-2, 2, (301, cols)), rng.uniform(-2, 2, (301, cols))
        alpha = rng.uniform(0, 1, 301)
        rows = _rows_calls(pair, "blend")
        _fast_by_splat(pair, "blend", (a, b, alpha))
        assert _rows_calls(pair, "blend") - rows == 1
        r = int(where * 301)
        a[r, cols - 2], b[r, cols - 2] = PAYLOADS
        c, splat = _run(pair, "blend", (a, b, alpha), all="ignore")
        assert (c["fallback"], splat) == ({"result: nan/zero": 1}, 1), c
    finally:
        set_num_threads(before)


@pytest.mark.parametrize(("cols", "offset"), [(1000, 1), (64, 0), (72, 5)])
def test_large_rows_stream_numpys_bits(pair: Pair, cols: int, offset: int) -> None:
    """Rows holding enough elements that the `_rows_nan` entry streams their stores
    (`_kernel_map.rows_nt_min`, plain lines at each row's edges): NumPy's bits with -0.0,
    subnormals and huge values in the rows and row values, NaN payloads in the rows
    (where NumPy elides a temporary, the kernel follows); a NaN row value: row by row,
    NumPy's answer, counted."""
    from ppy_llvm._kernel_map import rows_nt_min
    from ppy_numpy._runtime import num_threads

    rng = np.random.default_rng(cols)
    nrows = -(-rows_nt_min(4) * num_threads() // cols) + 3  # each thread's rows stream
    wide = rng.uniform(-2, 2, (nrows, cols + 8))
    a, b = wide[:, offset : cols + offset], rng.uniform(-2, 2, (nrows, cols))
    specials = np.array([0.0, -0.0, 5e-324, -1e-310, 1e300, -1e300, 2.5])
    for x in (a, b):
        spots = rng.random(x.shape) < 0.01
        x[spots] = specials[rng.integers(0, len(specials), int(spots.sum()))]
    alpha = rng.uniform(0, 1, nrows)
    alpha[::97] = specials[rng.integers(0, 4, len(alpha[::97]))]
    rows = _rows_calls(pair, "blend")
    _fast_by_splat(pair, "blend", (a, b, alpha))
    assert _rows_calls(pair, "blend") - rows == 1
    a[nrows // 3, 7], b[nrows // 2, 5] = PAYLOADS
    a[nrows - 1, cols - 1], b[nrows - 1, cols - 1] = PAYLOADS[::-1]
    _fast_by_splat(pair, "blend", (a, b, alpha))
    assert _rows_calls(pair, "blend") - rows == 2
    alpha[nrows // 2] = np.nan
    c, splat = _run(pair, "blend", (a, b, alpha), all="ignore")
    assert (c["fallback"], splat) == ({"result: nan/zero": 1}, 1), c


def test_library_loop_kernels_have_no_splat_entry(pair: Pair) -> None:
    """A kernel calling NumPy's loops reads its operands by pointer: no _splat entry."""
    a = np.linspace(-3, 3, 64).reshape(4, 16)
    c, splat = _run(pair, "waves", (a, np.arange(4.0)[:, None]), all="ignore")
    assert (c["fast"], splat) == (1, 0), (c, splat)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.integers(1, 6),
    cols=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
    special=st.floats(0.0, 0.5),
)
def test_splat_rows_equal_numpy(
    pair: Pair, rows: int, cols: int, seed: int, special: float
) -> None:
    """Random rows with specials (NaN, inf, -0.0, subnormals) in any operand: NumPy's
    bits, on the fast path or by a counted refusal."""
    rng = np.random.default_rng(seed)

    def arr(shape: tuple[int, ...]) -> np.ndarray:
        x = rng.uniform(-4, 4, shape)
        mask = rng.random(shape) < special
        x[mask] = SPECIALS[rng.integers(0, len(SPECIALS), int(mask.sum()))]
        return x

    c, splat = _run(pair, "blend", (arr((rows, cols)), arr((rows, cols)), arr((rows,))))
    assert c["fast"] + sum(c["fallback"].values()) == 1, c
    assert set(c["fallback"]) <= {"result: nan/zero", "fp-flags"}, c
    assert splat == int(cols > 1), splat  # one column: one row, nothing broadcast
