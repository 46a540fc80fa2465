"""Typed loops with named slices and gathered vectors (NPBench's spmv loop):
`cols = A_col[A_row[i]:A_row[i + 1]]`, `vals @ x[cols]`, `np.dot(x[...], vals)`.
Random CSR matrices (empty rows, empty matrices, one column), int32/int64 index
arrays, out-of-range and negative indices (NumPy's IndexError, the first in order,
before the length check), lengths that differ (NumPy's ValueError), values with NaN
payloads, infinities, -0.0 and subnormals: answers, arrays written and exceptions
equal to Python's, the fast path asserted through `ppy.stats()`."""

from __future__ import annotations

import random
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from loops_harness import FLOATS, load_both, outcome, random_programs

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """
import numpy as np


def spmv(A_row, A_col, A_val, x):
    y = np.zeros_like(x)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


def gathered_left(A_row, A_col, A_val, x):
    s = 0.0
    for i in range(len(A_row) - 1):
        s = s * 0.5 + np.dot(x[A_col[A_row[i]:A_row[i + 1]]], A_val[A_row[i]:A_row[i + 1]])
    return s


def offset(A_row, A_col, A_val, x, k):
    s = 0.0
    for i in range(len(A_row) - 1):
        cols = A_col[int(A_row[i]) + k:A_row[i + 1]]
        s += A_val[A_row[i]:A_row[i + 1]] @ x[cols]
    return s
"""


def counts(module: str, function: str) -> int:
    """Fast calls of `function`'s sites and specializations."""
    return sum(
        int(stat["fast"])
        for key, stat in ppy.stats().items()
        if key.startswith(f"{module}:{function}.")
    )


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("gather"), "loops_gather", SOURCE)


def _same(pair: tuple[types.ModuleType, ...], name: str, *args: object) -> None:
    mod, plain = pair
    before = counts("loops_gather", name)
    assert outcome(getattr(mod, name), *args) == outcome(getattr(plain, name), *args)
    assert counts("loops_gather", name) == before + 1  # the compiled function ran


def _csr(rng: np.random.Generator, rows: int, cols: int, nnz: int, dtype: type) -> tuple:
    """A CSR matrix as spmv takes it: row pointers, column indices, values."""
    per_row = np.sort(rng.integers(0, nnz + 1, max(rows - 1, 0)))
    pointers = np.concatenate([[0], per_row, [nnz]]) if rows else np.zeros(1, np.int64)
    indices = rng.integers(0, max(cols, 1), nnz)
    return pointers.astype(dtype), indices.astype(dtype), rng.standard_normal(nnz)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64])
@pytest.mark.parametrize(("rows", "cols", "nnz"), [(0, 0, 0), (1, 1, 1), (5, 3, 0), (40, 30, 90)])
def test_spmv_bit_identical(pair, dtype: type, rows: int, cols: int, nnz: int) -> None:
    rng = np.random.default_rng(rows * 7 + nnz)
    pointers, indices, values = _csr(rng, rows, cols, nnz, dtype)
    x = rng.standard_normal(max(rows, cols))
    _same(pair, "spmv", pointers, indices, values, x)
    _same(pair, "gathered_left", pointers, indices, values, x)
    _same(pair, "spmv", pointers, indices, values, np.repeat(x, 2)[::2])  # strided x


SPMV = (
    Path(__file__).resolve().parents[3]
    / "benchmarks/corpus/npbench/npbench/benchmarks/spmv/spmv_numpy.py"
)


@pytest.mark.parametrize(
    ("rows", "cols", "nnz"), [(0, 0, 0), (1, 1, 0), (7, 5, 9), (300, 200, 700)]
)
def test_npbench_spmv_bit_identical(tmp_path: Path, rows: int, cols: int, nnz: int) -> None:
    """NPBench's spmv as written, unannotated, on uint32 indices as its initializer
    makes them (`np.uint32(matrix.indptr)`); rows = 0: NumPy's ValueError of
    np.empty(-1, ...), raised where Python raises it."""
    mod, plain = load_both(tmp_path, "spmv_numpy", SPMV.read_text())
    rng = np.random.default_rng(rows + cols)
    pointers, indices, values = _csr(rng, rows, cols, nnz, np.uint32)
    if not rows:
        pointers = pointers[:0]
    x = rng.random(max(cols, 1))
    before = counts("spmv_numpy", "spmv")
    assert outcome(mod.spmv, pointers, indices, values, x) == outcome(
        plain.spmv, pointers, indices, values, x
    )
    assert counts("spmv_numpy", "spmv") == before + (1 if rows else 0)


def test_index_errors_are_numpys(pair) -> None:
    pointers = np.array([0, 2, 5], np.int64)
    values = np.arange(5.0)
    x = np.arange(4.0)
    for bad in ([0, 1, 2, 9, 7], [0, -5, 1, 2, 3], [0, 1, -1, -4, 3], [4, 0, 0, 0, 0]):
        _same(pair, "spmv", pointers, np.array(bad, np.int32), values, x)
        _same(pair, "gathered_left", pointers, np.array(bad, np.int64), values, x)
    # a row pointer past the end: the slices clip, as NumPy's do
    _same(pair, "spmv", np.array([0, 9], np.int64), np.array([1, 2], np.int64), values, x)


