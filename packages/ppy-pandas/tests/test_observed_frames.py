"""Data frames typed by the calls (issue 27): an unannotated function over a frame's
columns compiles for the frames it is called with. The pandas adapter describes a
DataFrame by its columns' names, dtypes and backings and its index; the compiler
types it as the plugin's frame, so `df["price"]` is a Series and the tree fuses. Each
answer is pandas' own, bit for bit, on both backings, with NaN and <NA>; frames
whose columns the kernel does not take run pandas (counted as fallbacks)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _pdcheck import assert_same, compile_pair, outcome, series
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ppy
from ppy_core.runtime.observed import explain

pytestmark = pytest.mark.needs_llvm

SOURCE = """import pandas as pd


def features(df):
    return (df["price"] * df["qty"] - df["fee"]).fillna(0.0)


def blend(s, t):
    return s * 2.0 + t * t
"""


@pytest.fixture(scope="module")
def pair(project):
    return compile_pair(project, "pandas_observed", SOURCE)


def _fast_calls(function: str) -> int:
    return sum(
        v.get("fast", 0)
        for k, v in ppy.stats().items()
        if k.startswith(f"pandas_observed:{function}.")
    )


def _frame(n: int, seed: int, backing: str) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    columns = {}
    for name in ("price", "qty", "fee"):
        values = rng.choice([0.0, -0.0, 1.5, -2.25, np.inf, 5e-324, 3.0], n)
        columns[name] = series(values, rng.random(n) < 0.2, backing, pd.RangeIndex(n), name)
    return pd.DataFrame(columns)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 300), seed=st.integers(0, 2**16), backing=st.sampled_from(["numpy", "arrow"])
)
def test_a_frame_function_fuses_with_pandas_answer(pair, n: int, seed: int, backing: str) -> None:
    df = _frame(n, seed, backing)
    before = _fast_calls("features")
    kind, got = outcome(pair.fast.features, (df,))
    want_kind, want = outcome(pair.plain.features, (df,))
    assert kind == want_kind == "value"
    assert_same(got, want, f"features n={n} {backing}")
    assert _fast_calls("features") == before + 1


def test_the_frame_is_described_by_its_columns(pair) -> None:
    pair.fast.features(_frame(8, 1, "numpy"))
    seen = explain(pair.fast.features)
    assert any("'price':float64:numpy" in s and "specialized" in s for s in seen), seen


def test_frames_the_kernel_does_not_take_run_pandas(pair) -> None:
    ints = pd.DataFrame({"price": [1, 2, 3], "qty": [4, 5, 6], "fee": [0, 1, 0]})
    missing = pd.DataFrame({"price": [1.0], "qty": [2.0]})
    other_index = _frame(5, 2, "numpy").set_index(pd.Index(list("abcde")))
    for df in (ints, missing, other_index):
        kind, got = outcome(pair.fast.features, (df,))
        want_kind, want = outcome(pair.plain.features, (df,))
        assert kind == want_kind, (got, want)
        if kind == "value":
            assert_same(got, want, "features")
        else:
            assert got == want


def test_series_arguments_are_typed_by_their_calls(pair) -> None:
    s = series(np.array([1.0, 2.0, -0.0]), np.array([False, True, False]), "arrow", None, "s")
    t = series(np.array([0.5, np.nan, 4.0]), np.array([False, False, True]), "numpy", None, "t")
    before = _fast_calls("blend")
    for a, b in ((s, s), (t, t)):
        assert_same(pair.fast.blend(a, b), pair.plain.blend(a, b), "blend")
    assert _fast_calls("blend") >= before + 1
