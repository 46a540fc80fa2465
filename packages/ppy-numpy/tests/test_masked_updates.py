"""Masked updates (issue 27, NPBench nbody): `X[c] = f(X[c])` with an elementwise mask
reading `X` and an elementwise `f` of `X[c]` and scalars is one store site writing the
whole of `X` (core `frontend/masked.py`): where `c` holds, `f` of the element; elsewhere
the element as it was.

Each call runs on a fresh copy and is compared with the plain module on another: the
array bit for bit, the exception and the warnings (NumPy computes `f` on the selected
elements only; the site hands `f` a 1.0 elsewhere, and any flag still raised sends the
call to Python). Random shapes (empty, 0-d, up to 3-D), C/F/strided layouts, NaN, inf,
-0.0 and subnormals, masks selecting nothing or everything.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import SPECIALS, Pair, call, compile_pair, difference, with_reasons
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def pow15(x):
    x[x > 0] = x[x > 0] ** (-1.5)


def recip(x):
    x[x > 0] = 1.0 / x[x > 0]


def scaled(x, s):
    x[x > s] = x[x > s] * s - 1.0


def roots(x, y):
    x[(x > y) & (y != 0.0)] = np.sqrt(x[(x > y) & (y != 0.0)]) + x[(x > y) & (y != 0.0)]


def by_array(x, y):
    x[x > 0] = x[x > 0] * y


def other_mask(x, y):
    x[y > 0] = x[y > 0] * 2.0


def transposed(x):
    x[x > 0] = x.T[x > 0] * 2.0
"""

MASKED = ("pow15", "recip", "roots")


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "masked", SOURCE)


def test_masked_updates_are_one_store_each(pair: Pair) -> None:
    """A cold build: each masked update is one store site; `f` reading another array
    (NumPy broadcasts it against the k selected elements), a mask not reading `X`, or `X`
    read elsewhere (`x.T[...]`) keep NumPy's statement (their parts may be sites). So
    does `scaled` there (its `s` might be an array); a call with a float specializes it
    into one (`test_scalar_operands`)."""
    records = pair.manifest["expr_sites"]
    for name in MASKED:
        mine = [r for r in records if r["function"] == name]
        assert [r.get("store") for r in mine] == ["="], (name, mine)
    for name in ("scaled", "by_array", "other_mask", "transposed"):
        assert all(r.get("store") is None for r in records if r["function"] == name), name


def _values(draw: Any, size: int) -> np.ndarray:
    pool = st.one_of(
        st.sampled_from([float(v) for v in SPECIALS] + [5e-324, -5e-324, 1e-310, 1.0, -1.0]),
        st.floats(allow_nan=True, allow_infinity=True, width=64),
        st.floats(min_value=1e-3, max_value=1e3),
    )
    kind = draw(st.sampled_from(["mixed", "positive", "negative"]))
    values = np.array(draw(st.lists(pool, min_size=size, max_size=size)), dtype=np.float64)
    with np.errstate(all="ignore"):  # a signaling NaN stays one
        if kind == "positive":  # every element selected
            values = np.where(np.isnan(values), values, np.abs(values) + 0.5)
        elif kind == "negative":  # none selected
            values = np.where(np.isnan(values), values, -np.abs(values) - 0.5)
    return values


@st.composite
def _target(draw: Any) -> np.ndarray:
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=0, max_size=3)))
    layout = draw(st.sampled_from(["C", "F", "strided"]))
    size = int(np.prod(shape)) if shape else 1
    if layout == "strided" and shape:
        bigger = (*shape[:-1], shape[-1] * 2)
        base = _values(draw, int(np.prod(bigger))).reshape(bigger)
        return base[..., ::2]
    values = _values(draw, size).reshape(shape)
    return np.asfortranarray(values) if layout == "F" else np.ascontiguousarray(values)


