"""Stores into slices (issue 18, item 3): `B[1:-1, 1:-1] = expr`, `out[...] = expr`,
`a += expr`, `A[i, :] -= expr` are one site each whose kernel writes the target.

Each call runs on a fresh copy of a little world of arrays (the target's base, views
of it, other arrays) and is compared with the same source run by NumPy on another
copy: every array of the world bit for bit, the value, the exception, the warnings.
The fast path must have run (and written straight into the target exactly when no
operand's memory overlaps it), or the counted reason says why NumPy answered.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, compile_pair, difference, random_array, run_world, with_reasons
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def assign(t, a, b, c):
    t[...] = a * b + c - 1.5


def interior(B, A):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])


def shift(u):
    u[1:-1] = 0.5 * (u[2:] + u[:-2]) - u[1:-1] * 0.25


def iadd(a, b, c):
    a += b * c - 0.5
    return a


def isub_row(A, i, v, w):
    A[i, :] -= v * w + 1.0


def idiv_slice(a, b, lo, hi):
    a[lo:hi] /= b[lo:hi] * 2.0 + 3.0


def keyed(t, key, a, b):
    t[key] = a * b + 1.0


def waves(t, a):
    t[...] = np.sin(a) * 2.0 + a
"""


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "stores", SOURCE)


def test_sites_are_stores(pair: Pair) -> None:
    forms = {r["function"]: r.get("store") for r in pair.manifest["expr_sites"]}
    assert forms == {
        "assign": "=",
        "interior": "=",
        "shift": "=",
        "iadd": "name",
        "isub_row": "item",
        "idiv_slice": "item",
        "keyed": "=",
        "waves": "=",
    }
    assert all(r["unit"] is not None for r in pair.manifest["expr_sites"])


def test_stencil_writes_the_interior_directly(pair: Pair) -> None:
    for shape in ((3, 3), (5, 9), (64, 130), (150, 203)):  # the last: threads, no GIL

        def world(shape: tuple[int, int] = shape) -> tuple[list[np.ndarray], tuple[Any, ...]]:
            r = np.random.default_rng(shape[0])
            A, B = random_array(r, shape, 0.0), random_array(r, shape, 0.0)
            return [A, B], (B, A)

        c, direct = run_world(pair, "interior", world)
        assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
        assert direct == 1


def test_in_place_stencil_goes_through_a_temporary(pair: Pair) -> None:
    """`B is A`: the interior overlaps the operands, NumPy evaluates the right side
    first; so does the site (a temporary), with NumPy's answer."""

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        A = random_array(np.random.default_rng(2), (20, 31), 0.0)
        return [A], (A, A)

    c, direct = run_world(pair, "interior", world)
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
    assert direct == 0

    def shifted() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        u = random_array(np.random.default_rng(3), (1000,), 0.0)
        return [u], (u,)

    c, direct = run_world(pair, "shift", shifted)
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
    assert direct == 0


def test_augmented_stores(pair: Pair) -> None:
    rng = np.random.default_rng(4)
    a0, b0, c0 = (random_array(rng, (7, 300), 0.0) for _ in range(3))

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        a, b, c = a0.copy(), b0.copy(), c0.copy()
        return [a, b, c], (a, b[0], c)  # b broadcast

    c, direct = run_world(pair, "iadd", world)
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
    assert direct == 0
    for i in (0, 3, -1, -7):

        def rows(i: int = i) -> tuple[list[np.ndarray], tuple[Any, ...]]:
            A, v = a0.copy(), b0.copy()
            return [A, v], (A, i, v[2], v[:, ::-1][5])

        c, _ = run_world(pair, "isub_row", rows)
        assert c == {"fast": 1, "fallback": {}}, with_reasons(c)

    def part() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        a, b = a0[0].copy(), b0[1].copy()
        return [a, b], (a, b, 10, -20)

    c, _ = run_world(pair, "idiv_slice", part)
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)


@pytest.mark.parametrize(
    ("name", "make", "reason"),
    [
        ("int target", lambda r: (np.arange(12, dtype=np.int64), "iadd"), "guard: target"),
        ("float32 target", lambda r: (np.ones(12, np.float32), "iadd"), "guard: target"),
        ("read-only", lambda r: (_read_only(r), "iadd"), "guard: target"),
        ("subclass", lambda r: (random_array(r, (12,), 0.0).view(_Sub), "iadd"), "guard: target"),
        ("python float", lambda r: (2.5, "iadd"), "guard: target"),
    ],
)
def test_targets_numpy_keeps(pair: Pair, name: str, make: Any, reason: str) -> None:
    """A target the site does not write (NumPy's `same_kind` UFuncTypeError for an
    int array, a read-only array, a subclass, a float): NumPy's answer, counted."""
    del name
    rng = np.random.default_rng(5)
    b, c = random_array(rng, (12,), 0.0), random_array(rng, (12,), 0.0)

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        target, _ = make(np.random.default_rng(6))
        arrays = [target] if isinstance(target, np.ndarray) else []
        return arrays, (target, b, c)

    got, _ = run_world(pair, "iadd", world, speculative=True)
    assert got == {"fast": 0, "fallback": {reason: 1}}, with_reasons(got)
    run_world(pair, "iadd", world)  # through the dispatcher: NumPy's answer too


