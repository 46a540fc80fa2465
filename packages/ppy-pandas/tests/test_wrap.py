"""The answer's Series constructor (`ppy_pandas.runtime._wrap`): the block-manager
road is taken only where it builds exactly what `pd.Series(..., copy=False)` builds,
and the fused sites' answers are the ones it makes."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from _pdcheck import assert_same, compile_pair, site_counts

from ppy_pandas.runtime import _wrap

NEW_PANDAS = tuple(int(x) for x in pd.__version__.split(".")[:2]) >= (2, 1)


def _cases() -> list[tuple[object, pd.Index, object]]:
    return [
        (np.array([1.5, np.nan, -0.0, np.inf]), pd.RangeIndex(4), None),
        (np.array([True, False, True, True]), pd.Index([3, 1, 2, 0], name="i"), "x"),
        (pd.arrays.ArrowExtensionArray(pa.array([True, None, False, True])), pd.RangeIndex(4), 7),
        (pd.arrays.ArrowExtensionArray(pa.array([1.0, None, np.nan, 2.0])), pd.RangeIndex(4), "y"),
    ]


@pytest.mark.skipif(not NEW_PANDAS, reason="pandas < 2.1 has no Series._from_mgr")
def test_the_manager_road_is_chosen_and_builds_pandas_own_series() -> None:
    _wrap._CHOSEN.pop(id(pd), None)
    maker = _wrap.series_maker(pd)
    assert maker.__qualname__.startswith("manager_maker")
    public = _wrap.public_maker(pd)
    for values, index, name in _cases():
        got, want = maker(values, index, name), public(values, index, name)
        assert_same(got, want, f"{type(values).__name__} named {name!r}")
        assert got.index is index
        assert got.array is values or got._values is values  # wrapped, not copied


def test_written_answers_behave_as_the_public_constructors_do() -> None:
    """A write into an answer reaches a view of it, a derived Series and the array it
    wraps exactly as with `pd.Series(..., copy=False)`: under copy-on-write (pandas 3)
    it reaches none of them."""
    maker = _wrap.series_maker(pd)
    assert _wrap._after_writes(pd, maker) == _wrap._after_writes(pd, _wrap.public_maker(pd))
    if int(pd.__version__.split(".")[0]) >= 3:
        assert _wrap._after_writes(pd, maker) == (9.0, 1.0, 1.0, 1.0)


def test_a_pandas_whose_manager_road_differs_gets_the_public_constructor() -> None:
    """A pandas whose `_from_mgr` builds something else (here: drops the index) is
    found out by the probes."""

    class Odd(pd.Series):
        @classmethod
        def _from_mgr(cls, mgr, axes):  # type: ignore[no-untyped-def]
            out = pd.Series._from_mgr(mgr, axes)
            return out.reset_index(drop=True)

    fake = types.SimpleNamespace(**{k: getattr(pd, k) for k in ("Index", "RangeIndex", "arrays")})
    fake.Series = Odd
    assert _wrap._choose(fake).__qualname__.startswith("public_maker")
    bare = types.SimpleNamespace(Series=type("NoMgr", (), {}))
    assert _wrap.manager_maker(bare) is None


SOURCE = """import pandas as pd


def both(a: pd.Series, b: pd.Series) -> pd.Series:
    return (a > b) | b.isna()
"""


@pytest.mark.needs_llvm
@pytest.mark.parametrize("backing", ["numpy", "arrow"])
def test_fused_answers_come_from_the_chosen_constructor(project, backing: str) -> None:
    pair = compile_pair(project, "pandas_wrap", SOURCE)
    values = np.array([1.0, np.nan, -0.0, 2.0, np.inf])
    if backing == "numpy":
        # a reversed view is not contiguous (pandas 2 keeps it so): copied
        a, b = pd.Series(values, name="s"), pd.Series(values[::-1].copy(), name="s")
    else:
        arr = pd.arrays.ArrowExtensionArray
        a = pd.Series(arr(pa.array(values, mask=values > 1.5)), name="s")
        b = pd.Series(arr(pa.array(values[::-1], mask=values < 0.5)), name="s")
    before = site_counts(pair.name, "both")
    got, want = pair.fast.both(a, b), pair.plain.both(a, b)
    fused = backing == "numpy" or int(pd.__version__.split(".")[0]) >= 3
    assert site_counts(pair.name, "both")[0] == before[0] + int(fused)
    assert_same(got, want, f"(a > b) | b.isna() on {backing}")
    if fused:  # the kernel's answer is over the first operand's index object
        assert got.index is a.index
