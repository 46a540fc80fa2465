"""Boolean answers at every step boundary of the kernels, on both backings.

A kernel with a boolean answer reads and writes whole words of bits on the Arrow
backing (32 slots per step, each bitmap read a word at a time, the last n % 32 slots
through zeroed scratch words) and 8 bytes per step on the NumPy backing. These
tests put lengths on each side of those boundaries, slice the Series at offsets 8
and 24 (the Arrow bitmaps then start a byte, or three, into a word; an offset inside
a byte runs pandas), with and without bitmaps and with every slot null, and check
each answer is pandas' own (values, <NA>s, dtype, index, null count) and came from
the kernel.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from _pdcheck import assert_same, compile_pair, site_counts

pytestmark = pytest.mark.needs_llvm

ARROW_FUSES = int(pd.__version__.split(".")[0]) >= 3
LENGTHS = (1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 95, 96, 97, 1000, 1031)
EXPRS = (
    "(a > b) & c.notna()",
    "~(a <= 0.5) | (b.isna() & (c > a))",
    "(a != b) ^ (c == a)",
    "(a >= c) | b.isna()",
)
SOURCE = "import pandas as pd\n" + "".join(
    f"\n\ndef w{k}(a: pd.Series, b: pd.Series, c: pd.Series) -> pd.Series:\n    return {e}\n"
    for k, e in enumerate(EXPRS)
)


@pytest.fixture(scope="module")
def pair(project):
    return compile_pair(project, "pandas_bool_steps", SOURCE)


def _columns(n: int, offset: int, nulls: str, backing: str) -> tuple[pd.Series, ...]:
    """Three float64 Series of n rows (special values included), each the slice
    [offset, offset + n) of a longer one; `nulls`: "some", "none" (no bitmap on
    Arrow), "all"."""
    rng = np.random.default_rng(n * 101 + offset)
    total = offset + n
    special = np.array([0.0, -0.0, np.inf, -np.inf, 0.5, 5e-324, np.nan, 1.0])
    cols = []
    for k in range(3):
        values = rng.standard_normal(total)
        values = np.where(rng.random(total) < 0.2, rng.choice(special, total), values)
        if nulls == "some":
            mask = rng.random(total) < 0.3
            mask[-1] = True  # a bitmap on every Arrow slice
        else:
            mask = np.full(total, nulls == "all")
        if backing == "numpy":
            full = pd.Series(np.where(mask, np.nan, values), name="v")
        else:
            arr = pa.array(values, pa.float64(), mask=mask if nulls != "none" else None)
            full = pd.Series(pd.arrays.ArrowExtensionArray(arr), name="v" if k else "w")
        cols.append(full.iloc[offset:])
    return tuple(cols)


@pytest.mark.parametrize("nulls", ["some", "none", "all"])
@pytest.mark.parametrize("offset", [0, 8, 24])
@pytest.mark.parametrize("backing", ["numpy", "arrow"])
def test_bool_answers_at_step_boundaries(pair, backing: str, offset: int, nulls: str) -> None:
    for n in LENGTHS:
        args = _columns(n, offset, nulls, backing)
        if backing == "arrow":
            assert args[0].array._pa_array.chunk(0).offset == offset
            assert (args[0].array._pa_array.chunk(0).buffers()[0] is None) == (nulls == "none")
        for k, expr in enumerate(EXPRS):
            before = site_counts(pair.name, f"w{k}")
            got = getattr(pair.fast, f"w{k}")(*args)
            want = getattr(pair.plain, f"w{k}")(*args)
            where = f"{expr} on {backing}, n {n}, offset {offset}, nulls {nulls}"
            fast = backing == "numpy" or ARROW_FUSES
            ran = (before[0] + 1, before[1]) if fast else (before[0], before[1] + 1)
            assert site_counts(pair.name, f"w{k}") == ran, where
            assert_same(got, want, where)
            if isinstance(want.dtype, pd.ArrowDtype):
                assert got.array._pa_array.null_count == want.array._pa_array.null_count, where