class _Sub(np.ndarray):
    """An ndarray subclass: its methods may differ, so NumPy runs it."""


def _read_only(rng: np.random.Generator) -> np.ndarray:
    x = random_array(rng, (12,), 0.0)
    x.flags.writeable = False
    return x


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ((slice(1, 4), slice(None)), None),
        ((Ellipsis, 2), None),
        ((2, None, slice(None, None, -1)), None),
        (np.int64(2), "guard: target"),  # not a plain int: NumPy answers
        ([0, 2], "guard: target"),  # advanced indexing: a copy, NumPy writes back
        (np.array([True, False, True, False, False]), "guard: target"),
        ((slice(0, 2), 9), "guard: target"),  # IndexError, NumPy's own
        (True, "guard: target"),
    ],
)
def test_keys(pair: Pair, key: Any, reason: str | None) -> None:
    rng = np.random.default_rng(7)
    t0, a, b = random_array(rng, (5, 6), 0.0), random_array(rng, (1,), 0.0), np.array([2.0])

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        t = t0.copy()
        return [t], (t, key, a, b)  # one element: broadcast into any view

    c, _ = run_world(pair, "keyed", world)
    want = {"fast": 1, "fallback": {}} if reason is None else {"fast": 0, "fallback": {reason: 1}}
    assert c == want, with_reasons(c)


def test_broadcast_that_numpy_refuses(pair: Pair) -> None:
    """The right side's shape does not fit the target: NumPy raises, so does the site."""
    rng = np.random.default_rng(8)

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        t = np.zeros((3, 4))
        return [t], (t, random_array(rng, (2, 3, 4), 0.0), 1.0, 2.0)

    c, _ = run_world(pair, "assign", world)
    assert c == {"fast": 0, "fallback": {"guard: shape": 1}}, with_reasons(c)


def test_no_write_when_numpy_raises(pair: Pair) -> None:
    """Under np.errstate(raise) or a warnings filter that makes NumPy's overflow
    warning an error, NumPy raises before storing: the target keeps its values, so
    the site writes through a temporary (never straight into the target)."""
    big = np.full(64, 1e300)

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        t = np.arange(64.0)
        return [t], (t, big, big, np.zeros(64))

    c, direct = run_world(pair, "assign", world, all="raise")
    assert c == {"fast": 0, "fallback": {"fp-flags": 1}}, with_reasons(c)
    assert direct == 0
    for action in ("error", "always"):
        results = []
        for module in (pair.fast, pair.plain):
            t = np.arange(64.0)
            with warnings.catch_warnings(record=action == "always"):
                warnings.simplefilter(action)
                try:
                    module.assign(t, big, big, np.zeros(64))
                    results.append(("ok", t))
                except RuntimeWarning as exc:
                    results.append((str(exc), t))
        assert results[0][0] == results[1][0]
        assert difference(results[0][1], results[1][1]) is None


def test_threads_and_loops_kernels(pair: Pair) -> None:
    """A kernel calling NumPy's sin loop; a large store split over threads."""
    rng = np.random.default_rng(9)
    a = random_array(rng, (600, 700), 0.0) * 1e-3

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        t = np.empty((600, 700))
        return [t], (t, a)

    c, direct = run_world(pair, "waves", world)
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
    assert direct == 1

    def strided_target() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        t = np.zeros((600, 1400))
        return [t], (t[:, ::2], a)

    c, direct = run_world(pair, "waves", strided_target)
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
    assert direct == 1


# -- random worlds ----------------------------------------------------------------------

#: how an operand relates to the target: another array (any strides, a broadcast
#: shape), the target view itself, or a view of the target's base shifted by a row
KINDS = ("fresh", "row", "column", "strided", "alias", "shifted")


