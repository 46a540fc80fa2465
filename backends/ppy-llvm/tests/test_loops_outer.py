"""Typed loops with `X[:] = np.minimum(X, np.add.outer(u, v))` (NPBench's
floyd_warshall, unmodified and unannotated): int32 and int64 arrays of random
shapes (empty, one row, not square), values up to the dtype's ends (sums that
wrap, as NumPy's), any layout; np.maximum; u and v from other arrays, of lengths
NumPy broadcasts or refuses (left to Python on entry); float64 with NaNs, infinities,
-0.0, subnormals and overflowing sums (fast, or X restored and left to Python where
NumPy's loop decides). Arrays written in place, warnings and exceptions equal to
Python's, the fast path asserted through `ppy.stats()`."""

from __future__ import annotations

import random
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from loops_harness import load_both, outcome, random_programs

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

FLOYD = (
    Path(__file__).resolve().parents[3] / "benchmarks/corpus/npbench/npbench/benchmarks/"
    "polybench/floyd_warshall/floyd_warshall_numpy.py"
)
OTHERS = """
import numpy as np


def widest(path):
    for k in range(path.shape[0]):
        path[:, :] = np.maximum(path, np.add.outer(path[:, k], path[k, :]))


def relax(path, dist, via, n):
    for k in range(n):
        path[:] = np.minimum(path[:], np.add.outer(dist[:, k], via))


def floats(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))
"""


def counts(module: str, function: str) -> tuple[int, int]:
    """(fast calls, fallbacks) of `function`'s sites and specializations."""
    fast = fallbacks = 0
    for key, stat in ppy.stats().items():
        if key.startswith(f"{module}:{function}."):
            fast += int(stat["fast"])
            fallbacks += sum(int(v) for v in stat["fallback"].values())
    return fast, fallbacks


def _same(pair: tuple[types.ModuleType, ...], module: str, name: str, *args: object) -> bool:
    """Compiled and plain agree; whether the compiled call took the fast path."""
    mod, plain = pair
    before = counts(module, name)
    assert outcome(getattr(mod, name), *args) == outcome(getattr(plain, name), *args)
    return counts(module, name)[0] == before[0] + 1


@pytest.fixture(scope="module")
def floyd(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("floyd"), "floyd_warshall_numpy", FLOYD.read_text())


@pytest.fixture(scope="module")
def others(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("outer"), "loops_outer", OTHERS)


def _initial(n: int, dtype: type) -> np.ndarray:
    """floyd_warshall.py's initializer."""
    path = np.fromfunction(lambda i, j: i * j % 7 + 1, (n, n), dtype=dtype)
    hits = np.add.outer(np.arange(n), np.arange(n))
    path[(hits % 13 == 0) | (hits % 7 == 0) | (hits % 11 == 0)] = 999
    return path


@pytest.mark.parametrize("n", [0, 1, 2, 7, 60])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_floyd_warshall_bit_identical(floyd, n: int, dtype: type) -> None:
    path = _initial(n, dtype)
    assert _same(floyd, "floyd_warshall_numpy", "kernel", path)
    assert _same(floyd, "floyd_warshall_numpy", "kernel", np.asfortranarray(path))
    assert _same(floyd, "floyd_warshall_numpy", "kernel", np.repeat(path, 2, axis=1)[:, ::2])


def _ints(dtype: type) -> st.SearchStrategy[int]:
    info = np.iinfo(dtype)
    ends = st.sampled_from([info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max])
    return st.one_of(ends, st.integers(info.min, info.max), st.integers(-20, 20))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.data(),
    dtype=st.sampled_from([np.int32, np.int64]),
    shape=st.tuples(st.integers(0, 6), st.integers(0, 6)),
    layout=st.integers(0, 2),
    name=st.sampled_from(["kernel", "widest"]),
)
def test_random_int_matrices(floyd, others, data, dtype, shape, layout: int, name: str) -> None:
    """Any ints (sums wrap without a warning, as NumPy's), any shape (path[:, k]
    raises NumPy's IndexError where a row is longer than the columns), any layout."""
    path = data.draw(hnp.arrays(dtype, shape, elements=_ints(dtype)))
    if layout == 1:
        path = np.asfortranarray(path)
    elif layout == 2:
        path = np.repeat(path, 2, axis=0)[::2]
    pair, module = (floyd, "floyd_warshall_numpy") if name == "kernel" else (others, "loops_outer")
    assert _same(pair, module, name, path)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.integers(0, 4),
    cols=st.integers(0, 4),
    dist_rows=st.integers(0, 5),
    via=st.integers(0, 5),
    n=st.integers(0, 4),
)
def test_other_operands_and_their_lengths(others, rows, cols, dist_rows, via, n) -> None:
    """u and v of other arrays: lengths equal to X's run fast; others NumPy
    broadcasts (a length 1) or refuses, so Python takes the call before anything."""
    rng = np.random.default_rng(rows * 100 + cols * 10 + via)
    path = rng.integers(-50, 50, (rows, cols), dtype=np.int64)
    dist = rng.integers(-50, 50, (dist_rows, 4), dtype=np.int64)
    v = rng.integers(-50, 50, via, dtype=np.int64)
    fast = _same(others, "loops_outer", "relax", path, dist, v, n)
    assert fast == (dist_rows == rows and via == cols)


