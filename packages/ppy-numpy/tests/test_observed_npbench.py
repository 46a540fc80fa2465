"""Observed signatures on NPBench's shapes of code (issue 27): the causes that kept a
compiled kernel Python at run time, each with the fast path asserted and the answer
equal to plain Python's bit for bit.

* chained assignments (`c1 = c2 = 1`, `a1 = a5 = k`, deriche): each name is bound
  once to the value, so the specialization types it; it was Unknown, so the
  speculative guess took it for an array and the site refused the int (`guard: type`).
* reductions along an axis of float arrays (`np.max(x, axis=-1, keepdims=True)`,
  softmax): an array of the input's dtype. Untyped, a float32 softmax's
  `tmp_out / tmp_sum` guessed `tmp_sum` a float64 array and refused (`guard: dtype`).
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
        assert c["fast"] >= 1, name
