"""Elementwise kernels equal NumPy bit for bit, and the fast path ran."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import EXPRS, make_inputs, same_bits
from ppy_llvm._spec import LOOP_UNARY

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

LENGTHS = [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 127, 128, 129, 255, 256, 257, 1000, 4099]
EXACT = [n for n, e in EXPRS.items() if e[2] is None and n not in LOOP_UNARY]
TRANSCENDENTAL = [
    *LOOP_UNARY,
    "sin*2+exp",
    "power(a,b)",
    "a**3.0",
]


def _args(name: str, rng: np.random.Generator, n: int) -> list[object]:
    leaves = EXPRS[name][0]
    arrays = make_inputs(rng, n, leaves.count("a"))
    it = iter(arrays)
    return [next(it) if c == "a" else float(rng.standard_normal()) for c in leaves]


@pytest.mark.parametrize("name", EXACT)
def test_exact_ops_bitwise(sites, name: str) -> None:
    site, ref = sites[name], EXPRS[name][3]
    rng = np.random.default_rng(1)
    with np.errstate(all="ignore"):
        for n in LENGTHS:
            args = _args(name, rng, n)
            assert same_bits(site(*args), ref(*args)), (name, n)
    assert site.stats()["fast"] == len(LENGTHS)


@pytest.mark.parametrize("name", TRANSCENDENTAL)
def test_numpy_loop_calls_bitwise(sites, name: str) -> None:
    """Fused calls of NumPy's own loops; only functions the proof accepted are fused."""
    from conftest import spec_of
    from ppy_llvm import LlvmBackend

    why = LlvmBackend().can_lower_spec(spec_of(name), "numpy")
    if why is not None:
        assert "[E2104]" in why
        pytest.skip(f"refused by the proof: {why}")
    site, ref = sites[name], EXPRS[name][3]
    rng = np.random.default_rng(2)
    with np.errstate(all="ignore"):
        for n in LENGTHS:
            for off in (0, 1, 3):
                args = [
                    a[off:] if isinstance(a, np.ndarray) else a for a in _args(name, rng, n + off)
                ]
                assert same_bits(site(*args), ref(*args)), (name, n, off)
    assert site.stats()["fast"] == 3 * len(LENGTHS)


def test_numpy_power_fast_paths_are_real() -> None:
    """``a ** 0.5`` is sqrt, not C pow (-0.0 -> -0.0, -inf -> nan; pow gives +0.0, +inf).
    In NumPy 2.4 the float64 power loop itself takes that path for a stride-0
    exponent, so ``np.power(a, 0.5)`` agrees; both agree with our lowering."""
    import math

    x = np.array([-0.0, -np.inf, 4.0])
    with np.errstate(all="ignore"):
        assert same_bits(x**0.5, np.sqrt(x))
        assert same_bits(np.power(x, 0.5), np.sqrt(x))
    assert math.pow(-math.inf, 0.5) == math.inf
    assert math.copysign(1, math.pow(-0.0, 0.5)) == 1
    y = np.random.default_rng(0).standard_normal(1000)
    assert same_bits(y**2, np.square(y))
    assert same_bits(y**-1, np.reciprocal(y))


def test_maximum_minimum_semantics() -> None:
    """np.maximum(a, b): a if a is NaN, else (a > b ? a : b): ties of +-0 and NaN b give b."""
    a = np.array([0.0, -0.0, np.nan, -np.nan, 1.0] * 5)
    b = np.array([-0.0, 0.0, -np.nan, np.nan, np.nan] * 5)
    assert same_bits(np.maximum(a, b), np.where(np.isnan(a), a, np.where(a > b, a, b)))
    assert same_bits(np.minimum(a, b), np.where(np.isnan(a), a, np.where(a < b, a, b)))


@pytest.mark.parametrize("n", [1, 5, 8, 9, 16, 17, 37, 300])
def test_nan_sign_propagation(sites, n: int) -> None:
    """Both operands NaN: NumPy's add/multiply keep the first NaN in the SIMD body but
    the second in the scalar tail (last n % 8, n > 8); scalars win when n > 8."""
    n1 = np.full(n, np.nan)
    n2 = -n1
    with np.errstate(all="ignore"):
        for name in ("add", "sub", "mul", "div", "maximum", "minimum", "a*b+c", "where"):
            site, ref = sites[name], EXPRS[name][3]
            for args in ([n1, n2, n1], [n2, n1, n2]):
                args = args[: len(EXPRS[name][0])]
                assert same_bits(site(*args), ref(*args)), (name, n)
        for s in (np.nan, -np.nan):
            assert same_bits(sites["a*s+t"](n1, s, n2), n1 * s + n2), (n, s)
            assert same_bits(sites["a*s+t"](n2, s, n1), n2 * s + n1), (n, s)


floats = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True, width=64)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(["a*b+c", "2a+3bc-a/b", "where", "maximum", "minimum", "cmp_ne"]),
)
def test_hypothesis_bitwise(sites, data: st.DataObject, name: str) -> None:
    n = data.draw(st.integers(1, 40))
    k = EXPRS[name][0].count("a")
    arrs = [data.draw(hnp.arrays(np.float64, n, elements=floats)) for _ in range(k)]
    site, ref = sites[name], EXPRS[name][3]
    with np.errstate(all="ignore"):
        assert same_bits(site(*arrs), ref(*arrs))
    assert site.stats()["fast"] == 1


def test_two_dimensional_c_contiguous(sites) -> None:
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal((37, 29)) for _ in range(3))
    site = sites["a*b+c"]
    out = site(a, b, c)
    assert out.shape == (37, 29)
    assert out.flags.c_contiguous
    assert same_bits(out, a * b + c)
    assert site.stats()["fast"] == 1


def test_threads_give_identical_bits(sites) -> None:
    from ppy_numpy._runtime import num_threads, set_num_threads

    rng = np.random.default_rng(4)
    a, b, c = make_inputs(rng, 600_001, 3, special=0.01)
    before = num_threads()
    try:
        for t in (1, 2, 3):
            set_num_threads(t)
            with np.errstate(all="ignore"):
                for name in ("a*b+c", "where", "sin*2+exp"):
                    args = (a, b, c)[: len(EXPRS[name][0])]
                    assert same_bits(sites[name](*args), EXPRS[name][3](*args)), (name, t)
    finally:
        set_num_threads(before)
