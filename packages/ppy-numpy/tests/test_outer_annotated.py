"""`np.outer(u, v)` fused for parameters annotated with their rank (issue 27: NPBench's
hand-annotated gemver compiles what its observed signature compiles).

The views `u[:, None]`, `v[None, :]` mean what `np.outer` means only for vectors, so
`implied.py` takes them of a specialization's parameters (the dispatcher checks each
call's ranks) or of ones annotated `Annotated[npt.NDArray[...], ppy.Shape(None)]`.
Python checks no annotation: the annotated site runs only where `rank_is` holds of
each viewed parameter on that call (the dispatcher's own description), else Python's
statement. Annotated vectors: one fast store site, bits equal NumPy's; a call with an
argument of rank 2 (np.outer ravels it) or a list runs Python's statement, equal to
NumPy's; an annotation without a rank (`npt.NDArray`) keeps the call NumPy's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, outcome_difference, random_array

import ppy
from ppy_core.runtime.ranked import rank_is

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
from typing import Annotated

import numpy as np
import numpy.typing as npt

import ppy

M = Annotated[npt.NDArray[np.float64], ppy.Shape(None, None)]
V = Annotated[npt.NDArray[np.float64], ppy.Shape(None)]


def gemver(
    A: Annotated[npt.NDArray[np.float64], ppy.Shape(None, None)],
    u1: Annotated[npt.NDArray[np.float64], ppy.Shape(None)],
    v1: Annotated[npt.NDArray[np.float64], ppy.Shape(None)],
    u2: Annotated[npt.NDArray[np.float64], ppy.Shape(None)],
    v2: Annotated[npt.NDArray[np.float64], ppy.Shape(None)],
):
    A += np.outer(u1, v1) + np.outer(u2, v2)


def fresh(
    A: Annotated[npt.NDArray[np.float64], ppy.Shape(None, None)],
    u: Annotated[npt.NDArray[np.float64], ppy.Shape(None)],
    v: Annotated[npt.NDArray[np.float64], ppy.Shape(None)],
):
    return A + 0.5 * np.outer(u, v)


def rankless(A: npt.NDArray[np.float64], u: npt.NDArray[np.float64], v: npt.NDArray[np.float64]):
    return A + 0.5 * np.outer(u, v)
"""


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "outer_annotated", SOURCE)


def _counts(pair: Pair, function: str) -> tuple[int, int]:
    """(fast calls, fallbacks) of `function`'s sites."""
    fast = falls = 0
    for key, data in ppy.stats().items():
        if key.startswith(f"{pair.name}:{function}."):
            fast += int(data.get("fast", 0))
            falls += sum(int(n) for n in data.get("fallback", {}).values())
    return fast, falls


def _both(pair: Pair, function: str, make: Any) -> tuple[int, int]:
    """Both builds on equal fresh arguments: outcome and arguments afterwards equal
    bit for bit; returns the increase of (fast calls, fallbacks)."""
    mine, theirs = make(), make()
    before = _counts(pair, function)
    got = call(getattr(pair.fast, function), mine, all="ignore")
    want = call(getattr(pair.plain, function), theirs, all="ignore")
    assert outcome_difference(got, want) is None, (function, outcome_difference(got, want))
    for g, w in zip(mine, theirs, strict=True):
        if isinstance(w, np.ndarray):
            assert g.shape == w.shape, function
            assert g.tobytes() == w.tobytes(), function
    after = _counts(pair, function)
    return after[0] - before[0], after[1] - before[1]


def _seeded(*shapes: Any, special: float = 0.0) -> Any:
    return lambda: tuple(random_array(np.random.default_rng(8), s, special) for s in shapes)


def test_annotated_vectors_fuse_bit_for_bit(pair: Pair) -> None:
    gemver = ((40, 30), (40,), (30,), (40,), (30,))
    assert _both(pair, "gemver", _seeded(*gemver)) == (1, 0)
    _both(pair, "gemver", _seeded(*gemver, special=0.3))  # NaN, inf, -0.0: NumPy's bits
    assert _both(pair, "fresh", _seeded((9, 7), (9,), (7,))) == (1, 0)
    for function in ("gemver", "fresh"):
        (record,) = pair.records(function)
        assert "u[:, None]" in record["leaves"] or "u1[:, None]" in record["leaves"], record


def test_a_call_of_the_wrong_rank_runs_python(pair: Pair) -> None:
    # u of rank 2: np.outer ravels it to 15 rows; u[:, None] * v[None, :] would
    # broadcast to (3, 15, 5), a different answer
    fast, _falls = _both(pair, "fresh", _seeded((15, 5), (3, 5), (5,)))
    assert fast == 0
    fast, _falls = _both(pair, "gemver", _seeded((12, 5), (3, 4), (5,), (12,), (5,)))
    assert fast == 0
    fast, _falls = _both(pair, "fresh", lambda: (np.ones((2, 3)), [1.0, 2.0], [3.0, 4.0, 5.0]))
    assert fast == 0
    # 0-d: np.outer ravels it to one row
    fast, _falls = _both(pair, "fresh", lambda: (np.ones((1, 3)), np.float64(2.0), np.ones(3)))
    assert fast == 0
    # the right ranks again: fast
    assert _both(pair, "fresh", _seeded((9, 7), (9,), (7,))) == (1, 0)


def test_an_annotation_without_a_rank_keeps_the_call_numpys(pair: Pair) -> None:
    # the site is `A + 0.5 * <np.outer(u, v), NumPy's>`: no view of u or v is a leaf
    leaves = [leaf for r in pair.records("rankless") for leaf in r["leaves"]]
    assert leaves
    assert not any("None" in leaf for leaf in leaves), leaves
    _both(pair, "rankless", _seeded((12, 5), (3, 4), (5,)))


def test_rank_is_reads_the_dispatchers_description() -> None:
    assert rank_is(np.ones(3), 1)
    assert rank_is(np.ones((2, 3)), 2)
    assert not rank_is(np.ones((2, 3)), 1)
    assert not rank_is(np.float64(1.0), 0)
    assert not rank_is([1.0, 2.0], 1)
    assert not rank_is(None, 1)
