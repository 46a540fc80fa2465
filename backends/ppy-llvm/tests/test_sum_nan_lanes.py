"""The pairwise sum's eight accumulators run without their NaN-order selects and run
again with them where a lane ends NaN (`_kernels._accumulate`). The reduction entry
itself, called on arrays whose accumulator lanes add two NaNs of different bits, one
NaN, inf - inf or none, gives the bits of the kernel's order with x86's first-NaN
rule (a model below: NumPy's pairwise sum, the kernel's pair orders) at every block
shape, the bits it gave with a select on every step; through the dispatcher every
call equals NumPy's, fast where no NaN sends it back."""

from __future__ import annotations

import ctypes
import struct

import numpy as np
import pytest

from conftest import EXPRS, same_bits, spec_of

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

#: quiet NaNs of either sign and two payloads: which one a lane keeps shows the order
PAYLOADS = np.array(
    [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF800000000ABCD, 0xFFF80000DEAD0001],
    dtype=np.uint64,
).view(np.float64)
#: one block (9..128), two blocks (129..256), recursions of two and more levels
LENGTHS = (10, 16, 17, 127, 128, 129, 200, 256, 257, 1000, 4099)
ENTRY = ctypes.CFUNCTYPE(
    ctypes.c_double,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_int64,
    ctypes.c_int64,
    ctypes.c_void_p,
)


def _bits(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def _add(a: float, b: float) -> float:
    """x86's addsd: a NaN first source is the result, quieted; else the second's."""
    for v in (a, b):
        if v != v:
            return struct.unpack("<d", struct.pack("<Q", _bits(v) | 1 << 51))[0]
    return a + b


def _model(x: list[float], lo: int, n: int, top: bool) -> float:
    """The kernel's pairwise sum of x[lo:lo+n] (`_kernels._emit_pairwise`)."""
    if n < 8:
        acc = 0.0
        for v in x[lo : lo + n]:
            acc = _add(acc, v)
        return acc
    if n <= 128:
        r = x[lo : lo + 8]
        n8 = n & -8
        for j in range(8, n8, 8):
            r = [_add(r[k], x[lo + j + k]) for k in range(8)]
        pairs = ((0, 1), (3, 2), (4, 5), (6, 7)) if top else ((0, 1), (2, 3), (4, 5), (6, 7))
        s = [_add(r[i], r[j]) for i, j in pairs]
        res = _add(_add(s[0], s[1]), _add(s[2], s[3]))
        for v in x[lo + n8 : lo + n]:
            res = _add(res, v)
        return res
    n2 = (n >> 1) & -8
    left, right = _model(x, lo, n2, not top), _model(x, lo + n2, n - n2, not top)
    return _add(left, right) if top else _add(right, left)


def _cases(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    plain = rng.uniform(-3.0, 3.0, n)
    one = plain.copy()
    one[rng.integers(8, n)] = PAYLOADS[2]  # one NaN after the first vector
    same_lane = plain.copy()  # two different NaNs reach one accumulator lane
    lane = int(rng.integers(0, min(8, n - 9)))  # n >= 10: lane + 9 < n
    same_lane[lane + 8], same_lane[min(lane + 16, n - 1)] = PAYLOADS[2], PAYLOADS[3]
    first = plain.copy()  # a NaN in the first vector, another later in its lane
    first[lane], first[min(lane + 16, n - 1)] = PAYLOADS[1], PAYLOADS[3]
    infs = plain.copy()  # inf - inf makes the default NaN, then a payload joins
    infs[8:10] = (np.inf, -np.inf)
    infs[-1] = PAYLOADS[2]
    dense = plain.copy()
    mask = rng.random(n) < 0.3
    dense[mask] = PAYLOADS[rng.integers(0, 4, int(mask.sum()))]
    return [plain, one, same_lane, first, infs, dense]


@pytest.fixture(scope="module")
def entry() -> tuple[object, object]:
    from ppy_core.runtime.abi import kernel_address
    from ppy_llvm import compile_specs

    (kernel,) = compile_specs([spec_of("sum")], "sum_nan_lanes")
    found = kernel_address(kernel)
    assert found is not None
    return ENTRY(found[0]), found[1]


def test_entry_keeps_the_first_nan_of_each_lane(entry) -> None:
    fn = entry[0]
    rng = np.random.default_rng(28)
    for n in LENGTHS:
        for x in _cases(rng, n):
            arrays = (ctypes.c_void_p * 1)(x.ctypes.data)
            scalars = (ctypes.c_double * 4)()
            with np.errstate(all="ignore"):
                got = fn(
                    ctypes.cast(arrays, ctypes.c_void_p),
                    ctypes.cast(scalars, ctypes.c_void_p),
                    0,
                    n,
                    None,
                )
            want = _model(x.tolist(), 0, n, True)
            assert _bits(got) == _bits(want), (n, hex(_bits(got)), hex(_bits(want)))
            if not np.isnan(want):
                assert _bits(0.0 + got) == _bits(float(np.sum(x)))  # NumPy's own


@pytest.mark.parametrize("name", ["sum", "sum(a*b)"])
def test_dispatched_sums_are_numpys(sites, name: str) -> None:
    site, ref = sites[name], EXPRS[name][3]
    rng = np.random.default_rng(29)
    plain = 0
    for n in LENGTHS:
        for x in _cases(rng, n):
            args = [x] if name == "sum" else [x, rng.uniform(0.5, 2.0, n)]
            with np.errstate(all="ignore"):
                got, want = site(*args), ref(*args)
            assert same_bits(got, want), (name, n, got, want)
            plain += not np.isnan(want)
    assert site.stats()["fast"] >= plain
