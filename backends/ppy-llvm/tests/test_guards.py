"""Guard failures fall back to NumPy with the same answer; FP flags follow np.errstate."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import same_bits

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

rng = np.random.default_rng(8)
A, B, C = (rng.standard_normal(64) for _ in range(3))


class Sub(np.ndarray):
    """An ndarray subclass (must not take the fast path)."""


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ((A.astype(np.float32), B, C), "guard: dtype"),
        ((A.astype(np.int64), B, C), "guard: dtype"),
        ((A.astype(">f8"), B, C), "guard: dtype"),
        # views, F order and broadcasting take the fast path (ppy-numpy's test_strided)
        ((np.frombuffer(b"\0" + A.tobytes(), np.float64, offset=1), B, C), "guard: layout"),
        ((A.reshape(8, 8), B[:9], C.reshape(8, 8)), "guard: shape"),
        ((A.view(Sub), B, C), "guard: type"),
        ((np.float64(np.inf), B, C), "guard: type"),  # a float fills `a` only if finite
        ((1.5, 2.5, 3.5), "guard: type"),  # and only beside an array
        ((np.array(1.0), np.array(2.0), np.array(3.0)), "guard: 0-d"),
        ((np.empty(0), np.empty(0), np.empty(0)), "guard: empty"),
        ((A, B), "guard: arity"),
        ((A, B, [1.0] * 64), "guard: type"),
    ],
)
def test_guard_falls_back(sites, args: tuple, reason: str) -> None:
    site = sites["a*b+c"]
    if len(args) != 3:
        with pytest.raises(TypeError):
            site(*args)
    else:
        try:
            want = args[0] * args[1] + args[2]
        except ValueError as exc:  # NumPy's own error, from the fallback too
            with pytest.raises(ValueError, match=str(exc)[:30]):
                site(*args)
        else:
            got = site(*args)
            assert type(got) is type(want)
            assert np.array_equal(got, want, equal_nan=True)
            assert np.asarray(got).dtype == np.asarray(want).dtype
    assert site.stats() == {"site": "a*b+c", "fast": 0, "fallback": {reason: 1}}


@pytest.mark.parametrize("scalar", [2.5, 3, -(2**53), np.float64(1.5), np.array(4.0)])
def test_scalar_kinds_fast(sites, scalar: object) -> None:
    site = sites["a*s+t"]
    assert same_bits(site(A, scalar, C), A * scalar + C)
    assert site.stats()["fast"] == 1


@pytest.mark.parametrize("scalar", [True, 2**53 + 1, np.float32(1.5), "x", np.array([1.0])])
def test_scalar_kinds_fallback(sites, scalar: object) -> None:
    site = sites["a*s+t"]
    try:
        want = A * scalar + C  # type: ignore[operator]
    except TypeError:
        with pytest.raises(TypeError):
            site(A, scalar, C)
    else:
        got = site(A, scalar, C)
        assert got.dtype == want.dtype
        assert np.array_equal(got, want)
    assert site.stats()["fallback"] == {"guard: scalar": 1}


def test_errstate_default_warns_via_numpy(sites) -> None:
    site = sites["div"]
    x, y = np.ones(16), np.zeros(16)
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        got = site(x, y)
    assert same_bits(got, np.full(16, np.inf))
    assert site.stats()["fallback"] == {"fp-flags": 1}


def test_errstate_raise(sites) -> None:
    site = sites["div"]
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        site(np.ones(16), np.zeros(16))
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        sites["a*b+c"](np.full(8, 1e300), np.full(8, 1e300), np.zeros(8))


def test_errstate_ignore_keeps_fast_path(sites) -> None:
    site = sites["div"]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert same_bits(site(np.zeros(16), np.zeros(16)), np.zeros(16) / np.zeros(16))
    assert site.stats()["fast"] == 1


def test_nan_compare_raises_no_flag(sites) -> None:
    """Quiet compares: NaN operands neither warn nor leave the fast path."""
    site = sites["where"]
    a = np.array([np.nan, 1.0, -np.nan, 2.0] * 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert same_bits(site(a, a[::-1].copy(), a), np.where(a > a[::-1], a * a, a[::-1] - a))
    assert site.stats()["fast"] == 1