def _run(pair: Pair, name: str, x: np.ndarray, *rest: Any, **err: str) -> dict[str, Any]:
    """Call `name` on a copy of `x` (layout kept) fast and plain; compare; the counts."""
    got_x, want_x = (
        (x.copy(order="K"), x.copy(order="K")) if _flat(x) else (_strided_like(x), _strided_like(x))
    )
    # a signature seen first compiles its specialization on this call, whose sites the
    # counters do not know yet: one call on another copy of the same layout first
    warm = x.copy(order="K") if _flat(x) else _strided_like(x)
    call(getattr(pair.fast, name), (warm, *rest), **err)
    fast0, fallback0 = _counts(name)
    got = call(getattr(pair.fast, name), (got_x, *rest), **err)
    fast1, fallback1 = _counts(name)
    c: dict[str, Any] = {"fast": fast1 - fast0}
    c["fallback"] = {
        r: n - fallback0.get(r, 0) for r, n in fallback1.items() if n != fallback0.get(r, 0)
    }
    want = call(getattr(pair.plain, name), (want_x, *rest), **err)
    assert got.error == want.error, (got.error, want.error)
    assert sorted(got.warnings, key=repr) == sorted(want.warnings, key=repr)
    assert difference(got_x, want_x) is None, difference(got_x, want_x)
    c["warned"] = bool(want.warnings) or want.error is not None
    c["nan_result"] = bool(np.isnan(want_x).any())
    return c


def _counts(name: str) -> tuple[int, dict[str, int]]:
    """Fast calls and fallbacks by reason of `name`'s sites, its specializations' too."""
    fast, fallback = 0, {}
    for sid, data in ppy.stats().items():
        if sid.startswith(f"masked:{name}."):
            fast += int(data["fast"])
            for reason, n in data["fallback"].items():
                fallback[reason] = fallback.get(reason, 0) + int(n)
    return fast, fallback


def _flat(x: np.ndarray, *more: np.ndarray) -> bool:
    """Are `x` and `more` all C-ordered (or all F-ordered) arrays of `x`'s shape, as the
    store runtime's flat path asks?"""
    return any(
        all(
            a.shape == x.shape and a.strides == np.empty(x.shape, order=o).strides
            for a in (x, *more)
        )
        for o in "CF"
    )


def _strided_like(x: np.ndarray) -> np.ndarray:
    """A fresh copy of `x` as every second element of a wider array (not contiguous)."""
    wide = np.zeros((*x.shape[:-1], x.shape[-1] * 2))
    wide[..., ::2] = x
    return wide[..., ::2]


#: kernels calling NumPy's own loop (`x ** -1.5`: npy_pow), which reads its operand in
#: place: a strided target is NumPy's ("guard: layout")
LOOP_CALLING = frozenset({"pow15"})


def _expect_fast(c: dict[str, Any], x: np.ndarray, quiet: bool, name: str, *more: Any) -> None:
    """Fast exactly when the target is a non-empty array of rank >= 1 and (unless every
    flag is ignored) NumPy raised none, but for the store runtime's own refusals: a
    kernel calling NumPy's loop over a strided target, a NaN result on the strided path
    (its payload is NumPy's to give), a signaling NaN compared (the kernel's compare
    raises invalid; NumPy's clears its flags). Else the fallback says why."""
    flat = _flat(x, *more)  # else the runtime's strided rows run
    fallback = set(c["fallback"])
    if x.ndim == 0 or x.size == 0:
        assert c["fast"] == 0, c
        assert fallback <= {"guard: target", "guard: empty"}, c
        return
    if not flat and name in LOOP_CALLING and c["fast"] == 0:  # one element: no stride
        assert fallback == {"guard: layout"}, with_reasons(c)
        return
    nan_path = {"result: nan/zero"} if not flat and c["nan_result"] else set()
    if c["warned"] and not quiet:
        assert c["fast"] == 0, with_reasons(c)
        assert len(fallback) == 1, with_reasons(c)
        assert fallback <= {"fp-flags", *nan_path}, with_reasons(c)
        return
    allowed = set(nan_path)
    if not quiet and _signaling(x, *more):
        allowed.add("fp-flags")
    if c["fast"] == 0 and allowed:
        assert len(fallback) == 1, with_reasons(c)
        assert fallback <= allowed, with_reasons(c)
    else:
        assert c["fast"] == 1, with_reasons(c)
        assert not fallback, with_reasons(c)


