"""Reductions in NumPy's order: pairwise sum (seeded with +0.0), sequential prod,
mean = sum / n, max/min (NaN or +-0 results are handed back to NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import EXPRS, same_bits

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

LENGTHS = [*range(1, 10), 127, 128, 129, 255, 256, 257, 1000, 1_000_003]
REDUCTIONS = [
    "sum",
    "prod",
    "mean",
    "max",
    "min",
    "sum(a*b)",
    "max(a-b)",
    "prod(a*b)",
    "sum(sin(a))",
    "min(exp(a))",
]


def _data(rng: np.random.Generator, n: int, name: str) -> np.ndarray:
    if "exp" in name:
        return rng.uniform(-5, 5, n)
    if "prod" in name:
        return 1.0 + rng.standard_normal(n) * 1e-3
    return rng.standard_normal(n) * 10.0 ** rng.uniform(-5, 5, n)


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_bitwise(sites, name: str) -> None:
    site, ref = sites[name], EXPRS[name][3]
    rng = np.random.default_rng(5)
    for n in LENGTHS:
        args = [_data(rng, n, name) for _ in EXPRS[name][0]]
        with np.errstate(over="ignore"):
            got, want = site(*args), ref(*args)
        assert type(got) is type(want), (name, n)
        assert same_bits(got, want), (name, n, got, want)
    assert site.stats()["fast"] == len(LENGTHS)


def test_numpy_sum_is_one_pairwise_call_seeded_with_zero() -> None:
    """Established facts: whole-array pairwise sum (no 8192-element blocks), +0.0 seed."""
    assert np.signbit(np.sum(np.full(200, -0.0))) == False  # noqa: E712  (seed +0.0 + (-0.0))
    assert np.signbit(np.sum(np.array([-0.0]))) == False  # noqa: E712


def test_two_dimensional_and_empty(sites) -> None:
    rng = np.random.default_rng(6)
    a = rng.standard_normal((301, 300))
    for name in ("sum", "mean", "max", "prod"):
        site = sites[name]
        assert same_bits(site(a), EXPRS[name][3](a))
        assert site.stats()["fast"] == 1
    site = sites["sum"]
    assert same_bits(site(np.empty(0)), np.sum(np.empty(0)))
    assert site.stats()["fallback"] == {"guard: empty": 1}


def test_zero_and_nan_results_rerun_numpy(sites) -> None:
    site = sites["max"]
    for x in (
        np.array([0.0, -0.0] * 9),
        np.array([-0.0, 0.0] * 9),
        np.array([1.0, np.nan, -np.nan, 2.0]),
    ):
        assert same_bits(site(x), np.max(x))
    assert site.stats()["fallback"] == {"result: nan/zero": 3}
    s = sites["sum"]
    assert same_bits(s(np.full(300, -0.0)), np.sum(np.full(300, -0.0)))
    assert s.stats()["fast"] == 1


def test_threaded_pairwise_identical(sites) -> None:
    from ppy_numpy._runtime import num_threads, set_num_threads

    rng = np.random.default_rng(7)
    a, b = (
        rng.standard_normal(2_000_003) * 10.0 ** rng.uniform(-8, 8, 2_000_003) for _ in range(2)
    )
    before = num_threads()
    try:
        for t in (1, 2, 4):
            set_num_threads(t)
            for name in ("sum(a*b)", "mean", "max(a-b)", "sum(sin(a))"):
                args = (a, b)[: len(EXPRS[name][0])]
                assert same_bits(sites[name](*args), EXPRS[name][3](*args)), (name, t)
    finally:
        set_num_threads(before)
