"""Stores of float32, int64 and int32 results (issue 18): `t[...] = a * b - s`,
`a += b * n - a` over typed arrays are store sites whose kernel computes in the
target's dtype (float32 with NumPy 2's weak Python scalars, wrapping integers).

The guard takes the fast path where the kernels can: the target writeable, an exact
ndarray of the kernel's dtype, every operand broadcasting to the target's shape (flat
ones in one loop, others row by row). Anything else is NumPy's, with its answer: a
cast or same_kind casting (its UFuncTypeError), a float32 NaN (its bits follow
NumPy's operand order), FP flags.
Where the types say a store could never run fast, the compiler leaves the store to
Python and says why. Every call is compared with NumPy on a fresh copy of its world.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import SPECIALS, Pair, World, compile_pair, run_world, with_reasons
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppy_core.interface.plugin import NOT_CONSTANT, OperatorContext
from ppy_core.ir.types import F64 as SCALAR_F64
from ppy_core.ir.types import UNKNOWN, ScalarType, TensorType
from ppy_numpy.plugin import NumpyPlugin

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

F32, F64 = "npt.NDArray[np.float32]", "npt.NDArray[np.float64]"
I64, I32 = "npt.NDArray[np.int64]", "npt.NDArray[np.int32]"
MASK = "npt.NDArray[np.bool_]"

SOURCE = f"""\
import numpy as np
import numpy.typing as npt


def f32_assign(t: {F32}, a: {F32}, b: {F32}, s: float):
    t[...] = a * b - s


def f32_iadd(a: {F32}, b: {F32}):
    a += b * 2.5 - 1.0


def i64_assign(t: {I64}, a: {I64}, b: {I64}):
    t[...] = a * 3 + b


def i64_iadd(a: {I64}, b: {I64}, n: int):
    a += b * n - a


def i32_assign(t: {I32}, a: {I32}, b: {I32}):
    t[...] = a * 3 + b


def i32_iadd(a: {I32}, b: {I32}, n: int):
    a -= b * n + 1


def same_kind(a: {I64}, b: {F64}):
    a[...] += b * 2.0


def cast_into(t: {I64}, a: {F64}):
    t[...] = a * 2.0 + 1.0


def mask(m: {MASK}, a: {F64}, b: {F64}):
    m[...] = a * 2.0 > b


def shift(a: {I64}):
    a[1:] += a[:-1] * 3
"""

#: function -> (dtype, whether it is `t[...] = ...` (else `a OP= ...`), extra args)
STORES: dict[str, tuple[type, bool, tuple[Any, ...]]] = {
    "f32_assign": (np.float32, True, (0.75,)),
    "f32_iadd": (np.float32, False, ()),
    "i64_assign": (np.int64, True, ()),
    "i64_iadd": (np.int64, False, (3,)),
    "i32_assign": (np.int32, True, ()),
    "i32_iadd": (np.int32, False, (-7,)),
}
INT64 = np.iinfo(np.int64)


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "stores_dtypes", SOURCE)


def _values(rng: np.random.Generator, dtype: type, shape: Any, special: float) -> np.ndarray:
    """An array of `dtype`: floats over many decades with float specials, or ints
    over the whole range (the extremes too) and small ones."""
    size = int(np.prod(shape))
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(size) * 10.0 ** rng.uniform(-6, 6, size)
        picks = rng.random(size) < special
        x[picks] = SPECIALS[rng.integers(0, len(SPECIALS), int(picks.sum()))]
        with np.errstate(all="ignore"):
            return x.astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    x = rng.integers(-1000, 1000, size, dtype=dtype)
    picks = rng.random(size) < special
    edges = np.array([info.min, info.max, info.min + 1, info.max - 1, 0, -1], dtype=dtype)
    x[picks] = edges[rng.integers(0, len(edges), int(picks.sum()))]
    if rng.random() < 0.5:
        x = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
    return x.reshape(shape)


def _world(function: str, shape: Any, seed: int, special: float = 0.0) -> World:
    """Fresh C-contiguous operands of the function's dtype (and its extra args)."""
    dtype, assign, extra = STORES[function]

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        rng = np.random.default_rng(seed)
        arrays = [_values(rng, dtype, shape, special) for _ in range(3 if assign else 2)]
        return arrays, (*arrays, *extra)

    return world


