"""A max/min's vector loops on AVX-512 take vrange (`_kernels._range_intrinsic`), which
passes over a quiet NaN: the NaN flag beside it (one unordered compare for two
vectors in the chained loop) must see a NaN at every position of every loop (the
four chains, the one-vector loop, the scalar tail), so NumPy answers the call; a
row of numbers stays the kernel's with NumPy's bits, its extremum anywhere."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import EXPRS, same_bits

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

#: below one vector, one vector, the chained loop (4 x 8 float64 lanes) and beyond
LENGTHS = (1, 7, 8, 9, 31, 32, 33, 64, 71, 130)


@pytest.mark.parametrize("name", ["max", "min", "max(a-b)", "min(exp(a))"])
def test_a_nan_anywhere_is_numpys(sites, name: str) -> None:
    site, ref = sites[name], EXPRS[name][3]
    rng = np.random.default_rng(31)
    calls = 0
    for n in LENGTHS:
        for at in range(n):
            args = [rng.uniform(0.5, 2.0, n) for _ in EXPRS[name][0]]
            args[0][at] = (np.nan, -np.nan)[at % 2]
            with np.errstate(all="ignore"):
                got, want = site(*args), ref(*args)
            assert same_bits(got, want), (name, n, at, got, want)
            calls += 1
    stats = site.stats()
    assert stats["fast"] == 0
    assert stats["fallback"] == {"result: nan/zero": calls}


@pytest.mark.parametrize("name", ["max", "min"])
def test_the_extremum_anywhere_is_the_kernels(sites, name: str) -> None:
    site, ref = sites[name], EXPRS[name][3]
    rng = np.random.default_rng(32)
    calls = 0
    for n in LENGTHS:
        for at in range(n):
            x = rng.uniform(0.5, 2.0, n)
            x[at] = 9.0 if name == "max" else 0.25
            assert same_bits(site(x), ref(x)), (name, n, at)
            calls += 1
    assert site.stats()["fast"] == calls
