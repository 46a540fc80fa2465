"""The row runner of strided maps (`_strided.h`): rows go to the kernel in chunks,
each scanned for NaN while cached; an operand broadcast along the row is filled once
per row, again only when its bits change. Each call is compared bit for bit with the
same source run by NumPy, and the fast path (or the counted NaN refusal) is asserted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, counting, outcome_difference, with_reasons

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def blend(a, b, alpha):
    return a * alpha[:, None] + b * (1.0 - alpha[:, None])


def scaled(a, col):
    return a * col - col


def step(x, dt):
    return x + dt * x


def mix(x, v, dt):
    return x + dt * v - v * x


def above(a, col):
    return a - col > 1.0
"""

CHUNK = 4096  # PPY_ROW_CHUNK: the chunk of a row
FILL = 256  # PPY_FILL_CHUNK: the chunk of a row with an operand broadcast along it


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "strided_rows", SOURCE)


def _run(pair: Pair, function: str, args: tuple[Any, ...], reason: str | None = None) -> None:
    with counting(pair, function) as c:
        got = call(getattr(pair.fast, function), args, all="ignore")
    want = call(getattr(pair.plain, function), args, all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    expected = (
        {"fast": 1, "fallback": {}} if reason is None else {"fast": 0, "fallback": {reason: 1}}
    )
    assert c == expected, with_reasons(c)


@pytest.mark.parametrize("cols", [3, 8, FILL + 3, FILL + 9, 1000, CHUNK + 1, 2 * CHUNK + 5])
def test_row_broadcast_values_in_runs(pair: Pair, cols: int) -> None:
    """Runs of equal row values (kept fill), changes, and -0.0 after 0.0 (equal as
    floats, not as bits: refilled)."""
    rng = np.random.default_rng(cols)
    rows = 12
    a, b = rng.uniform(-2, 2, (rows, cols)), rng.uniform(-2, 2, (rows, cols))
    alpha = np.array([0.5, 0.5, 0.5, 0.25, 0.0, -0.0, -0.0, 1e-310, 1e-310, 3.0, 0.5, 0.5])
    _run(pair, "blend", (a, b, alpha))
    _run(pair, "scaled", (a, alpha[:, None]))
    _run(pair, "scaled", (a[:, ::2], alpha[:, None]))  # a gathered row beside it


@pytest.mark.parametrize("where", [0, CHUNK - 1, CHUNK, 2 * CHUNK + 3])
def test_nan_in_any_chunk_goes_to_numpy(pair: Pair, where: int) -> None:
    """A NaN made or met in any chunk of a long row is found (NumPy answers)."""
    rng = np.random.default_rng(7)
    a = rng.uniform(-2, 2, (3, 2 * CHUNK + 9))
    alpha = np.array([0.5, 2.0, -1.0])
    x = a.copy()
    x[1, where] = np.nan
    _run(pair, "scaled", (x, alpha[:, None]), "result: nan/zero")
    y = a.copy()
    y[2, where] = np.inf  # inf * 0.0: a NaN the kernel makes
    _run(pair, "scaled", (y, np.array([[1.0], [1.0], [0.0]])), "result: nan/zero")


@pytest.mark.parametrize("n", [5, 8, 9, CHUNK, CHUNK + 3, CHUNK + 8, CHUNK + 9, 3 * CHUNK + 7])
def test_weak_float_nan_results_are_numpys(pair: Pair, n: int) -> None:
    """A float beside arrays of one row (filled once, chunked): NaN results stand, with
    NumPy's bits where two NaNs meet in its vector body and in its scalar tail (the
    last n % 8, which a short last chunk joins)."""
    rng = np.random.default_rng(n)
    payloads = np.array([0x7FF8000000000001, 0xFFF800000000BEEF], dtype=np.uint64).view(np.float64)
    x, v = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    _run(pair, "step", (x, 0.01))
    for where in {0, n // 2, n - 9, n - 8, n - 1} - {-1, -2, -3}:
        x[where], v[where] = payloads
    _run(pair, "step", (x, 0.01))
    _run(pair, "mix", (x, v, 0.25))
    _run(pair, "mix", (v, x, -3.0))


def test_bool_result_of_row_broadcast(pair: Pair) -> None:
    """A bool result reads its row-broadcast operand's filled row too."""
    rng = np.random.default_rng(3)
    for cols in (2, 9, CHUNK + 4):
        a = rng.uniform(-3, 3, (5, cols))
        _run(pair, "above", (a, rng.uniform(-1, 1, (5, 1))))


PAYLOADS = np.array([0x7FF8000000000001, 0xFFF800000000BEEF], dtype=np.uint64).view(np.float64)


@pytest.mark.parametrize("cols", [8, 16, FILL + 8, 1000, 2 * CHUNK + 8])
def test_rows_in_numpys_order_keep_nan_results(pair: Pair, cols: int) -> None:
    """Rows of a multiple of 8 of operands in place or broadcast along the row: a NaN
    where two NaNs meet is NumPy's, kept on the fast path."""
    rng = np.random.default_rng(cols)
    a, b = rng.uniform(-2, 2, (6, cols)), rng.uniform(-2, 2, (6, cols))
    for r, c in ((0, 0), (2, cols - 1), (5, cols // 2), (3, cols - 3)):
        a[r, c], b[r, c] = PAYLOADS
    _run(pair, "blend", (a, b, rng.uniform(0, 1, 6)))
    _run(pair, "blend", (b, a, rng.uniform(0, 1, 6)))


def test_rows_numpy_may_order_otherwise_are_scanned(pair: Pair) -> None:
    """A NaN result goes to NumPy where a row is not a multiple of 8 long, where a
    broadcast value is NaN, or where an invalid operation made a NaN (inf * 0)."""
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-2, 2, (4, 12)), rng.uniform(-2, 2, (4, 12))
    a[1, 11], b[1, 11] = PAYLOADS
    _run(pair, "blend", (a, b, rng.uniform(0, 1, 4)), "result: nan/zero")
    a, b = rng.uniform(-2, 2, (4, 16)), rng.uniform(-2, 2, (4, 16))
    _run(pair, "blend", (a, b, np.array([0.5, np.nan, 0.5, 0.25])), "result: nan/zero")
    b[2, 3] = 0.0
    _run(pair, "blend", (a, b, np.array([0.5, 0.5, -np.inf, 0.25])), "result: nan/zero")
