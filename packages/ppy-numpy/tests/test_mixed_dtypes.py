"""int64 arrays meeting float64 in one fused site (ppy-llvm's `_mixed`): NumPy casts
the ints to float64 (a buffered cast) and runs its float64 loop; the kernel converts
each int where it loads it. Unannotated functions typed by their calls (NPBench's
azimint_hist: `histw / histu`, float64 sums over int64 counts from `np.histogram`)
take the fast path with NumPy's bits, warnings and exceptions; a use NumPy computes
in integers is computed in int64 as NumPy does, wrapping (`(u * 2) / w`), then
converted (`w * (u + k)` with a Python int k too).
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
import numpy.typing as npt


def ratio(w, u):
    return w / u


def blend(w, u):
    return w * 0.5 + u - w


def quotient(u, v):
    return u / v + 0.25


def wraps(w, u):
    return (u * 2) / w


def square(u):
    return u * 3.0 + u * u


def shifted(w, u, k):
    return w * (u + k)


def annotated(u: "npt.NDArray[np.int64]", s: float):
    return u * s + 1.0


def edges(r, bins):
    return np.histogram(r, bins)[1] * 2.0 + 1.0


def azimint_hist(data, radius, npt):
    histu = np.histogram(radius, npt)[0]
    histw = np.histogram(radius, npt, weights=data)[0]
    return histw / histu
"""


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "mixed", SOURCE)


def fast_of(function: str) -> int:
    """Fast-path calls of `function`'s sites, its specializations' included."""
    prefix = f"mixed:{function}."
    return sum(int(s["fast"]) for k, s in ppy.stats().items() if k.startswith(prefix))


_INTS = st.one_of(
    st.integers(-1000, 1000),
    st.sampled_from([0, 1, -1, 2**53, 2**53 + 1, -(2**53) - 3, 2**63 - 1, -(2**63), 2**62 + 7]),
)
_FLOATS = st.one_of(
    st.floats(-1e6, 1e6),
    st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -2.5e-310, 1e308, -1e308]),
)
_SHAPES = st.sampled_from([(0,), (1,), (7,), (8,), (9,), (33,), (3, 0), (4, 5), (2, 3, 17)])
_LAYOUTS = st.sampled_from(["C", "F", "strided"])
_ERRSTATES = st.sampled_from([{}, {"all": "ignore"}, {"divide": "raise"}, {"invalid": "raise"}])


def _laid_out(a: np.ndarray, layout: str) -> np.ndarray:
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "strided" and a.ndim:
        wide = np.repeat(a, 2, axis=-1)
        return wide[..., ::2]
    return a


@st.composite
def _operands(draw: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    shape = draw(_SHAPES)
    n = int(np.prod(shape))
    w = np.array(draw(st.lists(_FLOATS, min_size=n, max_size=n)), dtype=np.float64)
    u = np.array(draw(st.lists(_INTS, min_size=n, max_size=n)), dtype=np.int64)
    v = np.array(draw(st.lists(_INTS, min_size=n, max_size=n)), dtype=np.int64)
    layout = draw(_LAYOUTS)
    return tuple(_laid_out(a.reshape(shape), layout) for a in (w, u, v))  # type: ignore[return-value]


def _quiet(plain: Any, size: int) -> bool:
    """NumPy raises no FP flag computing `plain()` (the kernel answers itself there)."""
    with np.errstate(all="raise"):
        try:
            plain()
        except FloatingPointError:
            return False
    return size > 0


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operands=_operands(), errstate=_ERRSTATES)
def test_int64_meets_float64(
    pair: Pair, operands: tuple[np.ndarray, np.ndarray, np.ndarray], errstate: dict[str, str]
) -> None:
    w, u, v = operands
    cases = (
        ("ratio", (w, u), lambda: w / u),
        ("blend", (w, u), lambda: w * 0.5 + u - w),
        ("quotient", (u, v), lambda: u / v + 0.25),
    )
    for name, args, plain in cases:
        before = fast_of(name)
        got = call(getattr(pair.fast, name), args, **errstate)
        want = call(getattr(pair.plain, name), args, **errstate)
        assert outcome_difference(got, want) is None, (name, outcome_difference(got, want))
        if _quiet(plain, args[0].size) and not np.isnan(want.value).any():
            assert fast_of(name) == before + 1, name


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operands=_operands(), errstate=_ERRSTATES)
def test_integer_subtrees_wrap_then_convert(
    pair: Pair, operands: tuple[np.ndarray, np.ndarray, np.ndarray], errstate: dict[str, str]
) -> None:
    """`(u * 2) / w`, `u * 3.0 + u * u`: NumPy computes the int64 parts in int64
    (wrapping at the extremes) and casts their results; the kernel too."""
    w, u, _ = operands
    cases = (("wraps", lambda: (u * 2) / w), ("square", lambda: u * 3.0 + u * u))
    for name, plain in cases:
        args = (w, u) if name == "wraps" else (u,)
        before = fast_of(name)
        got = call(getattr(pair.fast, name), args, **errstate)
        want = call(getattr(pair.plain, name), args, **errstate)
        assert outcome_difference(got, want) is None, (name, outcome_difference(got, want))
        if _quiet(plain, args[0].size) and not np.isnan(want.value).any():
            assert fast_of(name) == before + 1, name


