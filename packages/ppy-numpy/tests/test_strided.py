"""Strided views, N-D operands and broadcasting (issue 18, items 1-2).

Elementwise sites over views of any strides (steps, reversals, transposes, stencil
shifts) and operands whose shapes broadcast take the fast path, walked row by row
with zero strides for broadcast axes. Each call is compared with the same source run
by NumPy: values bit for bit, dtype, shape, C/F layout flags, exceptions, warnings.
What the path refuses is counted under its reason: a result NumPy would not lay out
in C order (beyond the all-F case), a float result holding a NaN (its bits depend on
NumPy's inner-loop lengths), a reduction over anything but C-contiguous operands.
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
    random_array,
    with_reasons,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def stencil(c, n, s, e, w):
    return 0.2 * (c + n + s + e + w)


def jacobi(A):
    return 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])


def triad(a, b, c):
    return a * b + c - 1.5


def outer(a, b):
    return a * b[:, None] + 1.0


def centred(x, mean):
    return (x - mean) / 2.0 - mean


def transposed(x):
    return x.T - x * 0.5


def compare(a, b):
    return np.where(a > b, a - b, b * 0.5) > 1.0


def waves(a, b):
    return np.sin(a) * 2.0 + b * b


def total(a, b):
    return np.sum(a * b)


def leapfrog(x, v, f, dt):
    return x + dt * v + 0.5 * dt * dt * f


def scalar_div(a, s, t):
    return a * 2.0 + s / t


def scalar_pow(a, s):
    return a + s ** 0.5 * a


def scalar_exp(a, s):
    return np.exp(s) * a + a
"""

FINITE = SPECIALS[np.isfinite(SPECIALS)]


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "strided_views", SOURCE)


