"""Proof, per NumPy build and CPU, of typed loops' masked means (`X[m].mean()`).

A loops library holding `loops.masked_reduce` exports `ppy_loops_probe_pairwise(double
*a, int64 n)`: +0.0 plus the pairwise sum its means use (ppy_llvm._loops_masked).
Here it runs against NumPy's own `np.add.reduce` and `ndarray.mean` of contiguous
arrays at every length up to 300 and around the sum's blocks (multiples of 8, 128,
the halving points above), of values mixing signs, magnitudes from subnormal to
1e300 and -0.0: the sums' bytes and the means' (the sum over the count) must be
NumPy's, or the library's functions run as Python. The function leaves inf and NaN
sums to Python, so only finite ones are compared.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

LENGTHS = (*range(301), 383, 384, 385, 511, 512, 513, 1000, 1031, 2049, 4099, 65537)
SEED = 20261201
_FN = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p, ctypes.c_int64)
_verdicts: dict[str, str | None] = {}


def _data(rng: Any, n: int) -> Any:
    """Magnitudes far apart, so that a different order of additions rounds otherwise."""
    pool = np.array([0.0, -0.0, 5e-324, -1e-310, 1e300, -1e300, 1e16, -1e16, 1.0, 3.0])
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, n)
    picks = rng.random(n) < 0.3
    x[picks] = pool[rng.integers(0, len(pool), int(picks.sum()))]
    return x


def _prove(library: Any) -> str | None:
    try:
        fn = _FN(ctypes.cast(library.ppy_loops_probe_pairwise, ctypes.c_void_p).value)
    except AttributeError:
        return "the library has no probe of its pairwise sum"
    rng = np.random.default_rng(SEED)
    for n in LENGTHS:
        for trial in range(4 if n < 1000 else 1):
            x = _data(rng, n) if trial else np.full(n, -0.0)  # first: all -0.0 (+0.0 seed)
            with np.errstate(all="ignore"):
                want = np.add.reduce(x)
                got = fn(x.ctypes.data, n)
                if not np.isfinite(want):
                    continue  # the function leaves these to Python
                if np.float64(got).tobytes() != want.tobytes():
                    return f"the sum of {n} elements differs from NumPy's"
                if n and np.float64(got / n).tobytes() != x.mean().tobytes():
                    return f"the mean of {n} elements differs from NumPy's"
    return None


def proven(library: Any, key: str) -> str | None:
    """None when the library's pairwise sum gives NumPy's sums and means on every
    probe; else what differed (cached per library file)."""
    if key not in _verdicts:
        _verdicts[key] = _prove(library)
    return _verdicts[key]


__all__ = ["proven"]
