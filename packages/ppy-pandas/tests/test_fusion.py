"""Fused Series expressions against pandas itself, on both backings: each function of
one generated module (one compile) called with hypothesis-drawn Series (special
values, nulls, produced NaNs, empty, odd lengths; shared index objects of several
kinds; equal or differing names). The answer must be pandas' own by
`assert_series_equal(check_exact=True)`, with its dtype, backing, name and index,
and the fast path must have run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from _pdcheck import assert_same, compile_pair, outcome, series, site_counts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# pandas 2 keeps a NaN that arithmetic produces on the Arrow backing (pandas 3 makes it
# <NA>); the kernel reproduces pandas 3, so on pandas 2 Arrow-backed trees run pandas
ARROW_FUSES = int(pd.__version__.split(".")[0]) >= 3

pytestmark = pytest.mark.needs_llvm

EXPRS = (
    "a * b + c.fillna(0)",
    "(a > b) & c.notna()",
    "(a - b) / (c + 1.5)",
    "~(a <= b) | c.isna()",
    "(a * 2.0 - b).fillna(-1.0)",
    "a.isna() | b.isna()",
    "(a != b) ^ (c == a)",
    "-a.abs() + b",
    "3.0 - a / c",
    "(a / b).isna() & (b >= 0.5)",
)
SOURCE = "import pandas as pd\n\n" + "".join(
    f"\n\ndef t{k}(a: pd.Series, b: pd.Series, c: pd.Series) -> pd.Series:\n    return {e}\n"
    for k, e in enumerate(EXPRS)
)
SPECIAL = [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.7e308, 0.5, 3.0]


FRAME_SOURCE = """from __future__ import annotations

import pandas as pd


def masked(m: pd.Series[bool], a: pd.Series, b: pd.Series) -> pd.Series:
    return (m | (a > b)) & ~m.isna()


def score(df: pd.DataFrame) -> pd.Series:
    return df["a"] * df["b"] + df["c"].fillna(0)
