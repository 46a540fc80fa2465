"""Typed loops with `X[:] = np.minimum(X, np.add.outer(u, v))` (NPBench's
floyd_warshall, unmodified and unannotated): int32 and int64 arrays of random
shapes (empty, one row, not square), values up to the dtype's ends (sums that
wrap, as NumPy's), any layout; np.maximum; u and v from other arrays, of lengths
NumPy broadcasts or refuses (left to Python on entry); float64 staying Python.
Arrays written in place and exceptions equal to Python's, the fast path asserted
through `ppy.stats()`."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from loops_harness import load_both, outcome

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


def test_float64_stays_a_loop_of_numpy_calls(others, tmp_path: Path) -> None:
    """float64 is refused as a typed loop, with its reason; its calls keep NumPy's
    answer (its expression sites, NaN and -0.0 included)."""
    from ppy_core.compiler.cached import compile_file, load_manifest

    path = np.array([[0.0, -0.0, np.nan], [np.inf, -np.inf, 1.0], [2.0, np.nan, 0.0]])
    _same(others, "loops_outer", "floats", path)
    source = tmp_path / "floats.py"
    source.write_text(OTHERS.replace("def floats(path):", "def floats(path: np.ndarray):"))
    remarks = load_manifest(compile_file(source).entry)["remarks"]
    why = {r["function"]: r["message"] for r in remarks if "typed loops" in r["message"]}
    assert "which NaN and which zero np.minimum returns" in why["floats"]


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
