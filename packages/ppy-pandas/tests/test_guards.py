"""One fallback per guard: each runs pandas itself (same answer, same exceptions),
counted as a fallback with its reason, never the kernel."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from _pdcheck import ARROW_F64, compile_pair, outcome, site_counts

import ppy

pytestmark = pytest.mark.needs_llvm

SOURCE = """import pandas as pd


def f(a: pd.Series, b: pd.Series, c: pd.Series) -> pd.Series:
    return a * b + c.fillna(0)


def g(a: pd.Series, b: pd.Series, c: pd.Series) -> pd.Series:
    return (a > b) & c.notna()
"""


@pytest.fixture(scope="module")
def pair(project):
    return compile_pair(project, "pandas_guards", SOURCE)


def _reasons(module: str, function: str) -> dict[str, int]:
    found = [v for k, v in ppy.stats().items() if k.startswith(f"{module}:{function}.")]
    return dict(found[0]["fallback"])


BASE = pd.Series([1.0, np.nan, 3.0, -0.0], name="x")


def _cases():
    idx = BASE.index
    labels = pd.Index([5, 6, 7, 8])
    twin = pd.Index([5, 6, 7, 8])  # equal labels, another index: O(n) to compare
    yield (
        "equal indexes, distinct objects",
        (
            pd.Series(BASE.to_numpy(), index=labels),
            pd.Series(BASE.to_numpy(), index=twin),
            pd.Series(BASE.to_numpy(), index=labels),
        ),
    )
    renamed = pd.RangeIndex(4, name="other")
    yield "equal RangeIndexes, other names", (BASE, pd.Series(BASE.to_numpy(), index=renamed), BASE)
    yield (
        "indexes that pandas aligns",
        (BASE, pd.Series([1.0, 2.0, 3.0, 4.0], index=[3, 2, 1, 9]), BASE),
    )
    arrow = BASE.astype(ARROW_F64)
    arrow.index = idx
    yield "mixed backings", (BASE, arrow, BASE)
    for dtype in ("Float64", "Int64", "float32", "object", "category"):
        other = (
            BASE.astype(dtype) if dtype != "Int64" else pd.Series([1, None, 3, 0], dtype="Int64")
        )
        other.index = idx
        yield f"dtype {dtype}", (BASE, other, BASE)
    tz = pd.Series(pd.date_range("2024-01-01", periods=4, tz="Europe/Paris"), index=idx)
    yield "time zones", (tz, tz, tz)
    tagged = BASE.copy()
    tagged.attrs["unit"] = "m"
    yield "attrs", (tagged, tagged, tagged)
    strict = BASE.set_flags(allows_duplicate_labels=False)
    yield "flags", (strict, strict, strict)
    yield "a DataFrame", (pd.DataFrame({"x": BASE}), BASE, BASE)
    yield (
        "an int64 Arrow Series",
        (BASE, pd.Series([1, 2, 3, 4], dtype=pd.ArrowDtype(pa.int64()), index=idx), BASE),
    )
    chunked = pd.Series(
        pd.arrays.ArrowExtensionArray(pa.chunked_array([[1.0, None], [3.0, 4.0]])), index=idx
    )
    yield "two Arrow chunks", (chunked, chunked, chunked)


@pytest.mark.parametrize(("why", "args"), list(_cases()), ids=[c[0] for c in _cases()])
@pytest.mark.parametrize("fn", ["f", "g"])
def test_guard_runs_pandas(pair, fn, why, args) -> None:
    before = site_counts(pair.name, fn)
    got, want = outcome(getattr(pair.fast, fn), args), outcome(getattr(pair.plain, fn), args)
    assert got[0] == want[0], why
    if got[0] == "value":
        if isinstance(want[1], pd.DataFrame):
            pd.testing.assert_frame_equal(got[1], want[1], check_exact=True)
        else:
            pd.testing.assert_series_equal(got[1], want[1], check_exact=True)
    else:
        assert got[1] == want[1], why
    assert site_counts(pair.name, fn) == (before[0], before[1] + 1), why


def test_fallback_reasons_are_named(pair) -> None:
    other = pd.Series(BASE.to_numpy(), index=pd.Index([0, 1, 2, 3]))
    pair.fast.f(BASE, other, BASE)
    assert any("indexes are not one index" in r for r in _reasons(pair.name, "f"))
    pair.fast.f(BASE, BASE.astype("Float64"), BASE)
    assert any("Float64" in r for r in _reasons(pair.name, "f"))


@pytest.mark.skipif(int(pd.__version__.split(".")[0]) < 3, reason="a pandas 3 option")
def test_distinguishing_nan_from_na_runs_pandas(pair) -> None:
    """The kernel nulls the NaNs Arrow arithmetic produces (pandas 3's rule); with the
    option that keeps them, pandas runs and gives its own answer."""
    a = pd.Series(pd.arrays.ArrowExtensionArray(pa.array([0.0, 1.0, None])))
    before = site_counts(pair.name, "f")
    with pd.option_context("future.distinguish_nan_and_na", True):
        got, want = pair.fast.f(a, a, a), pair.plain.f(a, a, a)
    pd.testing.assert_series_equal(got, want, check_exact=True)
    assert site_counts(pair.name, "f") == (before[0], before[1] + 1)
    assert any("keeps the NaNs" in r for r in _reasons(pair.name, "f"))