def test_sites_and_refusals(pair: Pair) -> None:
    """Typed float32 and integer stores are store sites; a store whose types say it
    could never run fast is left to Python, with the reason in the manifest."""
    forms = {r["function"]: r.get("store") for r in pair.manifest["expr_sites"]}
    for function, (_, assign, _) in STORES.items():
        assert forms[function] == ("=" if assign else "name"), (function, forms)
        assert pair.compiled(function), pair.records(function)
    assert all(forms.get(f) is None for f in ("same_kind", "cast_into", "mask")), forms
    remarks = {r["function"]: r["message"] for r in pair.manifest["remarks"]}
    assert "the f64 result goes into a i64 target" in remarks["same_kind"]
    assert "the f64 result goes into a i64 target" in remarks["cast_into"]
    assert "stores no i1 result" in remarks["mask"]
    # `a[:-1]` of an int64 array is an int64 view: an int64 store into the overlapping
    # `a[1:]`, computed whole first (a temporary), as NumPy does
    assert forms["shift"] == "item"

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        a = _values(np.random.default_rng(2), np.int64, (99,), 0.3)
        return [a], (a,)

    c, direct = run_world(pair, "shift", world)
    assert (c, direct) == ({"fast": 1, "fallback": {}}, 0), with_reasons(c)


@pytest.mark.parametrize("function", sorted(STORES))
def test_fast_and_direct(pair: Pair, function: str) -> None:
    """Flat operands: the fast path. `t[...] = ...` writes the target directly; an
    integer `a OP= ...` too (it never falls back once it ran), a float32 one through
    a temporary (a NaN after the write would send it to Python)."""
    for shape in ((1,), (7,), (33, 65), (600, 500)):  # the last: threads, no GIL
        c, direct = run_world(pair, function, _world(function, shape, sum(shape)))
        assert c == {"fast": 1, "fallback": {}}, (shape, with_reasons(c))
        dtype, assign, _ = STORES[function]
        assert direct == int(assign or np.dtype(dtype).kind == "i"), (shape, direct)


def test_fortran_ordered(pair: Pair) -> None:
    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        rng = np.random.default_rng(3)
        t, a, b = (np.asfortranarray(_values(rng, np.int64, (40, 9), 0.2)) for _ in range(3))
        return [t, a, b], (t, a, b)

    c, direct = run_world(pair, "i64_assign", world)
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
    assert direct == 1


def test_int_wraparound(pair: Pair) -> None:
    """INT64_MIN and INT64_MAX wrap as NumPy's arrays do (no warning, no error)."""
    edges = np.array([INT64.min, INT64.max, INT64.min + 1, -1, 0, 1, 2**62, -(2**62)])

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        t = np.zeros(edges.size * edges.size, np.int64)
        a, b = np.repeat(edges, edges.size), np.tile(edges, edges.size)
        return [t, a, b], (t, a, b)

    c, _ = run_world(pair, "i64_assign", world)
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)

    def augmented() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        a, b = np.repeat(edges, edges.size), np.tile(edges, edges.size)
        return [a, b], (a, b, INT64.max)

    c, direct = run_world(pair, "i64_iadd", augmented)
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
    assert direct == 1


def test_overlap_goes_through_a_temporary(pair: Pair) -> None:
    """`a[1:] += a[:-1] ...` as arguments: the operand overlaps the target without
    being it, so the whole right side is computed first, as NumPy does."""
    for function in sorted(STORES):
        dtype, assign, extra = STORES[function]

        def world(dtype: type = dtype, assign: bool = assign, extra: Any = extra) -> Any:
            base = _values(np.random.default_rng(4), dtype, (1001,), 0.0)
            shifted = (base[1:], base[:-1], base[:-1]) if assign else (base[1:], base[:-1])
            return [base], (*shifted, *extra)

        c, direct = run_world(pair, function, world)
        assert c == {"fast": 1, "fallback": {}}, (function, with_reasons(c))
        assert direct == 0, function