def _signaling(*arrays: np.ndarray) -> bool:
    """Does any element hold a signaling NaN (quiet bit clear)?"""
    for a in arrays:
        bits = np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)
        exp, quiet = np.uint64(0x7FF0000000000000), np.uint64(1 << 51)
        mantissa = bits & np.uint64((1 << 52) - 1)
        if np.any(((bits & exp) == exp) & (mantissa != 0) & ((bits & quiet) == 0)):
            return True
    return False


SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(x=_target(), name=st.sampled_from(["pow15", "recip"]), quiet=st.booleans())
def test_unary_masked_updates(pair: Pair, x: np.ndarray, name: str, quiet: bool) -> None:
    err = {"all": "ignore"} if quiet else {}
    _expect_fast(_run(pair, name, x, **err), x, quiet, name)


@SETTINGS
@given(x=_target(), s=st.sampled_from([0.0, -0.0, 1.5, -2.0, np.inf, np.nan, 1e-310]))
def test_scalar_operands(pair: Pair, x: np.ndarray, s: float) -> None:
    _expect_fast(_run(pair, "scaled", x, s), x, False, "scaled")


@SETTINGS
@given(x=_target(), data=st.data())
def test_mask_reading_a_broadcast_array(pair: Pair, x: np.ndarray, data: Any) -> None:
    """`y` of `x`'s shape, its last axis, or one element: the mask broadcasts to `x`'s
    shape as NumPy's does; a `y` that does not fit raises NumPy's error."""
    shapes = [x.shape, x.shape[-1:], (1,)] if x.ndim else [(), (1,)]
    shape = data.draw(st.sampled_from([*shapes, (7,)]))
    y = _values(data.draw, int(np.prod(shape))).reshape(shape)
    c = _run(pair, "roots", x, y)
    if shape == (7,) and x.shape[-1:] != (7,) and x.ndim:
        assert c["fast"] == 0, c  # NumPy raises (or broadcasts otherwise): Python ran
    elif np.broadcast_shapes(x.shape, shape) == x.shape:
        _expect_fast(c, x, False, "roots", y)


def test_the_same_element_of_an_alias_and_errstate_raise(pair: Pair) -> None:
    """Under `np.errstate(divide="raise")` NumPy raises only where a selected element
    divides by zero (none here: the zeros are not selected); the site runs, then an
    array whose selected elements overflow raises as NumPy's."""
    x = np.array([[0.0, 2.0, -0.0], [4.0, 0.0, np.nan]])
    c = _run(pair, "recip", x, divide="raise")
    assert c["fast"] == 1, with_reasons(c)
    tiny = np.array([5e-324, 1.0, 0.0])
    c = _run(pair, "recip", tiny, over="raise")
    assert c["fast"] == 0, with_reasons(c)
    assert set(c["fallback"]) == {"fp-flags"}, with_reasons(c)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
def test_other_element_types_answer_as_numpy(pair: Pair, dtype: type) -> None:
    """float32 and integer targets: whatever runs (a float32 kernel, or NumPy's statement
    where the result's type is not the target's), the array and warnings are NumPy's."""
    x = np.array([[3.0, -1.0, 0.0], [2.5, 7.0, -4.0]]).astype(dtype)
    for name, rest in (("pow15", ()), ("recip", ()), ("scaled", (2.0,)), ("scaled", (2,))):
        _run(pair, name, x, *rest)