def _finite(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """No NaN or inf: a NaN result is handed back to NumPy on this path."""
    x = random_array(rng, shape, special=0.0)
    mask = rng.random(x.shape) < 0.2
    x[mask] = FINITE[rng.integers(0, len(FINITE), int(mask.sum()))]
    return x


def _check(pair: Pair, function: str, args: tuple[Any, ...], fast: bool = True) -> None:
    with counting(pair, function) as c:
        got = call(getattr(pair.fast, function), args, all="ignore")
    want = call(getattr(pair.plain, function), args, all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    if want.error is None:
        value = got.value
        assert value.flags.f_contiguous == want.value.flags.f_contiguous
        assert value.strides == want.value.strides or value.size <= 1
    if fast and (
        want.error is not None
        or want.value.flags.c_contiguous
        or (
            want.value.flags.f_contiguous
            and all(a.flags.f_contiguous for a in args if isinstance(a, np.ndarray))
        )
    ):
        assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
    elif fast:  # NumPy lays the result out in another order: refused, counted
        assert c == {"fast": 0, "fallback": {"guard: layout": 1}}, with_reasons(c)


def test_stencil_views_take_the_fast_path(pair: Pair) -> None:
    rng = np.random.default_rng(1)
    for shape in ((3, 3), (5, 9), (18, 17), (64, 130), (150, 203)):  # the last: no GIL
        A = _finite(rng, shape)
        views = (A[1:-1, 1:-1], A[:-2, 1:-1], A[2:, 1:-1], A[1:-1, 2:], A[1:-1, :-2])
        _check(pair, "stencil", views)
        _check(pair, "jacobi", (A,))  # the views read in the site itself


def test_jacobi_is_one_speculative_site(pair: Pair) -> None:
    (record,) = pair.records("jacobi")
    assert record["unit"] is not None, record["reasons"]
    assert len(record["assumed"]) == 5


@pytest.mark.parametrize(
    "view",
    [
        lambda x: x[::2],
        lambda x: x[::-1],
        lambda x: x[1::3, ::-2],
        lambda x: x[:, 1:],
        lambda x: x.T,
        lambda x: x.T[::-1],
        lambda x: np.swapaxes(x.reshape(2, x.shape[0] // 2, -1), 0, 2),
    ],
    ids=["step", "reversed", "step2d", "shifted", "transposed", "transposed-reversed", "3d"],
)
def test_views_against_numpy(pair: Pair, view: Any) -> None:
    """Same-shape views: the fast path ran (or, for a layout NumPy would give in
    another order, the guard refused: layout) and the result is NumPy's."""
    rng = np.random.default_rng(2)
    x = _finite(rng, (12, 20))
    a, b, c = view(x), view(_finite(rng, (12, 20))), view(_finite(rng, (12, 20)))
    _check(pair, "triad", (a, b, c))
    _check(pair, "triad", (a, np.ascontiguousarray(b), c))


def test_broadcasting(pair: Pair) -> None:
    rng = np.random.default_rng(3)
    x = _finite(rng, (40, 33))
    with np.errstate(all="ignore"):
        m0, m1 = x.mean(axis=0), x.mean(axis=1, keepdims=True)
    _check(pair, "outer", (x, x[:, 0].copy()))
    _check(pair, "outer", (x[::3], x[::3, 5]))
    _check(pair, "centred", (x, m0))
    _check(pair, "centred", (x, m1))
    _check(pair, "centred", (x[:, :1], x[0]))  # both operands broadcast
    _check(pair, "transposed", (x[:33, :33],))
    _check(pair, "compare", (x, x[0]))
    _check(pair, "waves", (x[:, 3:], x[:, :-3]))


def test_refusals_keep_numpy(pair: Pair) -> None:
    rng = np.random.default_rng(4)
    x = _finite(rng, (16, 10))
    y = x.copy()
    y[3, 4] = np.nan
    cases = [
        ("triad", (y[:, 1:], x[:, 1:], x[:, 1:]), "result: nan/zero"),
        ("triad", (x, x[:, :4], x), "guard: shape"),  # NumPy raises; so does the site
        ("waves", (x[:, ::2], x[:, ::2]), "guard: layout"),  # NumPy's sin at stride 16
        ("total", (x[:, 1:], x[:, 1:]), "guard: layout"),  # reduction order
        ("total", (x, x[0, :4]), "guard: shape"),  # NumPy raises; so does the site
    ]
    for function, args, reason in cases:
        with counting(pair, function) as c:
            got = call(getattr(pair.fast, function), args, all="ignore")
        want = call(getattr(pair.plain, function), args, all="ignore")
        assert outcome_difference(got, want) is None, (function, reason)
        assert c == {"fast": 0, "fallback": {reason: 1}}, (function, with_reasons(c))


def test_mixed_layouts_match_numpy_order(pair: Pair) -> None:
    """F-ordered operands give an F-ordered result (one flat loop); a mix gives what
    NumPy gives: C where its axis sort keeps C, else the guard refuses (layout)."""
    rng = np.random.default_rng(5)
    f = [np.asfortranarray(_finite(rng, (6, 7))) for _ in range(3)]
    _check(pair, "triad", tuple(f))
    _check(pair, "triad", (f[0], np.ascontiguousarray(f[1]), f[2]))
    with counting(pair, "triad") as c:
        got = call(pair.fast.triad, (f[0], f[1][::-1], f[2]), all="ignore")
    want = call(pair.plain.triad, (f[0], f[1][::-1], f[2]), all="ignore")
    assert outcome_difference(got, want) is None
    assert got.value.flags.f_contiguous
    assert c["fallback"] == {"guard: layout": 1}


@st.composite
def _views(draw: Any) -> tuple[tuple[int, ...], list[Any]]:
    """A base shape and, per operand, (step per axis, reversed?, axes kept, transpose)."""
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 9)) for _ in range(nd))
    ops = []
    for _ in range(3):
        steps = [draw(st.sampled_from((1, 1, 2, -1))) for _ in range(nd)]
        drop = [draw(st.booleans()) and draw(st.booleans()) for _ in range(nd)]
        ops.append((steps, drop, draw(st.booleans())))
    return shape, ops


def _make(rng: np.random.Generator, shape: tuple[int, ...], spec: Any) -> np.ndarray:
    steps, drop, transpose = spec
    big = tuple(n * abs(s) for n, s in zip(shape, steps, strict=True))
    base = _finite(rng, big)
    index = tuple(slice(None, None, s) for s in steps)
    view = base[index] if not transpose else base.T[index[::-1]].T
    # broadcast: size-1 in place of a dropped axis (NumPy's rules)
    return view[tuple(slice(0, 1) if d else slice(None) for d in drop)]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=_views(), seed=st.integers(0, 2**32 - 1), lead=st.booleans())