def test_float32_specials(pair: Pair) -> None:
    """NaN, inf, -0.0, subnormals, overflow: NumPy's bits and warnings. A NaN result
    is NumPy's (counted), an FP flag NumPy reports is NumPy's; else the fast path."""
    tiny = np.float32(1e-45)
    cases = {
        "signed zeros": ([-0.0, 0.0, -0.0], [1.0, -1.0, 0.0], 0.0, {}),
        "subnormals": ([tiny, -tiny, 1e-38], [0.5, 1.0, 1e-3], 0.0, {}),
        "infinities": ([np.inf, -np.inf, 1.0], [2.0, 3.0, np.inf], -1.0, {}),
        "nan in": ([np.nan, 1.0, 2.0], [1.0, 1.0, 1.0], 0.0, {"result: nan/zero": 1}),
        "inf - inf": ([np.inf, 1.0, 2.0], [1.0, 1.0, 1.0], np.inf, {"result: nan/zero": 1}),
        "overflow": ([3e38, 1.0, 2.0], [10.0, 1.0, 1.0], 0.0, {"fp-flags": 1}),
    }
    for name, (a, b, s, fallback) in cases.items():

        def world(a: Any = a, b: Any = b, s: float = s) -> Any:
            t = np.full(3, 7.0, np.float32)
            x, y = np.array(a, np.float32), np.array(b, np.float32)
            return [t, x, y], (t, x, y, s)

        c, _ = run_world(pair, "f32_assign", world)
        want = {"fast": 0 if fallback else 1, "fallback": fallback}
        assert c == want, (name, with_reasons(c))
        if "fp-flags" in fallback:  # NumPy raises before it stores: the target keeps its values
            c, direct = run_world(pair, "f32_assign", world, over="raise")
            assert (c["fallback"], direct) == ({"fp-flags": 1}, 0), with_reasons(c)


def _i32(rng: np.random.Generator) -> np.ndarray:
    return _i64(rng).astype(np.int32)


#: name -> (function, its arguments, the reason NumPy answers)
KEPT: dict[str, tuple[str, Any, str]] = {
    "f64 operand, same_kind": ("i64_iadd", lambda r: (_i64(r), _f64(r), 3), "guard: dtype"),
    "f64 operand, cast": ("f32_iadd", lambda r: (_f32(r), _f64(r)), "guard: dtype"),
    "i32 target": ("i64_iadd", lambda r: (_i32(r), _i64(r), 3), "guard: target"),
    "f64 target": ("i64_assign", lambda r: (_f64(r), _i64(r), _i64(r)), "guard: target"),
    "read-only": ("i32_iadd", lambda r: (_read_only(_i32(r)), _i32(r), 1), "guard: target"),
    "int32 range": ("i32_iadd", lambda r: (_i32(r), _i32(r), 2**31), "guard: scalar"),
    "np.int64 with int32": ("i32_iadd", lambda r: (_i32(r), _i32(r), np.int64(3)), "guard: scalar"),
    "np.float64": (
        "f32_assign",
        lambda r: (_f32(r), _f32(r), _f32(r), np.float64(0.5)),
        "guard: scalar",
    ),
}


#: name -> (function, its arguments): strided and broadcast stores of every dtype
STRIDED: dict[str, tuple[str, Any]] = {
    "i64 stepped target": ("i64_assign", lambda r: (_i64(r, 24)[::2], _i64(r), _i64(r))),
    "i64 broadcast operand": ("i64_assign", lambda r: (_i64(r), _i64(r, 1), _i64(r))),
    "i32 reversed operand": ("i32_iadd", lambda r: (_i32(r), _i32(r)[::-1], 7)),
    "f32 stepped target": (
        "f32_assign",
        lambda r: (_values(r, np.float32, (36,), 0.0)[::3], _f32(r), _f32(r)[::-1], 0.5),
    ),
    "f32 column": (
        "f32_iadd",
        lambda r: (_values(r, np.float32, (4, 6), 0.0), _values(r, np.float32, (4, 1), 0.0)),
    ),
}


@pytest.mark.parametrize("name", sorted(STRIDED))
def test_strided_stores_run_fast(pair: Pair, name: str) -> None:
    """A stepped or reversed target or operand, an operand broadcast into the target:
    the rows are walked as float64 stores' are, in the target's dtype (4- or 8-byte
    items), with NumPy's bits."""
    function, make = STRIDED[name]

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        args = make(np.random.default_rng(5))
        return [a for a in args if isinstance(a, np.ndarray)], args

    c, _ = run_world(pair, function, world)
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)


@pytest.mark.parametrize("name", sorted(KEPT))
def test_numpy_keeps(pair: Pair, name: str) -> None:
    """What the kernels cannot do is NumPy's, with NumPy's answer or exception (an
    int64 target of a float64 right side: its same_kind UFuncTypeError)."""
    function, make, reason = KEPT[name]

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        args = make(np.random.default_rng(5))
        return [a for a in args if isinstance(a, np.ndarray)], args

    c, _ = run_world(pair, function, world)
    assert c == {"fast": 0, "fallback": {reason: 1}}, with_reasons(c)


def _i64(rng: np.random.Generator, n: int = 12) -> np.ndarray:
    return _values(rng, np.int64, (n,), 0.2)