FLOAT_SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, 1e308, -1e308]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.data(),
    shape=st.tuples(st.integers(0, 5), st.integers(0, 5)),
    layout=st.integers(0, 1),
    specials=st.booleans(),
)
def test_float64_matrices(others, data, shape, layout: int, specials: bool) -> None:
    """float64: the fast path, or X restored and Python (a NaN met, 0.0 beside -0.0,
    an overflow's warning): arrays, warnings and errors equal to Python's either way."""
    # no zero: then no -0.0 ever (x + -x is 0.0), so no tie of 0.0 and -0.0
    values = st.floats(-1e3, 1e3, allow_nan=False).filter(lambda v: v != 0)
    if specials:
        values = st.one_of(values, st.sampled_from(FLOAT_SPECIALS))
    path = data.draw(hnp.arrays(np.float64, shape, elements=values))
    if layout:
        path = np.asfortranarray(path)
    before = counts("loops_outer", "floats")
    _same(others, "loops_outer", "floats", path)
    after = counts("loops_outer", "floats")
    assert sum(after) == sum(before) + 1  # fast, or restored and left to Python
    if not specials:
        assert after[0] == before[0] + 1  # ordinary values: fast


def test_floyd_warshall_float64_fast(floyd) -> None:
    path = _initial(30, np.float64)
    assert _same(floyd, "floyd_warshall_numpy", "kernel", path)


WRITES_TWO = """
import numpy as np


def two(path: np.ndarray, other: np.ndarray):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))
        other[k, 0] = 1.0
"""


REBOUND = """
import numpy as np


def rebound(X):
    for i in range(X.shape[0]):
        X = np.minimum(X, np.add.outer(X[:, i], X[i, :]))
    return X
"""


def test_a_rebinding_is_no_update(tmp_path: Path) -> None:
    """`X = np.minimum(...)` makes a new array: the argument keeps its values."""
    mod, plain = load_both(tmp_path, "rebound", REBOUND)
    X = np.array([[0, 5], [-7, 0]], np.int64)
    assert outcome(mod.rebound, X) == outcome(plain.rebound, X)


def test_float64_beside_another_write_stays_python(tmp_path: Path) -> None:
    """X could not be restored alone: refused, with the reason."""
    from ppy_core.compiler.cached import compile_file, load_manifest

    source = tmp_path / "two.py"
    source.write_text(WRITES_TWO)
    remarks = load_manifest(compile_file(source).entry)["remarks"]
    why = {r["function"]: r["message"] for r in remarks if "typed loops" in r["message"]}
    assert "compiles only where X is the one array written" in why["two"]


def test_floyd_warshall_is_fast(floyd) -> None:
    import time

    mod, plain = floyd
    path = _initial(120, np.int32)

    def best(fn: object) -> float:
        times = []
        for _ in range(3):
            p = path.copy()
            t = time.perf_counter()
            fn(p)  # type: ignore[operator]
            times.append(time.perf_counter() - t)
        return min(times)

    assert best(mod.kernel) * 3 < best(plain.kernel)


# -- random loop bodies ----------------------------------------------------------
def _program(r: random.Random, k: int) -> str:
    """`o{k}(X, A, w, n)`: a loop of np.minimum / np.maximum outer updates of X, its
    operands a row or column of X or of A, or w, the target in any of its spellings."""
    fn = r.choice(["np.minimum", "np.maximum"])
    target = r.choice(["X[:]", "X[:, :]"])
    first = r.choice(["X", "X[:]", "X[:, :]"])
    u = r.choice(["X[:, i]", "A[:, i]", "X[:, -1]", "w"])
    v = r.choice(["X[i, :]", "A[i, :]", "X[0, :]", "w"])
    stop = r.choice(["n", "X.shape[0]", "X.shape[1]"])
    lines = [
        f"def o{k}(X, A, w, n):",
        f"    for i in range({stop}):",
        f"        {target} = {fn}({first}, np.add.outer({u}, {v}))",
    ]
    return "\n".join(lines)


COUNT = 10


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return random_programs(tmp_path_factory, "outer_bodies", 20261201, COUNT, _program)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.data(),
    k=st.integers(0, COUNT - 1),
    rows=st.integers(0, 4),
    cols=st.integers(0, 4),
    n=st.integers(0, 5),
)
def test_random_bodies_match_python(bodies, data, k: int, rows: int, cols: int, n: int) -> None:
    """Random shapes (IndexErrors where a row or column is missing, lengths NumPy
    broadcasts or refuses), ints to the dtype's ends; one dtype per program."""
    dtype = (np.int32, np.int64)[k % 2]
    X = data.draw(hnp.arrays(dtype, (rows, cols), elements=_ints(dtype)))
    A = data.draw(hnp.arrays(dtype, (data.draw(st.integers(0, 5)), 4), elements=_ints(dtype)))
    w = data.draw(hnp.arrays(dtype, data.draw(st.integers(0, 5)), elements=_ints(dtype)))
    mod, plain = bodies
    name = f"o{k}"
    before = counts("outer_bodies", name)
    assert outcome(getattr(mod, name), X, A, w, n) == outcome(getattr(plain, name), X, A, w, n)
    assert sum(counts("outer_bodies", name)) == sum(before) + 1  # fast, or Python on entry