def test_python_int_variable_under_int_ops(pair: Pair) -> None:
    """`w * (u + k)` with a Python int k: `u + k` in int64 (wrapping), then converted;
    a k beyond int64 (NumPy raises OverflowError) is NumPy's call."""
    u = np.array([2**62, -(2**63), 5, 2**53 + 1], dtype=np.int64)
    w = np.array([1.5, -0.0, np.inf, 3.0])
    cases = ((1, True), (2**53 + 1, True), (-(2**63), True), (2**62, True), (2**63, False))
    for k, fast in cases:
        before = fast_of("shifted")
        got = call(pair.fast.shifted, (w, u, k), all="ignore")
        want = call(pair.plain.shifted, (w, u, k), all="ignore")
        assert outcome_difference(got, want) is None, (k, outcome_difference(got, want))
        assert fast_of("shifted") == before + fast, k


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(n=st.sampled_from([0, 1, 50, 4000]), npt=st.sampled_from([1, 10, 1000]), seed=st.integers(0))
def test_azimint_hist(pair: Pair, n: int, npt: int, seed: int) -> None:
    """NPBench's kernel as written: fast where no bin is empty (0/0 and x/0 warn in
    NumPy, so those calls are NumPy's), NumPy's answer and warnings always."""
    rng = np.random.default_rng(seed)
    data, radius = rng.random(n), rng.random(n)
    before = fast_of("azimint_hist")
    got = call(pair.fast.azimint_hist, (data, radius, npt))
    want = call(pair.plain.azimint_hist, (data, radius, npt))
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    if want.error is None and not want.warnings:
        assert fast_of("azimint_hist") == before + 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bins", [5, "array"])
def test_histogram_edges_typed(pair: Pair, dtype: Any, bins: Any) -> None:
    """`np.histogram(r, n)[1]` has r's dtype (a typed leaf: its site is fast); edges
    given as an array are NumPy's promotion, untyped (guessed, guarded): same answer."""
    r = np.random.default_rng(3).random(64).astype(dtype)
    edges = np.linspace(0.0, 1.0, 6) if bins == "array" else bins
    before = fast_of("edges")
    got = call(pair.fast.edges, (r, edges))
    want = call(pair.plain.edges, (r, edges))
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    assert got.value.dtype == (np.float64 if bins == "array" else dtype)
    if bins != "array":
        assert fast_of("edges") == before + 1


def test_a_float_variable_beside_int64_stays_numpys(pair: Pair) -> None:
    """`u * s` with `s: float`: called with an int, NumPy's answer is int64 arithmetic
    (then + 1.0); the dispatcher's float slot would take the int, so the site is
    NumPy's (E2049) and both calls answer as NumPy does."""
    records = pair.records("annotated")
    assert records, pair.manifest
    assert all(r["unit"] is None for r in records), records
    assert "E2049" in " ".join(" ".join(r["reasons"]) for r in records)
    u = np.array([2**62, 3, -(2**63)], dtype=np.int64)
    for s in (3, 0.5):
        got, want = call(pair.fast.annotated, (u, s)), call(pair.plain.annotated, (u, s))
        assert outcome_difference(got, want) is None, (s, outcome_difference(got, want))