def _f32(rng: np.random.Generator) -> np.ndarray:
    return _values(rng, np.float32, (12,), 0.0)


def _f64(rng: np.random.Generator) -> np.ndarray:
    return _values(rng, np.float64, (12,), 0.0)


def _read_only(x: np.ndarray) -> np.ndarray:
    x.flags.writeable = False
    return x


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted(STORES)),
    st.sampled_from(((1,), (5,), (2, 3), (17, 33), (300,))),
    st.sampled_from(("c", "f", "strided", "overlap")),
    st.sampled_from((0.0, 0.3)),
    st.integers(0, 2**32 - 1),
)
def test_random_stores_against_numpy(
    pair: Pair, function: str, shape: Any, layout: str, special: float, seed: int
) -> None:
    dtype, assign, extra = STORES[function]
    count = 3 if assign else 2

    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        rng = np.random.default_rng(seed)
        if layout == "overlap":
            base = _values(rng, dtype, (int(np.prod(shape)) + 1,), special)
            return [base], (base[1:], *(base[:-1] for _ in range(count - 1)), *extra)
        if layout == "strided":
            arrays = [
                _values(rng, dtype, (*shape[:-1], 2 * shape[-1]), special) for _ in range(count)
            ]
            return arrays, (*(x[..., ::2] for x in arrays), *extra)
        arrays = [_values(rng, dtype, shape, special) for _ in range(count)]
        if layout == "f":
            arrays = [np.asfortranarray(x) for x in arrays]
        return arrays, (*arrays, *extra)

    c, direct = run_world(pair, function, world)
    assert c["fast"] + sum(c["fallback"].values()) == 1
    integer = np.dtype(dtype).kind == "i"
    if integer or special == 0.0:  # no NaN, no FP flag: the fast path, strided or flat
        assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
        overlap = layout == "overlap" and int(np.prod(shape)) > 1  # base[1:] and base[:-1]
        assert direct == int(not overlap and (assign or integer)), (layout, direct)


# -- `t OP= v` keeps an ndarray's type (rebinding.py) ---------------------------------

REBOUND = f"""\
import numpy as np
import numpy.typing as npt


def i64_loop(t: {I64}, a: {I64}, b: {I64}, n: int):
    for _ in range(n):
        t += a * b - t
    return t


def i64_f64_loop(t: {I64}, a: {F64}, b: {F64}, n: int):
    for _ in range(n):
        t += a * b
    return t


def f32_f64_loop(t: {F32}, a: {F64}, b: {F64}, n: int):
    for _ in range(n):
        t += a * b
    return t


def local_mixed(a: {I64}, b: {F64}, n: int):
    t = a * 3
    for _ in range(n):
        t -= b * 0.5
    return t


def guessed_loop(t, a, b, n):
    for _ in range(n):
        t += a * b
    return t
"""
#: function -> its dtypes (target first) for `_in_place_world`
REBOUND_DTYPES: dict[str, tuple[type, ...]] = {
    "i64_loop": (np.int64, np.int64, np.int64),
    "i64_f64_loop": (np.int64, np.float64, np.float64),
    "f32_f64_loop": (np.float32, np.float64, np.float64),
    "local_mixed": (np.int64, np.float64),
}
TIMES = 4


@pytest.fixture(scope="module")
def rebound(project: Any) -> Pair:
    return compile_pair(project, "stores_rebound", REBOUND)


def _in_place_world(dtypes: tuple[type, ...], seed: int, special: float = 0.0) -> World:
    def world() -> tuple[list[np.ndarray], tuple[Any, ...]]:
        rng = np.random.default_rng(seed)
        arrays = [_values(rng, dtype, (257,), special) for dtype in dtypes]
        return arrays, (*arrays, TIMES)

    return world


def test_in_place_keeps_the_target_type(rebound: Pair) -> None:
    """An annotated (or once typed) int64 or float32 `t` stays so under `t += <f64>`:
    no float64 store site its guard would refuse on every call (the reason is in the
    manifest), and the value alone is a typed site; a speculative one takes all."""
    records = {r["function"]: r for r in rebound.manifest["expr_sites"]}
    assert records["i64_loop"]["store"] == "name", records["i64_loop"]
    assert rebound.compiled("i64_loop")
    remarks = {r["function"]: r["message"] for r in rebound.manifest["remarks"]}
    for function, value in (
        ("i64_f64_loop", "a * b"),
        ("f32_f64_loop", "a * b"),
        ("local_mixed", "b * 0.5"),
    ):
        (record,) = (r for r in rebound.records(function) if r["text"] != "a * 3")
        assert (record["text"], record.get("store"), record.get("assumed")) == (value, None, None)
        assert rebound.compiled(function)
        target = "f32" if function.startswith("f32") else "i64"
        assert f"the f64 result goes into a {target} target" in remarks[function]
    assert [r.get("assumed") for r in rebound.records("guessed_loop")] == [["t", "a", "b"]]


