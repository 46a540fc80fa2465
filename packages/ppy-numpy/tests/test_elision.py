"""NumPy's temporary elision (numpy/_core/src/multiarray/temp_elide.c): from 256 KiB
a Python operator ``l + r`` / ``l * r`` whose right operand is a fresh temporary and
whose left one is not runs as ``np.add(r, l, out=r)``, so where two NaNs meet the
temporary's payload wins. The kernels follow it (ppy-llvm `_nan_order.swap_nodes`,
the dispatcher's elision bits) on flat calls and rows in NumPy's order, and send any
other NaN result of such a call to NumPy. A call's result as a leaf is a temporary as
in Python's own ``x + <call>`` (reference count 1 at the site), also on the Python
path (the dispatcher boxes a copy for it). Every call is compared with NumPy bit for
bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, counting, outcome_difference, run_world
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def add_scaled(x, v, dt):
    return x + dt * v


def times_sum(x, v, w):
    return x * (v + w)


def left_temp(x, v, w):
    return 2.0 * x + v * w


def minus(x, v, w):
    return x - v * w


def temp_left(x, v, w):
    return (v * w) + x


def assign(b, x, v, w):
    b[...] = x + v * w


def iadd(a, v, w):
    a += v * w


def iadd_inner(a, x, v, w):
    a += x + v * w


def outer(x, v, w, c):
    return x * (v + w) * c


def total(x, v, w):
    return np.sum(x + v * w)


def joined_right(x, a, b):
    return x + np.hstack((a, b))


def joined_times(x, a, b):
    return x * np.concatenate((a, b))


def joined_left(x, a, b):
    return np.hstack((a, b)) + x


def joined_both(a, b, c, d):
    return np.hstack((a, b)) * np.hstack((c, d))


def joined_minus(x, a, b):
    return x - np.concatenate((a, b))


def joined_over(x, a, b):
    return np.concatenate((a, b)) / x


def joined_left_temp(a, b, v, w):
    return np.hstack((a, b)) + v * w


def joined_inner(x, a, b, c):
    return (x + np.hstack((a, b))) * c


def joined_view(x, a, b):
    return (x + np.hstack((a, b))[1:]) * 2.0


def named_view(x, t):
    return (x + t[1:]) * 2.0


def named_right(x, t):
    return (x + t) * 2.0


def named_caller(x, a, b):
    return named_right(x, np.hstack((a, b)))


def assign_joined(o, x, a, b):
    o[...] = x + np.hstack((a, b))


def iadd_joined(o, x, a, b):
    o += x + np.hstack((a, b))
"""

#: float64 elements from which NumPy elides a temporary (NPY_MIN_ELIDE_BYTES)
ELIDED = 256 * 1024 // 8
SIZES = (ELIDED - 1, ELIDED, ELIDED + 1, 10**5)
PAYLOADS = np.array([0x7FF8000000000001, 0xFFF800000000BEEF], dtype=np.uint64).view(np.float64)
MAPS = ("times_sum", "left_temp", "minus", "temp_left")
NAN_RESULT = {"result: nan/zero": 1}


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "elision", SOURCE)


