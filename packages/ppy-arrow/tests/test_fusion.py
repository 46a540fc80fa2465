"""Fused pyarrow.compute trees against pyarrow.compute itself: random expression trees
(one generated module, one compile) over hypothesis-drawn arrays (special values;
no bitmap, all-null, random nulls, a bitmap with a known or an uncounted zero null
count; sliced at a byte boundary, inside a byte, or not; empty; chunked). Each call
must give Arrow's answer bit for bit (or Arrow's exception), through the kernel
where the guard holds and through Arrow where it does not.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from _arrowcheck import assert_same, column, compile_pair, outcome, site_counts
from _trees import module_source
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.needs_llvm

TREES = 30
SPECIAL = [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.7e308, -2.0, 3.0]
MODES = ("none", "mask", "all", "zero", "unknown")


@pytest.fixture(scope="module")
def trees(project):
    source, exprs = module_source(TREES)
    return compile_pair(project, "arrow_trees", source), exprs


floats = st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True))


@st.composite
def operands(draw):
    n = draw(st.sampled_from([0, 1, 7, 8, 9, 16, 63, 64, 65, 130]))
    offset = draw(st.sampled_from([0, 0, 8, 16, 3]))
    cols = []
    for kind in ("f64", "f64", "f64", "i1"):
        mode = draw(st.sampled_from(MODES))
        if kind == "f64":
            values = np.array(draw(st.lists(floats, min_size=n, max_size=n)), np.float64)
        else:
            values = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
        mask = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
        cols.append(column(values, mode, mask, offset, kind))
    x = draw(floats)
    return (*cols, x), offset


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=operands())
def test_random_trees_match_pyarrow(trees, data) -> None:
    pair, exprs = trees
    args, offset = data
    for k, expr in enumerate(exprs):
        want = outcome(getattr(pair.plain, f"t{k}"), args)
        before = site_counts(pair.name, f"t{k}")
        got = outcome(getattr(pair.fast, f"t{k}"), args)
        after = site_counts(pair.name, f"t{k}")
        assert got[0] == want[0], f"t{k} = {expr}: {got} vs {want}"
        if got[0] == "error":
            assert got[1] == want[1], expr
        else:
            assert_same(got[1], want[1], f"t{k} = {expr} over {_describe(args)}")
        if offset % 8:  # a bitmap sliced inside a byte: Arrow's compute
            assert after[1] == before[1] + 1, f"t{k} = {expr}: expected the fallback"
        elif got[0] == "value":  # a raising call ran the kernel, then Arrow to raise
            assert after[0] == before[0] + 1, f"t{k} = {expr}: expected the fast path"


def _describe(args: tuple) -> str:
    return "; ".join(
        f"len {len(x)} offset {x.offset} raw nulls {x.__reduce__()[1][0][2]} "
        f"bitmap {x.buffers()[0] is not None}"
        for x in args[:4]
    )


def test_every_tree_compiled(trees) -> None:
    """Each tree is one site, bound to a kernel (its first call is a fast call)."""
    pair, exprs = trees
    a = pa.array([1.0, None, 3.0] * 4)
    m = pa.array([True, False, None] * 4)
    for k in range(len(exprs)):
        getattr(pair.fast, f"t{k}")(a, a, a, m, 2.0)
        assert site_counts(pair.name, f"t{k}")[0] >= 1, exprs[k]


def test_chunked_and_other_types_run_pyarrow(trees) -> None:
    pair, _exprs = trees
    a = pa.array([1.0, None, 3.0, 4.0])
    m = pa.array([True, False, None, True])
    chunked = pa.chunked_array([a[:2], a[2:]])
    bools = pa.chunked_array([m[:1], m[1:]])
    ints = pa.array([1, 2, None, 4])
    floats32 = pa.array([1.0, None, 3.0, 4.0], pa.float32())
    for k in range(6):
        fn, ref = getattr(pair.fast, f"t{k}"), getattr(pair.plain, f"t{k}")
        cases = (
            (chunked,) * 3 + (bools, 1.0),
            (ints,) * 3 + (ints, 1.0),
            (floats32,) * 3 + (m, 1.0),
        )
        for args in cases:
            fast_before, fall_before = site_counts(pair.name, f"t{k}")
            got, want = outcome(fn, args), outcome(ref, args)
            assert got[0] == want[0]
            if got[0] == "value":
                assert got[1].equals(want[1])
            else:
                assert got[1] == want[1]
            assert site_counts(pair.name, f"t{k}") == (fast_before, fall_before + 1)
