"""Reductions over operands whose shapes broadcast (issue 27, NPBench nbody's
`0.5 * np.sum(mass * vel**2)`, mass (N, 1) beside vel (N, 3)).

NumPy computes the tree into a C-ordered temporary of the broadcast shape and reduces
that one buffer flat (the pairwise sum over all of it), so the dispatcher spreads each
operand of fewer elements out to that shape and runs the kernel's flat loop: the same
values in the same order. Each call is compared with the same source run by NumPy
(value bits with NaN payloads, dtype, exceptions, warnings) and the fast path is
asserted; what stays refused (F-ordered or strided operands, shapes that do not
broadcast, copies past 16 MiB, a NaN or +-0 result NumPy's order decides) is counted
under its reason.
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
    expect_refusal,
    generic,
    outcome_difference,
    random_array,
    with_reasons,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def energy(m, v):
    return 0.5 * np.sum(m * v**2)


def total(a, b, c):
    return np.sum(a * b - c)


def average(a, b, c):
    return np.mean((a - b) * c)


def largest(a, b, c):
    return np.max(a + b * c)


def smallest(a, b, c):
    return np.min(a * b + c)
"""

KINDS = {"total": "sum", "average": "mean", "largest": "max", "smallest": "min"}


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "broadcast_reductions", SOURCE)


def _check(
    pair: Pair, function: str, args: tuple[Any, ...], *, speculative: bool = False, **err: str
) -> dict[str, Any]:
    """Both builds on `args`: NumPy's outcome bit for bit; the fast build's counters."""
    fn = generic(pair, function) if speculative else getattr(pair.fast, function)
    with counting(pair, function) as c:
        got = call(fn, args, **(err or {"all": "ignore"}))
    want = call(getattr(pair.plain, function), args, **(err or {"all": "ignore"}))
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    return c


def test_every_function_compiled(pair: Pair) -> None:
    for function in ("energy", *KINDS):
        assert pair.compiled(function), function


@pytest.mark.parametrize("speculative", [False, True], ids=["specialized", "speculative"])
def test_nbody_kinetic_energy_runs_fast(pair: Pair, speculative: bool) -> None:
    """nbody's shapes, and the row and column broadcasts around them."""
    rng = np.random.default_rng(0)
    for n in (1, 5, 25, 130, 1000):
        m, v = rng.uniform(0.5, 2.0, (n, 1)), rng.standard_normal((n, 3))
        for args in ((m, v), (m.T, v[:1].T.copy()), (m[:, 0], v[:1].T), (v[:, :1].copy(), v)):
            c = _check(pair, "energy", args, speculative=speculative)
            assert c == {"fast": 1, "fallback": {}}, (n, with_reasons(c))


@st.composite
def _shapes(draw: Any) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """A result shape and three operand shapes broadcasting to it: axes kept or 1,
    leading axes dropped; one operand of the whole shape."""
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 40 if nd == 1 else 12)) for _ in range(nd))
    ops = []
    for _ in range(3):
        axes = [n if draw(st.booleans()) else 1 for n in shape]
        ops.append(tuple(axes[draw(st.integers(0, nd - 1)) :]))
    ops[draw(st.integers(0, 2))] = shape
    return shape, ops


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    case=_shapes(),
    function=st.sampled_from(sorted(KINDS)),
    special=st.sampled_from((0.0, 0.2)),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_broadcasts_match_numpy(
    pair: Pair, case: Any, function: str, special: float, seed: int
) -> None:
    """Any broadcast of three operands, with NaN, inf, -0.0 and subnormals mixed in:
    NumPy's bits; the fast path ran unless the result is one NumPy's order decides."""
    _, shapes = case
    rng = np.random.default_rng(seed)
    args = tuple(random_array(rng, s, special=special) for s in shapes)
    with np.errstate(all="ignore"):
        want = getattr(pair.plain, function)(*args)
    c = _check(pair, function, args)
    if special == 0.0 or not (np.isnan(want) or expect_refusal(want, KINDS[function], 1)):
        assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
    else:  # a NaN sum is the kernel's where its NaN bits are proven NumPy's
        assert c["fast"] + sum(c["fallback"].values()) == 1, with_reasons(c)
        assert set(c["fallback"]) <= {"result: nan/zero"}, with_reasons(c)


def test_warnings_are_numpys(pair: Pair) -> None:
    """An overflow inside the tree warns (or raises) as NumPy's does: the flags send
    the call to NumPy, under each error state."""
    big = np.full((4, 1), 1e300)
    for state in ("warn", "raise", "ignore"):
        c = _check(pair, "total", (big, np.full(3, 1e10), 0.0 * big), all=state)
        assert c["fast"] + sum(c["fallback"].values()) == 1
        assert c["fast"] == (state == "ignore"), (state, with_reasons(c))


def test_large_broadcasts_and_threads(pair: Pair) -> None:
    """Past NumPy's temporary-elision size and the sum's threading threshold: the
    spread operands keep NumPy's order on one thread and split over the pool."""
    from ppy_numpy._runtime import num_threads, set_num_threads

    rng = np.random.default_rng(3)
    a, b, c = rng.standard_normal((1250, 820)), rng.standard_normal(820), rng.random((1250, 1))
    before = num_threads()
    try:
        for threads in (1, 2):
            set_num_threads(threads)
            for function in KINDS:
                counts = _check(pair, function, (a, b, c))
                assert counts == {"fast": 1, "fallback": {}}, (function, with_reasons(counts))
    finally:
        set_num_threads(before)


def test_spread_copies_are_bounded(pair: Pair) -> None:
    """The copies of the operands spread out may hold 16 MiB (NumPy's own temporary is
    result-sized): two copies of 2**20 float64 elements run fast, one more row is
    NumPy's call (counted under the shape guard)."""
    rng = np.random.default_rng(5)
    for rows, fast in ((1024, True), (1025, False)):
        a, b, c = rng.random((rows, 1024)), rng.random(1024), rng.random((rows, 1))
        counts = _check(pair, "total", (a, b, c))
        want = {"fast": 1, "fallback": {}} if fast else {"fast": 0, "fallback": {"guard: shape": 1}}
        assert counts == want, (rows, with_reasons(counts))


def test_refusals_keep_numpy(pair: Pair) -> None:
    rng = np.random.default_rng(4)
    x, row = rng.standard_normal((6, 5)), rng.standard_normal(5)
    cases = [
        ((x, row[:4], row), "guard: shape"),  # NumPy raises ValueError; so does the site
        ((np.asfortranarray(x), row, row), "guard: layout"),  # NumPy's temporary: F
        ((x[:, ::2], row[::2], row[::2]), "guard: layout"),  # strided: NumPy's own order
        ((x[:0], row, row), "guard: empty"),
    ]
    for args, reason in cases:
        c = _check(pair, "total", args)
        assert c == {"fast": 0, "fallback": {reason: 1}}, (reason, with_reasons(c))
    nan = SPECIALS[np.isnan(SPECIALS)][:1]
    c = _check(pair, "largest", (x, nan, row))  # a NaN maximum: NumPy's bits
    assert c == {"fast": 0, "fallback": {"result: nan/zero": 1}}, with_reasons(c)