@st.composite
def worlds(draw: Any) -> tuple[tuple[int, int, int, int, bool], tuple[str, str, str], float, int]:
    h, w = draw(st.integers(1, 9)), draw(st.integers(1, 40))
    step = draw(st.sampled_from((1, 2, -1)))
    transpose = draw(st.booleans())
    kinds = tuple(draw(st.sampled_from(KINDS)) for _ in range(3))
    special = draw(st.sampled_from((0.0, 0.0, 0.3)))
    seed = draw(st.integers(0, 2**32 - 1))
    return (h, w, step, seed, transpose), kinds, special, seed


def _target_view(
    base: np.ndarray, h: int, w: int, step: int, transpose: bool, dr: int = 0
) -> np.ndarray:
    """Rows 1+dr .. h+dr of `base` (reversed for step -1), every |step|-th column."""
    rows = slice(1 + dr, 1 + dr + h) if step != -1 else slice(h + dr, dr, -1)
    view = base[rows, 1 : 1 + w * abs(step) : abs(step)]
    return view.T if transpose else view


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_random_stores_against_numpy(pair: Pair, world_spec: Any) -> None:
    (h, w, step, seed, transpose), kinds, special, _ = world_spec

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        rng = np.random.default_rng(seed)
        base = random_array(rng, (h + 2, w * abs(step) + 2), special)
        t = _target_view(base, h, w, step, transpose)
        shape = t.shape
        arrays, operands = [base], []
        for kind in kinds:
            if kind == "alias":
                operands.append(_target_view(base, h, w, step, transpose))
            elif kind == "shifted":
                operands.append(_target_view(base, h, w, step, transpose, dr=1))
            else:
                full = random_array(rng, (shape[0], 2 * shape[1]), special)
                arrays.append(full)
                op = {
                    "fresh": full[:, : shape[1]],
                    "row": full[0, : shape[1]],
                    "column": full[:, :1],
                    "strided": full[:, ::2],
                }[kind]
                operands.append(op)
        return arrays, (t, *operands)

    c, direct = run_world(pair, "assign", world)
    assert c["fast"] + sum(c["fallback"].values()) == 1
    _, args = world()
    overlap = any(np.may_share_memory(args[0], op) for op in args[1:])  # bounds, as the site
    with np.errstate(all="ignore"):
        value = args[1] * args[2] + args[3] - 1.5
    clean = bool(np.all(np.isfinite(value)))
    if clean:  # nothing for NumPy to warn about, no NaN: the fast path answered
        assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
        assert direct == (0 if overlap else 1), (kinds, direct)


# -- statements in loops (item 5) -------------------------------------------------------

LOOPS = """\
import numpy as np


def heat(A, B, T):
    for t in range(T):
        B[1:-1, 1:-1] = 0.2 * (
            A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1]
        )
        A[1:-1, 1:-1] = 0.2 * (
            B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1]
        )
    return A


def relax(u: np.ndarray, f: np.ndarray, T: int) -> np.ndarray:
    for t in range(T):
        w = u * 0.5 + f
        u = w - f * 0.25
        u += f * 1e-3
    return u


def mixed(u: np.ndarray, T: int) -> np.ndarray:
    for t in range(T):
        u = u * 0.5 + 1.0
        u = float(t)
    return u
"""


@pytest.fixture(scope="module")
def loops(project: Any) -> Pair:
    return compile_pair(project, "store_loops", LOOPS)


def test_time_step_loop_one_dispatch_per_statement(loops: Pair) -> None:
    """Each statement of a loop body is its own site, called once per iteration."""
    assert [r.get("store") for r in loops.records("heat")] == ["=", "="]
    steps = 7

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        r = np.random.default_rng(11)
        A, B = random_array(r, (40, 50), 0.0), np.zeros((40, 50))
        return [A, B], (A, B, steps)

    c, direct = run_world(loops, "heat", world)
    assert c == {"fast": 2 * steps, "fallback": {}}, with_reasons(c)
    assert direct == 2 * steps


def test_rebinding_keeps_the_type(loops: Pair) -> None:
    """`u` is an annotated ndarray rebound in the loop to ndarrays only, `w` is bound
    in the loop: both keep their type, so the sites are typed, not speculative; a
    name rebound to a float too (`mixed`) is no ndarray any more."""
    records = loops.records("relax")
    assert [r.get("store") for r in records] == [None, None, "name"]
    assert all(r["unit"] is not None and "assumed" not in r for r in records), records
    assert all("assumed" in r for r in loops.records("mixed")), loops.records("mixed")
    rng = np.random.default_rng(12)
    u0, f = random_array(rng, (300,), 0.0), random_array(rng, (300,), 0.0)

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        u = u0.copy()
        return [u, f], (u, f, 5)

    c, _ = run_world(loops, "relax", world)
    assert c == {"fast": 15, "fallback": {}}, with_reasons(c)