def test_lengths_that_differ_raise_numpys_value_error(pair) -> None:
    pointers = np.array([0, 3, 5], np.int32)  # int(an int32) + k: proven to fit
    indices = np.array([0, 1, 2, 3, 0], np.int64)
    for k in (1, 2, -1):
        _same(pair, "offset", pointers, indices, np.arange(5.0), np.arange(4.0), k)
    _same(pair, "offset", pointers, indices, np.arange(5.0), np.arange(4.0), 0)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.data(),
    rows=st.integers(0, 6),
    dtype=st.sampled_from([np.int32, np.uint32, np.int64]),
    name=st.sampled_from(["spmv", "gathered_left"]),
)
def test_random_matrices_and_values(pair, data, rows: int, dtype: type, name: str) -> None:
    """Any float64 values; indices anywhere from below -len(x) to beyond len(x)."""
    n = data.draw(st.integers(0, 7))
    nnz = data.draw(st.integers(0, 12))
    cuts = sorted(data.draw(st.lists(st.integers(0, nnz), min_size=rows, max_size=rows)))
    pointers = np.array([0, *cuts[: max(rows - 1, 0)], nnz][: rows + 1], dtype)
    low = 0 if dtype is np.uint32 else -n - 2
    indices = data.draw(hnp.arrays(dtype, nnz, elements=st.integers(low, n + 2)))
    values = data.draw(hnp.arrays(np.float64, nnz, elements=FLOATS))
    x = data.draw(hnp.arrays(np.float64, max(n, rows), elements=FLOATS))
    _same(pair, name, pointers, indices, values, x)


def test_a_named_view_read_otherwise_stays_python(tmp_path: Path) -> None:
    from ppy_core.compiler.cached import compile_file, load_manifest

    source = tmp_path / "named.py"
    source.write_text(
        "import numpy as np\n\n\n"
        "def f(a: np.ndarray, x: np.ndarray):\n"
        "    s = 0.0\n"
        "    for i in range(a.shape[0]):\n"
        "        v = a[i:]\n"
        "        s += v[0] + np.dot(v, x[i:])\n"
        "    return s\n"
    )
    remarks = load_manifest(compile_file(source).entry)["remarks"]
    why = {r["function"]: r["message"] for r in remarks if "typed loops" in r["message"]}
    assert "the view `v` is read other than" in why["f"]


# -- random loop bodies ----------------------------------------------------------
BOUNDS = ["", "i", "i + 1", "-1", "n", "0", "int(p[i])", "int(p[i + 1])", "p[i]", "p[i + 1]"]


def _index_view(r: random.Random) -> str:
    return f"c[{r.choice(BOUNDS)}:{r.choice(BOUNDS)}]"


def _program(r: random.Random, k: int) -> str:
    """`g{k}(p, c, v, x, n)`: a loop whose body takes dots of gathered vectors, the
    index a named or an inline view of `c`, on either side of np.dot / @, beside a
    view of `v` or its np.flip."""
    vector = r.choice(["v[{}:{}]", "np.flip(v[{}:{}])"]).format(r.choice(BOUNDS), r.choice(BOUNDS))
    named = r.random() < 0.5
    index = "cols" if named else _index_view(r)
    gather = f"x[{index}]"
    left, right = (gather, vector) if r.random() < 0.5 else (vector, gather)
    call = r.choice(["np.dot({a}, {b})", "{a} @ {b}"]).format(a=left, b=right)
    body = ([f"cols = {_index_view(r)}"] if named else []) + [
        r.choice([f"s += {call}", f"s = s * 0.5 + {call}", f"y[i] = {call}"])
    ]
    lines = [
        f"def g{k}(p, c, v, x, n):",
        "    y = np.zeros_like(x)",
        "    s = 0.0",
        "    for i in range(n):",
        *("        " + line for line in body),
        "    y[0] = s",
        "    return y",
    ]
    return "\n".join(lines)


COUNT = 14


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return random_programs(tmp_path_factory, "gather_bodies", 20261201, COUNT, _program)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.data(),
    k=st.integers(0, COUNT - 1),
    n=st.integers(0, 6),
)
def test_random_bodies_match_python(bodies, data, k: int, n: int) -> None:
    """Any lengths (NumPy's ValueError where they differ), indices out of range or
    negative (its IndexError), any float64 values; the fast path on every call (one
    index dtype per program: each signature is compiled once)."""
    dtype = (np.int32, np.uint32, np.int64)[k % 3]
    size = data.draw(st.integers(1, 7))
    p = data.draw(hnp.arrays(np.int32, n + 1, elements=st.integers(-3, 8)))
    low = 0 if dtype is np.uint32 else -size - 2
    c = data.draw(hnp.arrays(dtype, st.integers(0, 9), elements=st.integers(low, size + 2)))
    v = data.draw(hnp.arrays(np.float64, st.integers(0, 9), elements=FLOATS))
    x = data.draw(hnp.arrays(np.float64, size, elements=FLOATS))
    mod, plain = bodies
    name = f"g{k}"
    before = counts("gather_bodies", name)
    assert outcome(getattr(mod, name), p, c, v, x, n) == outcome(
        getattr(plain, name), p, c, v, x, n
    )
    assert counts("gather_bodies", name) == before + 1  # the compiled function ran
