"""Observed signatures on NPBench's shapes of code (issue 27): the causes that kept a
compiled kernel Python at run time, each with the fast path asserted and the answer
equal to plain Python's bit for bit.

* chained assignments (`c1 = c2 = 1`, `a1 = a5 = k`, deriche): each name is bound
  once to the value, so the specialization types it; it was Unknown, so the
  speculative guess took it for an array and the site refused the int (`guard: type`).
* reductions along an axis of float arrays (`np.max(x, axis=-1, keepdims=True)`,
  softmax): an array of the input's dtype. Untyped, a float32 softmax's
  `tmp_out / tmp_sum` guessed `tmp_sum` a float64 array and refused (`guard: dtype`);
  typed, that one float32 division is left NumPy's by the llvm cost rule (faster), and
  `np.exp(x - tmp_max)` fuses with NumPy's float32 exp inline.
* NumPy integer scalars and np.clip of int arrays (compute: `np.clip(a1, 2, 10) * a +
  a2 * b + c` over int64 arrays with np.int64 a, b, c): an np.int64 is typed as a
  Python int (with int64 and float64 arrays NumPy gives the same dtype), its guard
  takes it beside int64 arrays and in float64 kernels (|v| <= 2**53) and refuses it
  where it promotes (int32, float32 arrays); the int clip is inline min/max.
* `2 * dx`, `1 / dt` of Python floats inside a stencil (cavity_flow, channel_flow):
  a scalar leaf no plugin fuses, read early. The specialization (dx, dt typed float)
  dropped the tree for reordering Python's evaluation and compiled nothing: with an
  int argument too (which the generic sites do not take) the loop ran as Python.
  `+ - *` of floats cannot raise; a division or a power may: read after the tree's
  first operation the call runs only where it cannot (test_leaf_guesses.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, outcome_difference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ppy
from ppy_core.runtime.observed import explain

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def chained(alpha, img):
    k = (1.0 - np.exp(-alpha)) / (1.0 + alpha)
    a1 = a5 = k
    c1 = c2 = 1
    out = c1 * (img + img) + a1 * img
    return c2 * (out - a5 * img)


def softmax(x):
    tmp_max = np.max(x, axis=-1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.sum(tmp_out, axis=-1, keepdims=True)
    return tmp_out / tmp_sum


def compute(array_1, array_2, a, b, c):
    return np.clip(array_1, 2, 10) * a + array_2 * b + c


def build_up_b(b, rho, dt, u, v, dx, dy, steps):
    for _ in range(steps):  # an int: a signature the generic sites do not take
        b[1:-1, 1:-1] = rho * (
            1 / dt * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) + (v[2:, 1:-1] - v[0:-2, 1:-1]) / dy)
            - ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)) ** 2
            - 2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) * (v[1:-1, 2:] - v[1:-1, 0:-2]) / dx)
        )


def late_division(u, dt):
    return (u[1:, :] - u[:-1, :]) * (1 / dt) + u[:-1, :]


def centered(x):
    return (x - x.mean(axis=0)) * 0.5 + np.min(x, axis=-1, keepdims=True)
"""


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "observed_npbench", SOURCE)


@contextmanager
def fast_calls(pair: Pair, function: str) -> Iterator[dict[str, int]]:
    """Fast-path calls of `function`'s sites, the generic ones and its
    specializations' alike (`ppy.stats()` keys `module:function.N[@spec]`)."""

    def total() -> int:
        prefix = f"{pair.name}:{function}."
        return sum(int(s["fast"]) for k, s in ppy.stats().items() if k.startswith(prefix))

    out: dict[str, int] = {}
    before = total()
    yield out
    out["fast"] = total() - before


_VALUES = st.sampled_from([0.0, -0.0, 1.5, -2.25, 3.0, 1e300, 5e-324, np.inf, np.nan])


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    alpha=st.sampled_from([0.25, np.float64(0.25), 2.0, np.float64(-0.5)]),
    values=st.lists(_VALUES, min_size=6, max_size=6),
)
def test_chained_assignments_type_each_name(pair: Pair, alpha: Any, values: list[float]) -> None:
    img = np.array(values * 4, dtype=np.float64).reshape(4, 6)
    with fast_calls(pair, "chained") as c:
        got = call(pair.fast.chained, (alpha, img), all="ignore")
    want = call(pair.plain.chained, (alpha, img), all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    if all(_ordinary(v) for v in values):  # specials may be NumPy's to redo (flags, NaN)
        assert c["fast"] >= 1


def _ordinary(v: float) -> bool:
    return v == 0.0 or 1e-300 < abs(v) < 1e300


_FLOATS = st.sampled_from([np.float64, np.float32])


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    dtype=_FLOATS,
    shape=st.sampled_from([(3, 5), (2, 3, 4), (1, 7)]),
    seed=st.integers(0, 2**16),
)
def test_axis_reductions_keep_the_float_dtype(
    pair: Pair, dtype: Any, shape: Any, seed: int
) -> None:
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 4
    for name in ("softmax", "centered"):
        with fast_calls(pair, name) as c:
            got = call(getattr(pair.fast, name), (x,))
        want = call(getattr(pair.plain, name), (x,))
        assert outcome_difference(got, want) is None, outcome_difference(got, want)
        assert got.value.dtype == dtype
        # of float32, softmax's `np.exp(x - tmp_max)` is NumPy's exp inline (ppy-llvm's
        # `_exp32`, proven on this build); its one division the cost rule leaves NumPy's
        assert c["fast"] >= 1, name