def test_int64_in_place_loop_runs_fast(rebound: Pair) -> None:
    """Every pass of the loop takes the int64 store site, wrapping as NumPy does."""
    for seed in range(3):
        world = _in_place_world(REBOUND_DTYPES["i64_loop"], seed, 0.3)
        c, direct = run_world(rebound, "i64_loop", world)
        assert c == {"fast": TIMES, "fallback": {}}, with_reasons(c)
        assert direct == TIMES


def test_int64_target_of_a_float64_value_raises_numpys_error(rebound: Pair) -> None:
    """The value's site runs fast once, then NumPy's in-place ufunc refuses same_kind
    casting: its exact UFuncTypeError, the target untouched (`run_world` compares)."""
    for function, fast in (("i64_f64_loop", 1), ("local_mixed", 2)):  # `a * 3` too
        world = _in_place_world(REBOUND_DTYPES[function], 1)
        with pytest.raises(TypeError, match="casting rule 'same_kind'"):
            getattr(rebound.fast, function)(*world()[1])
        c, _ = run_world(rebound, function, world)
        assert c == {"fast": fast, "fallback": {}}, (function, with_reasons(c))


def test_float32_target_of_a_float64_value_is_numpys(rebound: Pair) -> None:
    """NumPy casts the float64 value into the float32 target (same_kind): the value
    site's product, then NumPy's add, every bit NumPy's (a float32 result), specials
    too (where the product is NaN or raises a flag, NumPy computes it)."""
    world = _in_place_world(REBOUND_DTYPES["f32_f64_loop"], 2)
    assert rebound.fast.f32_f64_loop(*world()[1]).dtype == np.float32
    c, _ = run_world(rebound, "f32_f64_loop", world)
    assert c == {"fast": TIMES, "fallback": {}}, with_reasons(c)
    for seed in range(4):
        world = _in_place_world(REBOUND_DTYPES["f32_f64_loop"], seed, 0.3)
        c, _ = run_world(rebound, "f32_f64_loop", world)
        assert c["fast"] + sum(c["fallback"].values()) == TIMES, with_reasons(c)


@pytest.mark.parametrize(
    ("dtypes", "fast", "fallback"),
    [
        ((np.float64, np.float64, np.float64), TIMES, 0),
        ((np.int64, np.float64, np.float64), 0, 1),  # NumPy's UFuncTypeError at once
        ((np.float32, np.float64, np.float64), 0, TIMES),
        ((np.int64, np.int64, np.int64), 0, TIMES),
    ],
)
def test_speculative_in_place_loop(
    rebound: Pair, dtypes: tuple[type, ...], fast: int, fallback: int
) -> None:
    """Unannotated `t += a * b`: float64 arrays take the store site; anything else is
    NumPy's, with its answer or exception (the guard refuses it on each call)."""
    c, _ = run_world(rebound, "guessed_loop", _in_place_world(dtypes, 3), speculative=True)
    assert (c["fast"], sum(c["fallback"].values())) == (fast, fallback), with_reasons(c)
    run_world(rebound, "guessed_loop", _in_place_world(dtypes, 3))  # the dispatcher: NumPy's too


def test_the_plugin_answers_in_place_operators() -> None:
    """The typing fact itself: an ndarray target keeps its type next to an ndarray or a
    number; next to an unknown object (which may take the operation over) or with a
    scalar target, the answer is the operator's (`t = t OP v`)."""
    plugin = NumpyPlugin()
    i64, f64 = (TensorType(ScalarType(k), None, "numpy") for k in ("i64", "f64"))

    def in_place(op: str, *operands: Any) -> Any:
        constants = (NOT_CONSTANT,) * len(operands)
        return plugin.operator(OperatorContext(op, operands, constants, in_place=True))

    assert in_place("Add", i64, f64) == i64
    assert in_place("Div", i64, SCALAR_F64) == i64  # NumPy raises: `t` is never a float
    assert in_place("Mult", f64, i64) == f64
    assert in_place("Add", i64, UNKNOWN) is None
    scalar = in_place("Add", SCALAR_F64, f64)
    assert getattr(scalar, "result", scalar) == f64  # `s += a`: `s` becomes the array
