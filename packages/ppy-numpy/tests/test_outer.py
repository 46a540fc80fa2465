"""`np.outer(u, v)` inside a fused tree: `u[:, None] * v[None, :]`, the views the
runtime takes (`ppy_core.compiler.frontend.implied`).

NPBench's gemver is `A += np.outer(u1, v1) + np.outer(u2, v2)`: NumPy makes three
N*N temporaries, the fused store one pass over A. The views are taken only of a
specialization's parameters (their ranks the dispatcher checks on every call). Random
trees of outer products, vectors and numbers are compiled unannotated and called with
random and special values; each answer and each written array equals NumPy's bit for
bit, and the outer products' site ran fast. Then what must stay NumPy's: an argument of
rank 2 (np.outer ravels it), a rebound parameter, lists, lengths that do not broadcast."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, outcome_difference, random_array

import ppy
from ppy_core.runtime.observed import explain

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

FIXED = """\
import numpy as np


def gemver(A, u1, v1, u2, v2):
    A += np.outer(u1, v1) + np.outer(u2, v2)


def mixed(u, v, w):
    return np.outer(u, v) * 2.0 - np.outer(u, w) + v


def square(u):
    return np.outer(u, u) + u


def rebound(u, v):
    u = u * 2.0
    return np.outer(u, v) + 1.0


def plain(u, v):
    return np.outer(u, v)


def fresh(A, u, v):
    return A + 0.5 * np.outer(u, v)