def test_random_views_and_broadcasts(pair: Pair, case: Any, seed: int, lead: bool) -> None:
    """Any steps, reversals, transposes and broadcast axes: NumPy's answer; the fast
    path ran unless NumPy's axis order is not C (then the guard says layout)."""
    shape, specs = case
    rng = np.random.default_rng(seed)
    args = tuple(_make(rng, shape, s) for s in specs)
    if lead:
        args = (args[0][None], *args[1:])  # one more leading axis on one operand
    with counting(pair, "triad") as c:
        got = call(pair.fast.triad, args, all="ignore")
    want = call(pair.plain.triad, args, all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    if want.error is None:
        assert got.value.flags.f_contiguous == want.value.flags.f_contiguous
        assert got.value.strides == want.value.strides or got.value.size <= 1
    if c["fast"] == 0:
        assert c["fallback"] in ({"guard: layout": 1}, {"guard: empty": 1})
        assert not want.value.flags.c_contiguous or c["fallback"] == {"guard: empty": 1}
    else:
        assert want.value.flags.c_contiguous or want.value.flags.f_contiguous


def test_zz_most_random_cases_ran_fast(pair: Pair) -> None:
    """The random views above mostly took the fast path (refusals are the exception)."""
    fast, fallback = pair.counts("triad")
    assert fast > 2 * sum(fallback.values()), (fast, fallback)


def test_floats_beside_arrays_are_broadcast(pair: Pair) -> None:
    """A finite Python float or np.float64 where an array leaf was assumed is broadcast;
    any FP flag sends the call to Python, whose float arithmetic may raise."""
    rng = np.random.default_rng(6)
    x, v, f = (rng.uniform(-10.0, 10.0, 300) for _ in range(3))  # no flag: no fallback
    _check(pair, "leapfrog", (x, v, f, 0.01))
    _check(pair, "leapfrog", (x, v, f, np.float64(-3.5)))
    _check(pair, "leapfrog", (x[::2], v[::2], 0.5, 1e-3))  # a float in an array's slot
    _check(pair, "triad", (x, 2.0, f))
    _check(pair, "scalar_div", (x, 1.0, 3.0))
    _check(pair, "compare", (x, 0.5))  # a bool result
    _check(pair, "compare", (np.float64(0.25), x[::-3]))
    big = rng.uniform(-10.0, 10.0, (120, 90))
    _check(pair, "leapfrog", (big, big[::-1, ::-2].repeat(2, axis=1), big[:, :1], 0.125))


@pytest.mark.parametrize(
    ("function", "args", "reason"),
    [
        ("scalar_div", (np.ones(5), 1.0, 0.0), "fp-flags"),  # Python: ZeroDivisionError
        ("scalar_div", (np.ones(5), 0.0, 0.0), "result: nan/zero"),  # 0/0: NaN, seen first
        ("scalar_div", (np.ones(5), 1e300, 1e-300), "fp-flags"),  # overflow: inf, no error
        ("leapfrog", (np.ones(5), np.ones(5), np.ones(5), 1e200), "fp-flags"),
        ("scalar_pow", (np.ones(5), 2.0), "guard: type"),  # C's pow, not NumPy's sqrt
        ("scalar_exp", (np.ones(5), 2.0), "guard: type"),  # NumPy's loop on one element
        ("triad", (np.ones(5), np.inf, np.ones(5)), "guard: type"),
        ("triad", (1.0, 2.0, 3.0), "guard: type"),  # no array: Python's floats
        ("total", (np.ones(5), 2.0), "guard: type"),  # reductions take arrays only
    ],
)
def test_floats_where_python_differs_run_python(
    pair: Pair, function: str, args: tuple[Any, ...], reason: str
) -> None:
    # the generic function's speculative sites: a call with floats in-process gets
    # its specialization, which types them (test_leaf_guesses.py)
    for errstate in ("ignore", "warn"):
        with counting(pair, function) as c:
            got = call(generic(pair, function), args, all=errstate)
        want = call(getattr(pair.plain, function), args, all=errstate)
        assert outcome_difference(got, want) is None, outcome_difference(got, want)
        assert c == {"fast": 0, "fallback": {reason: 1}}, (function, args, with_reasons(c))


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    dt=st.floats(allow_nan=False, allow_infinity=False, width=64),
    n=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_floats_beside_arrays(pair: Pair, dt: float, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, v, f = (random_array(rng, (n,)) for _ in range(3))
    for args in ((x, v, f, dt), (x, dt, f, dt), (x, v, dt, np.float64(dt))):
        with counting(pair, "leapfrog") as c:
            got = call(pair.fast.leapfrog, args, all="ignore")
        want = call(pair.plain.leapfrog, args, all="ignore")
        assert outcome_difference(got, want) is None, outcome_difference(got, want)
        assert c["fast"] + sum(c["fallback"].values()) == 1
        assert set(c["fallback"]) <= {"fp-flags", "result: nan/zero"}, with_reasons(c)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=_views(), seed=st.integers(0, 2**32 - 1))
def test_random_views_with_specials_bool_result(pair: Pair, case: Any, seed: int) -> None:
    """A bool result does not depend on NaN bits: with NaN, inf, -0.0 and subnormals in
    strided and broadcast operands, the fast path runs and gives NumPy's bits."""
    shape, specs = case
    rng = np.random.default_rng(seed)
    a, b = (_make(rng, shape, s) for s in specs[:2])
    for x in (a, b):
        x[...] = np.where(rng.random(x.shape) < 0.3, rng.choice(SPECIALS, x.shape), x)
    with counting(pair, "compare") as c:
        got = call(pair.fast.compare, (a, b), all="ignore")
    want = call(pair.plain.compare, (a, b), all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    if want.error is None and want.value.flags.c_contiguous and want.value.size:
        assert c == {"fast": 1, "fallback": {}}, with_reasons(c)


def test_rows_split_over_threads_give_the_same_bits(pair: Pair) -> None:
    """From the site's threshold the rows of a strided map are split over the pool:
    every element is computed as on one thread, so the bits are NumPy's either way."""
    from ppy_numpy._runtime import num_threads, set_num_threads

    rng = np.random.default_rng(7)
    A = rng.uniform(-1.0, 1.0, (520, 610))
    before = num_threads()
    try:
        for threads in (1, 2, 3):
            set_num_threads(threads)
            _check(pair, "jacobi", (A,))
            _check(pair, "outer", (A[:, 3:], A[:, 0]))
            _check(pair, "leapfrog", (A, A[::-1], A[:, :1], 0.5))
    finally:
        set_num_threads(before)