def _positions(n: int) -> list[int]:
    """The vector body's start and middle, the scalar tail (n % 8 > 0), the end."""
    return sorted({0, 3, n // 2, n - 1, n - n % 8 - 1})


def _operands(n: int, where: list[int]) -> tuple[np.ndarray, ...]:
    """x, v, w of `n` elements, x and v holding different NaN payloads at `where`:
    they meet in ``x + v*w`` and ``x * (v + w)``."""
    rng = np.random.default_rng(n)
    x, v, w = (rng.uniform(-2, 2, n) for _ in range(3))
    for k in where:
        x[k], v[k] = PAYLOADS
    return x, v, w


def _run(pair: Pair, function: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """Both builds on `args`, bit for bit; the fast build's counters' increase."""
    with counting(pair, function) as c:
        got = call(getattr(pair.fast, function), args, all="ignore")
    want = call(getattr(pair.plain, function), args, all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    return c


def test_numpy_elides_from_256_kib() -> None:
    """The model's threshold and operand order are NumPy's own."""
    for n, swapped in ((ELIDED - 1, False), (ELIDED, True)):
        x, v, w = _operands(n, [5])
        bits = (x + v * w).view(np.uint64)[5]
        assert bits == PAYLOADS.view(np.uint64)[1 if swapped else 0], (n, hex(bits))
        assert (x - v * w).view(np.uint64)[5] == PAYLOADS.view(np.uint64)[0]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("function", MAPS)
def test_flat_maps(pair: Pair, function: str, n: int) -> None:
    """All operands one C buffer: the fast path, NumPy's payload on either side of
    the threshold, in the vector body and the scalar tail."""
    c = _run(pair, function, _operands(n, _positions(n)))
    assert (c["fast"], c["fallback"]) == (1, {}), c


@pytest.mark.parametrize("n", SIZES)
def test_weak_float_rows(pair: Pair, n: int) -> None:
    """A Python float beside 1-D arrays (the _splat entry's one row), and a float
    array in its place (flat): `dt` makes no temporary, ``dt * v`` does."""
    x, v, _ = _operands(n, _positions(n))
    for dt in (0.5, np.full(n, 0.5)):
        c = _run(pair, "add_scaled", (x, v, dt))
        assert (c["fast"], c["fallback"]) == (1, {}), c


@pytest.mark.parametrize("rows", [511, 512, 1563])
@pytest.mark.parametrize("function", MAPS)
def test_strided_rows(pair: Pair, function: str, rows: int) -> None:
    """Rows of 64 of wider arrays (the row runner, in NumPy's order without a NaN
    scan): the swapped order where NumPy elides, on the fast path."""
    wide = _operands(rows * 72, [])
    x, v, w = (a.reshape(rows, 72)[:, :64] for a in wide)
    for r, k in ((0, 3), (rows // 2, 33), (rows - 1, 63)):
        x[r, k], v[r, k] = PAYLOADS
    c = _run(pair, function, (x, v, w))
    assert (c["fast"], c["fallback"]) == (1, {}), c


@pytest.mark.parametrize("cols", [ELIDED - 8, ELIDED])
def test_elided_over_a_smaller_shape_goes_to_numpy(pair: Pair, cols: int) -> None:
    """``x * (v + w)`` over rows (1, cols) elided, then broadcast down a column (rows
    of a multiple of 8: NumPy's order, no scan otherwise): the
    kernel does not follow that; a NaN result is NumPy's once NumPy elides."""
    x, v, w = (a.reshape(1, cols) for a in _operands(cols, [0, cols // 2, cols - 1]))
    c = _run(pair, "outer", (x, v, w, np.array([[1.0], [-2.0]])))
    assert (c["fast"], c["fallback"]) == ((0, NAN_RESULT) if cols >= ELIDED else (1, {})), c
    x[0, :] = 1.0  # no NaN: the fast path
    c = _run(pair, "outer", (x, np.ones_like(v), w, np.array([[1.0], [-2.0]])))
    assert (c["fast"], c["fallback"]) == (1, {}), c


@pytest.mark.parametrize("n", SIZES)
def test_stores(pair: Pair, n: int) -> None:
    """``b[...] = x + v*w`` is computed as a fresh result (swapped when elided);
    ``a += v*w`` is ``np.add(a, tmp, out=a)`` (never swapped); ``a += x + v*w``
    swaps the inner add only: the dispatcher clears the result node's bit."""
    where = _positions(n)

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        x, v, w = _operands(n, where)
        return [x, v, w], (x, v, w)

    def with_target() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        arrays, args = world()
        a = np.zeros(n)
        a[where] = PAYLOADS[1]
        return [a, *arrays], (a, *args)

    c, _ = run_world(pair, "assign", with_target, all="ignore")
    assert (c["fast"], c["fallback"]) == (1, {}), c

    def without_x() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        arrays, (a, _x, v, w) = with_target()
        return arrays, (a, v, w)

    c, _ = run_world(pair, "iadd", without_x, all="ignore")
    assert (c["fast"], c["fallback"]) == (1, {}), c
    c, _ = run_world(pair, "iadd_inner", with_target, all="ignore")
    assert (c["fast"], c["fallback"]) == (1, {}), c


@pytest.mark.parametrize("rows", [511, 512])
def test_strided_store(pair: Pair, rows: int) -> None:
    """``b[...] = x + v*w`` into and from rows of 64 of wider arrays: a NaN result is
    NumPy's (on either side of the threshold: strided stores scan their rows), the
    target untouched until it answers."""

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        base = [a.reshape(rows, 72) for a in _operands(rows * 72, [5, rows * 36])]
        b, x, v, w = (np.zeros((rows, 72)), *base)
        return [b, x, v, w], tuple(a[:, :64] for a in (b, x, v, w))

    c, _ = run_world(pair, "assign", world, all="ignore")
    assert (c["fast"], c["fallback"]) == (0, NAN_RESULT), c


@pytest.mark.parametrize("n", SIZES)
def test_sum_of_a_swapped_tree(pair: Pair, n: int) -> None:
    """``np.sum(x + v*w)`` with two NaN payloads meeting: NumPy answers once it elides."""
    c = _run(pair, "total", _operands(n, [n // 2]))
    assert c["fast"] + sum(c["fallback"].values()) == 1, c
    if n >= ELIDED:
        assert c["fallback"] == NAN_RESULT, c
    c = _run(pair, "total", _operands(n, []))
    assert (c["fast"], c["fallback"]) == (1, {}), c


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from([*MAPS, "add_scaled"]),
    st.sampled_from(SIZES),
    st.lists(st.integers(0, 10**5), max_size=4),
    st.sampled_from([(0, 1), (1, 0), (0, 0)]),
)
def test_payloads_anywhere(
    pair: Pair, function: str, n: int, spots: list[int], order: tuple[int, int]
) -> None:
    """NaN payloads (either one on either side, or one NaN twice) anywhere."""
    x, v, w = _operands(n, [])
    for k in spots:
        x[k % n], v[k % n] = PAYLOADS[list(order)]
    args = (x, v, 0.25) if function == "add_scaled" else (x, v, w)
    c = _run(pair, function, args)
    assert (c["fast"], c["fallback"]) == (1, {}), c


# A call's result as a leaf (`x + np.hstack(...)`): the site's argument, held only by
# the caller's stack (reference count 1) as in Python's own ``x + <call>``, where NumPy
# elides into it. A name never is a temporary (its variable holds a reference).

#: function -> its array arguments' roles: "x" a named array of n elements, "a"/"b"
#: the halves joined into a temporary (a NaN payload meets x's in the first half)
JOINED = {
    "joined_right": "xab",
    "joined_times": "xab",
    "joined_left": "xab",
    "joined_minus": "xab",
    "joined_over": "xab",
    "joined_both": "abab",
    "joined_left_temp": "abxx",
    "joined_inner": "xabx",
}


def _joined(function: str, n: int, spots: list[int], order: tuple[int, int]) -> tuple[Any, ...]:
    """`function`'s arguments: n elements after the join, two NaN payloads meeting at
    `spots` (mod n//2): the named array's (or the first join's) `order[0]`, the
    joined one's `order[1]`."""
    rng = np.random.default_rng(n + len(spots))
    half = n // 2
    args: list[np.ndarray] = []
    for role in JOINED[function]:
        args.append(rng.uniform(-2, 2, n if role == "x" else half if role == "a" else n - half))
    first, second = (0, 1) if function == "joined_both" else (0, JOINED[function].index("a"))
    if function == "joined_left_temp":
        first, second = 2, 0
    for k in spots:
        args[first][k % half], args[second][k % half] = PAYLOADS[list(order)]
    return tuple(args)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("function", sorted(JOINED))
def test_call_results_as_leaves(pair: Pair, function: str, n: int) -> None:
    """``x + np.hstack(...)``: NumPy elides into the join's result from 256 KiB, as
    ``np.add(t, x, out=t)`` (the temporary's NaN wins); ``x * concatenate(...)`` too;
    a temporary on the left (``t + x``, ``t * t2``, ``t + v*w``) is elided into
    itself, no swap; ``-`` and ``/`` never swap. On the fast path, bit for bit."""
    c = _run(pair, function, _joined(function, n, [0, 3, n // 4, n // 2 - 1], (0, 1)))
    assert (c["fast"], c["fallback"]) == (1, {}), c


def test_call_result_elision_is_numpys() -> None:
    """The model: NumPy swaps for a call's result on the right from 256 KiB, never for
    a name or on the left."""
    for n, swapped in ((ELIDED - 2, False), (ELIDED, True)):
        x, a, b = _joined("joined_right", n, [5], (0, 1))
        bits = (x + np.hstack((a, b))).view(np.uint64)[5]
        assert bits == PAYLOADS.view(np.uint64)[1 if swapped else 0], (n, hex(bits))
        assert (np.hstack((a, b)) + x).view(np.uint64)[5] == PAYLOADS.view(np.uint64)[1]
        t = np.hstack((a, b))
        assert (x + t).view(np.uint64)[5] == PAYLOADS.view(np.uint64)[0]


def test_a_named_temporary_is_not_elided(pair: Pair) -> None:
    """`named_right(x, t)` called with a fresh join: inside, `t` is a name (reference
    count 2 at the site), NumPy does not elide, nor does the kernel swap."""
    n = ELIDED
    x, a, b = _joined("joined_right", n, [0, 5, n // 2 - 1], (0, 1))
    want = pair.plain.named_caller(x, a, b)
    assert want.view(np.uint64)[5] == PAYLOADS.view(np.uint64)[0]  # x's NaN: not elided
    c = _run(pair, "named_right", (x, np.hstack((a, b))))
    assert (c["fast"], c["fallback"]) == (1, {}), c
    with counting(pair, "named_right") as c:
        got = pair.fast.named_caller(x, a, b)
    assert (c["fast"], c["fallback"]) == (1, {}), c
    assert got.view(np.uint64)[5] == PAYLOADS.view(np.uint64)[0]


@pytest.mark.parametrize("n", [ELIDED, ELIDED + 1])
def test_a_view_is_not_a_temporary(pair: Pair, n: int) -> None:
    """``x + np.hstack(...)[1:]`` and ``x + t[1:]`` (a view the site takes itself, held
    only by the dispatcher): a view owns no data, NumPy does not elide into it."""
    rng = np.random.default_rng(n)
    x, t = rng.uniform(-2, 2, n), rng.uniform(-2, 2, n + 1)
    for k in (0, 3, n // 2, n - 1):
        x[k], t[k + 1] = PAYLOADS
    assert ((x + t[1:]) * 2.0).view(np.uint64)[3] == PAYLOADS.view(np.uint64)[0]
    c = _run(pair, "named_view", (x, t))
    assert (c["fast"], c["fallback"]) == (1, {}), c
    c = _run(pair, "joined_view", (x, t[: n // 2], t[n // 2 :]))
    assert (c["fast"], c["fallback"]) == (1, {}), c


@pytest.mark.parametrize("rows", [511, 512, 1563])
def test_call_result_beside_strided_rows(pair: Pair, rows: int) -> None:
    """A named operand in rows of 64 of wider arrays, the join's result of its shape
    (flat): the row runner follows the swap where NumPy elides, on the fast path."""
    x = np.random.default_rng(rows).uniform(-2, 2, (rows, 72))[:, :64]
    a, b = (np.random.default_rng(rows + k).uniform(-2, 2, (rows, 32)) for k in (1, 2))
    for r, k in ((0, 3), (rows // 2, 17), (rows - 1, 31)):
        x[r, k], a[r, k] = PAYLOADS
    for function in ("joined_right", "joined_left"):
        c = _run(pair, function, (x, a, b))
        assert (c["fast"], c["fallback"]) == (1, {}), (function, c)


@pytest.mark.parametrize("n", SIZES)
def test_store_of_a_call_result(pair: Pair, n: int) -> None:
    """``o[...] = x + np.hstack(...)``: the right side as a fresh result, swapped where
    NumPy elides; ``o += x + np.hstack(...)``: the inner add swapped, never the
    in-place one (the dispatcher clears the result node's bit)."""

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        x, a, b = _joined("joined_right", n, [0, 7, n // 2 - 1], (0, 1))
        o = np.zeros(n)
        return [o, x, a, b], (o, x, a, b)

    c, _ = run_world(pair, "assign_joined", world, all="ignore")
    assert (c["fast"], c["fallback"]) == (1, {}), c

    def with_nan_target() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        arrays, args = world()
        arrays[0][[0, 5, n // 2 - 1]] = PAYLOADS[0]
        return arrays, args

    c, _ = run_world(pair, "iadd_joined", with_nan_target, all="ignore")
    assert (c["fast"], c["fallback"]) == (1, {}), c


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(sorted(JOINED)),
    st.sampled_from([ELIDED - 2, ELIDED, ELIDED + 2, 10**5]),
    st.lists(st.integers(0, 10**5), max_size=4),
    st.sampled_from([(0, 1), (1, 0), (0, 0)]),
)
def test_call_result_payloads_anywhere(
    pair: Pair, function: str, n: int, spots: list[int], order: tuple[int, int]
) -> None:
    """NaN payloads (either one on either side, or one NaN twice) anywhere in the
    joined half, a call's result right, left or both."""
    c = _run(pair, function, _joined(function, n, spots, order))
    assert (c["fast"], c["fallback"]) == (1, {}), c


# The Python path (a guard, an FP flag NumPy reports, a NaN result the kernel does not
# follow) holds the call's result as a parameter, a name: the dispatcher hands it a
# box of a copy its expression reads through `fresh`, a temporary again.


@pytest.mark.parametrize("n", [ELIDED - 2, ELIDED, 10**5])
@pytest.mark.parametrize("function", ["joined_right", "joined_times", "joined_left_temp"])
def test_python_path_keeps_the_temporary(pair: Pair, function: str, n: int) -> None:
    """An FP flag NumPy warns about (``inf - inf`` beside two payloads meeting): the
    fallback answers with NumPy's payload and warning, the call's result still a
    temporary there."""
    args = _joined(function, n, [0, 3, n // 2 - 1], (0, 1))
    invalid = {"joined_right": (0, 1, -np.inf), "joined_times": (0, 1, 0.0)}
    first, second, other = invalid.get(function, (2, 3, 0.0))  # inf*0 in v*w
    args[first][7], args[second][7] = np.inf, other
    with counting(pair, function) as c:
        got = call(getattr(pair.fast, function), args, invalid="warn")
    want = call(getattr(pair.plain, function), args, invalid="warn")
    assert want.warnings, want
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    assert (c["fast"], c["fallback"]) == (0, {"fp-flags": 1}), c


def test_python_path_of_a_guard(pair: Pair) -> None:
    """A float32 operand beside the join (`guard: dtype`): NumPy elides into the
    float64 temporary (float32 casts to it safely), its NaN first."""
    n = ELIDED
    x, a, b = _joined("joined_right", n, [0, 5, n // 2 - 1], (0, 1))
    x32 = x.astype(np.float32)
    c = _run(pair, "joined_right", (x32, a, b))
    assert (c["fast"], c["fallback"]) == (0, {"guard: dtype": 1}), c


def test_python_path_of_an_unfollowed_nan(pair: Pair) -> None:
    """``(x + np.hstack(...)) * c`` broadcast down a column: NumPy elides over the
    (1, n) rows, the kernel does not follow that; the NaN result goes to the Python
    path, which elides as NumPy does."""
    n = ELIDED
    x, a, b = _joined("joined_right", n, [0, 5, n // 2 - 1], (0, 1))
    args = (x.reshape(1, n), a.reshape(1, -1), b.reshape(1, -1), np.array([[1.0], [-2.0]]))
    c = _run(pair, "joined_inner", args)
    assert (c["fast"], c["fallback"]) == (0, NAN_RESULT), c


@pytest.mark.parametrize("n", [ELIDED, 10**5])
def test_python_path_of_a_store(pair: Pair, n: int) -> None:
    """``o[...] = x + np.hstack(...)`` with an FP flag NumPy warns about: the store's
    Python path writes NumPy's payloads."""

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        x, a, b = _joined("joined_right", n, [0, 5, n // 2 - 1], (0, 1))
        x[7], a[7] = np.inf, -np.inf
        o = np.zeros(n)
        return [o, x, a, b], (o, x, a, b)

    c, _ = run_world(pair, "assign_joined", world, invalid="warn")
    assert (c["fast"], c["fallback"]) == (0, {"fp-flags": 1}), c


def test_python_path_of_strided_rows(pair: Pair) -> None:
    """A named operand read at a stride of two beside the join's result: the rows are
    not in NumPy's order, a NaN result goes to the Python path, which elides as NumPy."""
    rows = 512
    x = np.random.default_rng(rows).uniform(-2, 2, (rows, 128))[:, ::2]
    a, b = (np.random.default_rng(rows + k).uniform(-2, 2, (rows, 32)) for k in (1, 2))
    for r, k in ((0, 3), (rows // 2, 17), (rows - 1, 31)):
        x[r, k], a[r, k] = PAYLOADS
    c = _run(pair, "joined_right", (x, a, b))
    assert (c["fast"], c["fallback"]) == (0, NAN_RESULT), c
