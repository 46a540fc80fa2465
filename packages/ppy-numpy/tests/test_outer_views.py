"""Outer differences of column views (issue 27, NPBench nbody's `dx = x.T - x` with
`x = pos[:, 0:1]`).

* Run time: an operand the same on every row whose row is strided (`x.T` of a column
  view: a row of stride 24) is gathered once into a contiguous row, which every row
  reads in place; the rows entry then runs all rows in one call (`rows` counted).
* Front end: in a specialization (the parameter typed by the call's signature), a tree
  of one operation whose leaves are names bound once to basic views of a typed array,
  or their `.T`, is a site; the generic function (nothing typed) keeps such a tree
  Python (one operation over guesses pays a guard for nothing).

Every call is compared with the same source run by NumPy (bits, NaN payloads, layout,
warnings) and the fast path is asserted through `ppy.stats()`.
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
    generic,
    outcome_difference,
    random_array,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def separations(pos):
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    dx = x.T - x
    dy = y.T - y
    return np.concatenate((dx, dy))


def scaled(pos, s):
    x = pos[:, 0:1]
    return x.T * s


def outer(a: np.ndarray, b: np.ndarray):
    return a * b + 1.0
"""


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "outer_views", SOURCE)


def _counts(pair: Pair, function: str, field: str = "fast") -> tuple[int, dict[str, int]]:
    """`field` summed over every site of `function` (the generic function's and its
    specializations', `name:function.N` and `name:function.N@spec`), with fallbacks."""
    import ppy

    total, falls = 0, {}
    for key, data in ppy.stats().items():
        if key.startswith(f"{pair.name}:{function}."):
            total += int(data.get(field, 0))
            for reason, n in data.get("fallback", {}).items():
                falls[reason] = falls.get(reason, 0) + int(n)
    return total, falls


def _both(
    pair: Pair, function: str, args: tuple[Any, ...], *, speculative: bool = False
) -> dict[str, Any]:
    """Both builds on `args`: NumPy's outcome bit for bit; the fast build's counters'
    increase (fast, fallback, rows: calls whose rows the rows entry ran at once)."""
    fn = generic(pair, function) if speculative else getattr(pair.fast, function)
    (fast0, falls0), (rows0, _) = _counts(pair, function), _counts(pair, function, "rows")
    got = call(fn, args, all="ignore")
    (fast1, falls1), (rows1, _) = _counts(pair, function), _counts(pair, function, "rows")
    want = call(getattr(pair.plain, function), args, all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    falls = {r: n - falls0.get(r, 0) for r, n in falls1.items() if n != falls0.get(r, 0)}
    return {"fast": fast1 - fast0, "fallback": falls, "rows": rows1 - rows0}


def test_nbody_separations_are_sites(pair: Pair) -> None:
    """Both differences of the specialization take the fast path, their rows at once."""
    rng = np.random.default_rng(0)
    for n in (1, 2, 25, 100, 300):
        c = _both(pair, "separations", (rng.standard_normal((n, 3)),))
        # one particle: x.T and x are both (1, 1), one flat call each
        assert c == {"fast": 2, "fallback": {}, "rows": 2 if n > 1 else 0}, (n, c)


def test_generic_function_keeps_one_operation_python(pair: Pair) -> None:
    """Nothing typed (the generic function): `x.T - x` is no site, Python runs it."""
    assert not pair.records("separations")  # the module's own build cut no site there
    pos = np.random.default_rng(1).standard_normal((8, 3))
    c = _both(pair, "separations", (pos,), speculative=True)
    assert c == {"fast": 0, "fallback": {}, "rows": 0}, c


def test_a_view_beside_a_float_stays_python(pair: Pair) -> None:
    """`x.T * s` with `s` a float: not every leaf is an array, one operation stays NumPy's."""
    c = _both(pair, "scaled", (np.ones((4, 3)), 2.0))
    assert c == {"fast": 0, "fallback": {}, "rows": 0}, c


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    n=st.integers(1, 40),
    m=st.integers(1, 40),
    step=st.sampled_from((1, 2, 3, -1, -2)),
    special=st.sampled_from((0.0, 0.3)),
    seed=st.integers(0, 2**32 - 1),
)
def test_strided_rows_gathered_once(
    pair: Pair, n: int, m: int, step: int, special: float, seed: int
) -> None:
    """`a * b + 1.0` with `a` one strided row read by every row (stride 0 along the
    rows) and `b` a column: NumPy's bits (NaN payloads included) or, for a NaN result
    whose bits NumPy's order decides, NumPy's call."""
    rng = np.random.default_rng(seed)
    base = random_array(rng, (abs(step) * m, 2), special=special)
    a = base[::step, 0][None, :]  # shape (1, m), stride 16 * step: gathered once
    b = random_array(rng, (n, 1), special=special)
    c = _both(pair, "outer", (a, b))
    assert c["fast"] + sum(c["fallback"].values()) == 1, c
    assert set(c["fallback"]) <= {"result: nan/zero"}, c
    if special == 0.0:
        assert c["fast"] == 1, c


def _row_of_stride_24(values: np.ndarray) -> np.ndarray:
    """`values` as one row (1, m) of stride 24: the `.T` of a column view of (m, 3)."""
    base = np.zeros((len(values), 3))
    base[:, 0] = values
    row = base[:, 0:1].T
    assert row.strides == (8, 24)
    return row


def test_specials_in_the_gathered_row(pair: Pair) -> None:
    """NaN, inf, -0.0 and subnormals in the row gathered once and in the column."""
    b = np.array([[1.0], [-0.0], [np.inf], [5e-324]])
    c = _both(pair, "outer", (_row_of_stride_24(SPECIALS), b))
    assert c["fast"] + sum(c["fallback"].values()) == 1, c
    assert set(c["fallback"]) <= {"result: nan/zero"}, c
    finite = SPECIALS[np.isfinite(SPECIALS)]
    c = _both(pair, "outer", (_row_of_stride_24(finite), np.array([[2.0], [0.5]])))
    assert c == {"fast": 1, "fallback": {}, "rows": 1}, c