"""


@pytest.fixture(scope="module")
def pair(project):
    return compile_pair(project, "pandas_trees", SOURCE)


floats = st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True))


@st.composite
def operands(draw):
    n = draw(st.sampled_from([0, 1, 7, 8, 9, 16, 33, 130]))
    backing = draw(st.sampled_from(["numpy", "arrow"]))
    index = draw(
        st.sampled_from(
            [
                pd.RangeIndex(n),
                pd.Index(np.arange(n)[::-1] * 3),
                pd.Index([f"r{i}" for i in range(n)]),
            ]
        )
    )
    # one index: one object, a view of it per Series (a frame's columns), or equal
    # RangeIndexes built apart
    share = draw(st.sampled_from(["object", "frame", "range"]))
    if share == "range":
        index = pd.RangeIndex(n)
    names = draw(st.sampled_from([("x", "x", "x"), ("x", "y", "x"), (None, None, None), (1, 1, 1)]))
    cols = []
    for name in names:
        values = np.array(draw(st.lists(floats, min_size=n, max_size=n)), np.float64)
        nulls = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
        mine = pd.RangeIndex(n) if share == "range" else index
        cols.append(series(values, nulls, backing, mine, name))
    if share == "frame":  # columns of one frame: each Series has a view of its index
        frame = pd.concat(cols, axis=1)
        cols = [frame.iloc[:, k] for k in range(3)]
    return tuple(cols)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(args=operands())
def test_trees_match_pandas(pair, args) -> None:
    for k, expr in enumerate(EXPRS):
        want = outcome(getattr(pair.plain, f"t{k}"), args)
        before = site_counts(pair.name, f"t{k}")
        got = outcome(getattr(pair.fast, f"t{k}"), args)
        after = site_counts(pair.name, f"t{k}")
        assert got[0] == want[0] == "value", f"t{k} = {expr}: {got} vs {want}"
        assert_same(got[1], want[1], f"t{k} = {expr} on {args[0].dtype}")
        # pandas' answer has the operands' index or a view of it (which, depends on
        # the op and the backing): the same labels, the same index class
        assert type(got[1].index) is type(want[1].index)
        fast = ARROW_FUSES or not isinstance(args[0].dtype, pd.ArrowDtype)
        expected = (before[0] + 1, before[1]) if fast else (before[0], before[1] + 1)
        assert after == expected, f"t{k} = {expr}: expected the {'fast' if fast else 'pandas'} path"


def test_every_tree_is_one_site(pair) -> None:
    a = pd.Series([1.0, np.nan, 3.0])
    for k in range(len(EXPRS)):
        getattr(pair.fast, f"t{k}")(a, a, a)
        assert site_counts(pair.name, f"t{k}")[0] >= 1, EXPRS[k]


@pytest.mark.parametrize("backing", ["numpy", "arrow"])
def test_frame_columns_in_the_function_fuse(project, backing) -> None:
    frames = compile_pair(project, "pandas_frames", FRAME_SOURCE)
    values = np.array([1.0, np.nan, -0.0, 2.5, np.inf, 4.0])
    nulls = np.array([False, False, True, False, False, True])
    index = pd.Index([10, 11, 12, 13, 14, 15])
    cols = {
        k: series(values * (i + 1), nulls[::-1] if i else nulls, backing, index, k)
        for i, k in enumerate("abc")
    }
    frame = pd.DataFrame(cols)
    before = site_counts(frames.name, "score")
    got, want = frames.fast.score(frame), frames.plain.score(frame)
    fused = backing == "numpy" or ARROW_FUSES
    ran = (before[0] + 1, before[1]) if fused else (before[0], before[1] + 1)
    assert site_counts(frames.name, "score") == ran
    assert_same(got, want, f"df['a'] * df['b'] + df['c'].fillna(0) on {backing}")
    ints = pd.DataFrame({"a": [1, 2], "b": [3, 4], "c": [5, None]})  # an int64 column
    pd.testing.assert_series_equal(frames.fast.score(ints), frames.plain.score(ints))
    assert site_counts(frames.name, "score")[1] == ran[1] + 1  # the guard: pandas ran


def test_columns_of_one_frame_fuse(pair) -> None:
    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0], "b": [2.0, 2.0, np.nan]}, index=[7, 8, 9])
    before = site_counts(pair.name, "t0")
    got = pair.fast.t0(frame["a"], frame["b"], frame["a"])
    assert site_counts(pair.name, "t0") == (before[0] + 1, before[1])
    want = pair.plain.t0(frame["a"], frame["b"], frame["a"])
    assert_same(got, want, "frame columns")


def test_numpy_answer_wraps_a_fresh_array_and_inputs_stay(pair) -> None:
    a = pd.Series(np.arange(10.0))
    b = pd.Series(np.full(10, 2.0), index=a.index)
    keep = a.copy()
    got = pair.fast.t0(a, b, a)
    assert not np.shares_memory(got.to_numpy(), a.to_numpy())
    got.iloc[0] = 99.0  # copy-on-write: the inputs never see it
    pd.testing.assert_series_equal(a, keep)


@pytest.mark.parametrize("backing", ["numpy", "arrow"])
def test_boolean_series_leaves(project, backing) -> None:
    frames = compile_pair(project, "pandas_frames", FRAME_SOURCE)
    index = pd.RangeIndex(11)
    flags = np.array([True, False, True, True, False, False, True, False, True, False, True])
    nulls = np.array([False, True, False, False, True, False, False, False, False, True, False])
    if backing == "numpy":
        m = pd.Series(flags, index=index, name="m")
    else:
        m = pd.Series(
            pd.arrays.ArrowExtensionArray(pa.array(flags, mask=nulls)), index=index, name="m"
        )
    values = np.array([1.0, np.nan, -0.0, 0.0, np.inf, 2.0, -1.0, 3.0, np.nan, 5.0, 0.5])
    a = series(values, nulls[::-1], backing, index, "m")
    b = series(values[::-1], nulls, backing, index, "m")
    before = site_counts(frames.name, "masked")
    got, want = frames.fast.masked(m, a, b), frames.plain.masked(m, a, b)
    fused = backing == "numpy" or ARROW_FUSES
    ran = (before[0] + 1, before[1]) if fused else (before[0], before[1] + 1)
    assert site_counts(frames.name, "masked") == ran
    assert_same(got, want, f"(m | (a > b)) & ~m.isna() on {backing}")