_INTS = st.one_of(
    st.integers(-(2**62), 2**62),
    st.sampled_from([0, 1, -1, 2**63 - 1, -(2**63), 2**53 + 1]),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    dtype=st.sampled_from([np.int64, np.int32, np.float64, np.float32]),
    scalars=st.tuples(_INTS, _INTS, _INTS),
    wrap=st.sampled_from([np.int64, int]),
    seed=st.integers(0, 2**16),
)
def test_numpy_int_scalars_and_int_clip(
    pair: Pair, dtype: Any, scalars: tuple[int, int, int], wrap: Any, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    a1, a2 = (rng.integers(-50, 1000, size=(5, 7)).astype(dtype) for _ in range(2))
    a, b, c = (wrap(v) for v in scalars)
    with fast_calls(pair, "compute") as fast:
        got = call(pair.fast.compute, (a1, a2, a, b, c), all="ignore")
    want = call(pair.plain.compute, (a1, a2, a, b, c), all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    small = all(abs(v) <= 2**53 for v in scalars)
    # the kernel runs where NumPy computes in the arrays' type with these scalars
    expected = (dtype == np.int64 and wrap is np.int64) or (
        dtype == np.float64 and wrap is np.int64 and small
    )
    if expected:
        assert fast["fast"] == 1, (dtype, wrap, scalars)


def test_int_clip_with_crossed_bounds_is_numpys(pair: Pair) -> None:
    """np.clip with lo > hi gives hi everywhere (NumPy's min(max(x, lo), hi))."""
    x = np.arange(-20, 20, dtype=np.int64)
    for args in [(x, x, np.int64(3), np.int64(-2), np.int64(7)), (x, x[::-1].copy(), 1, 2, 3)]:
        with fast_calls(pair, "compute") as fast:
            got = call(pair.fast.compute, args)
        want = call(pair.plain.compute, args)
        assert outcome_difference(got, want) is None
        assert fast["fast"] == 1


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    scalars=st.tuples(*[st.sampled_from([0.5, -2.0, 1e-3, 0.0, 1e300, np.inf])] * 4),
    seed=st.integers(0, 2**16),
)
def test_float_arithmetic_leaves_keep_the_specialized_stencil(
    pair: Pair, scalars: tuple[float, float, float, float], seed: int
) -> None:
    rho, dt, dx, dy = scalars
    rng = np.random.default_rng(seed)
    u, v = rng.standard_normal((2, 9, 11))
    fast_b, plain_b = np.zeros((9, 11)), np.zeros((9, 11))
    with fast_calls(pair, "build_up_b") as c:
        got = call(pair.fast.build_up_b, (fast_b, rho, dt, u, v, dx, dy, 2), all="ignore")
    want = call(pair.plain.build_up_b, (plain_b, rho, dt, u, v, dx, dy, 2), all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    assert fast_b.tobytes() == plain_b.tobytes()
    if all(0 < abs(x) < 1e10 for x in scalars):
        assert c["fast"] == 2
        (line,) = explain(pair.fast.build_up_b)
        assert ": specialized" in line, line


def test_a_division_read_after_an_operation_runs_only_where_it_cannot_raise(
    pair: Pair,
) -> None:
    """`1 / dt` after `u[1:] - u[:-1]`: dt == 0.0 raises where Python reads it, so the
    specialization's site runs only where `dt != 0` (its generic site refuses the
    float); at 0.0 and -0.0 Python's statement raises ZeroDivisionError."""
    u = np.arange(12.0).reshape(3, 4)
    for dt in (0.5, 0.0, -0.0, 3.0):
        with fast_calls(pair, "late_division") as c:
            got = call(pair.fast.late_division, (u, dt), all="ignore")
        want = call(pair.plain.late_division, (u, dt), all="ignore")
        assert outcome_difference(got, want) is None
        assert c["fast"] == int(dt != 0), dt
    (line,) = explain(pair.fast.late_division)
    assert ": specialized" in line, line