"""

_OPS = ("+", "-", "*", "/")


def _tree(rng: random.Random, depth: int) -> str:
    """A random expression over outer products of `u, v, w` (rows) and `p, q` (columns),
    the row vectors themselves (they broadcast along the rows) and numbers."""
    if depth == 0 or rng.random() < 0.3:
        pick = rng.random()
        if pick < 0.6:
            return f"np.outer({rng.choice('uvw')}, {rng.choice('pq')})"
        if pick < 0.8:
            return rng.choice("pq")
        return repr(rng.choice([2.0, -0.5, 3.0]))
    left, right = _tree(rng, depth - 1), _tree(rng, depth - 1)
    return f"({left} {rng.choice(_OPS)} {right})"


def _random_source(count: int) -> tuple[str, list[str]]:
    rng = random.Random(1234)
    bodies = []
    while len(bodies) < count:
        body = _tree(rng, 3)
        if "np.outer" in body:
            bodies.append(body)
    lines = ["import numpy as np", ""]
    for i, body in enumerate(bodies):
        lines += ["", f"def r{i}(A, u, v, w, p, q):", f"    A += {body}", f"    return {body}", ""]
    return "\n".join(lines), [f"r{i}" for i in range(count)]


RANDOM, RANDOM_NAMES = _random_source(12)


@pytest.fixture(scope="module")
def fixed(project: Path) -> Pair:
    return compile_pair(project, "outer_fixed", FIXED)


@pytest.fixture(scope="module")
def trees(project: Path) -> Pair:
    return compile_pair(project, "outer_trees", RANDOM)


def _fast(pair: Pair, function: str) -> tuple[int, int]:
    """(fast calls, fallbacks) of `function`'s sites, its specializations' included."""
    fast = falls = 0
    for key, data in ppy.stats().items():
        if key.startswith(f"{pair.name}:{function}."):
            fast += int(data.get("fast", 0))
            falls += sum(int(n) for n in data.get("fallback", {}).values())
    return fast, falls


def _both(pair: Pair, function: str, make: Any) -> tuple[int, int]:
    """Call `function` of both builds on equal fresh arguments (`make()`); assert the
    outcome and every argument afterwards equal NumPy's bit for bit; the counters'
    increase (fast, fallbacks)."""
    mine, theirs = make(), make()
    before = _fast(pair, function)
    got = call(getattr(pair.fast, function), mine, all="ignore")
    want = call(getattr(pair.plain, function), theirs, all="ignore")
    assert outcome_difference(got, want) is None, (function, outcome_difference(got, want))
    for g, w in zip(mine, theirs, strict=True):
        if isinstance(w, np.ndarray):
            assert g.shape == w.shape, function
            assert g.tobytes() == w.tobytes(), function
    after = _fast(pair, function)
    return after[0] - before[0], after[1] - before[1]


def _vectors(seed: int, n: int, m: int, special: float) -> Any:
    """gemver's shapes, magnitudes over many decades; `special`: the share of NaN, inf,
    -0.0, subnormals (a NaN result sends a call to NumPy, which picks its bits)."""

    def make() -> tuple[Any, ...]:
        rng = np.random.default_rng(seed)
        rows = [random_array(rng, (n,), special) for _ in range(3)]
        cols = [random_array(rng, (m,), special) for _ in range(2)]
        return (random_array(rng, (n, m), special), *rows, *cols)

    return make


@pytest.mark.parametrize("name", RANDOM_NAMES)
def test_random_trees_of_outer_products_fuse_bit_for_bit(trees: Pair, name: str) -> None:
    assert "np.outer" in RANDOM
    fast = 0
    for seed, (n, m, special) in enumerate([(7, 5, 0.0), (33, 17, 0.0), (1, 9, 0.3), (64, 3, 0.3)]):
        fast += _both(trees, name, _vectors(seed, n, m, special))[0]
    assert fast > 0, f"{name}: no fast call"


def test_gemver_is_one_store_site_taking_the_views(fixed: Pair) -> None:
    def make(special: float) -> Any:
        def arrays() -> tuple[Any, ...]:
            rng = np.random.default_rng(5)
            sizes = ((40, 30), 40, 30, 40, 30)
            return tuple(random_array(rng, size, special) for size in sizes)

        return arrays

    assert _both(fixed, "gemver", make(0.0)) == (1, 0)
    _both(fixed, "gemver", make(0.3))  # NaN results: NumPy's bits, from the fast call or not
    specs = [k for k, d in ppy.stats().items() if k.startswith("outer_fixed:gemver.") and "@" in k]
    assert specs, "gemver ran no specialization"


def test_a_fresh_result_where_the_generic_site_leaves_the_call_to_numpy(fixed: Pair) -> None:
    # the generic function has a site here too, over the call's result: the
    # specialization takes views (it fuses more), so it is the one that runs, its site
    # counted under the generic one's id
    assert _both(fixed, "fresh", _seeded((9, 7), (9,), (7,))) == (1, 0)
    (line,) = explain(fixed.fast.fresh)
    assert ": specialized (" in line, line


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_mixed_rows_and_columns_of_each_dtype(fixed: Pair, dtype: Any) -> None:
    def make() -> tuple[Any, ...]:
        rng = np.random.default_rng(9)
        with np.errstate(all="ignore"):
            return tuple(random_array(rng, (k,), 0.0).astype(dtype) for k in (12, 8, 8))

    fast, _ = _both(fixed, "mixed", make)
    assert fast >= 1 or dtype is np.int64  # int64: NumPy's wrapping ints, fused or not


def test_one_vector_viewed_both_ways_and_read_whole(fixed: Pair) -> None:
    def make() -> tuple[Any, ...]:
        return (random_array(np.random.default_rng(3), (17,), 0.0),)

    assert _both(fixed, "square", make)[0] == 1


def test_strided_and_reversed_vectors(fixed: Pair) -> None:
    def make() -> tuple[Any, ...]:
        rng = np.random.default_rng(4)
        return (random_array(rng, (30,))[::3], random_array(rng, (9,))[::-1], np.ones(9))

    _both(fixed, "mixed", make)


def _seeded(*shapes: Any) -> Any:
    """Fresh random float64 arrays of `shapes`, the same on every call."""
    return lambda: tuple(random_array(np.random.default_rng(6), shape, 0.0) for shape in shapes)


def test_what_stays_numpys(fixed: Pair) -> None:
    # np.outer ravels an array of rank 2: no view of it is taken
    _both(fixed, "plain", _seeded((3, 4), (5,)))
    _both(fixed, "rebound", _seeded((6,), (4,)))
    _both(fixed, "plain", lambda: ([1.0, 2.0], [3.0, 4.0, 5.0]))
    # lengths that do not broadcast into A: NumPy's ValueError, from the fallback
    wrong = lambda: (np.zeros((4, 3)), np.ones(4), np.ones(5), np.ones(4), np.ones(3))  # noqa: E731
    assert _both(fixed, "gemver", wrong)[1] >= 1
