"""NumPy's own BLAS `ddot` for typed loops' `np.dot` / `@`, resolved and proven per build.

A loops library that computes `np.dot(u, v)` or `u @ v` calls the routine NumPy
calls for those operands (`cblas_ddot` of the BLAS NumPy is linked with; OpenBLAS
as `scipy_cblas_ddot64_` in NumPy 2.x wheels). It is looked up through NumPy's
`_multiarray_umath` module, so the dynamic linker answers with the very library
NumPy loaded, never another; only a 64-bit-int (ILP64) routine is taken, since
with 32-bit ints NumPy splits long vectors into chunks the library does not.

Before a library's functions run, `proven(library, address)` runs its exported
probes (`ppy_loops_probe_dot` / `_matmul`, the code its loops call) against
NumPy's `np.dot` and `@` on many lengths (0, 1, around the routine's unrolling),
strides (negative, zero, unaligned data), and values (NaN payloads, signalling
NaNs, infinities, -0.0, subnormals, overflowing products): the bits and the
warnings must be NumPy's, or the functions run as Python.
"""

from __future__ import annotations

import ctypes
import warnings
from typing import Any

import numpy as np

#: ILP64 names of cblas_ddot, most specific first
DDOT_NAMES = ("scipy_cblas_ddot64_", "cblas_ddot64_")
LENGTHS = (0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000)
STRIDES = ((1, 1), (2, 1), (1, 3), (-1, 1), (1, -2), (0, 1), ("u", 1), (1, "u"))
EVENTS = ("divide by zero", "overflow", "invalid value")
KINDS = ("dot", "matmul")
SEED = 20261201
_FN = ctypes.CFUNCTYPE(
    ctypes.c_double,
    ctypes.c_int64,
    ctypes.c_void_p,
    ctypes.c_int64,
    ctypes.c_void_p,
    ctypes.c_int64,
    ctypes.POINTER(ctypes.c_int64),
)
_verdicts: dict[tuple[str, int], str | None] = {}


def numpy_ddot() -> int | None:
    """The address of the ILP64 `cblas_ddot` NumPy itself calls, or None."""
    from numpy._core import _multiarray_umath as umath

    try:
        handle = ctypes.CDLL(umath.__file__)  # already loaded: its own handle
    except OSError:
        return None
    for name in DDOT_NAMES:
        try:
            return ctypes.cast(getattr(handle, name), ctypes.c_void_p).value
        except AttributeError:
            continue
    return None


def proven(library: Any, address: int, data: Any, key: str) -> str | None:
    """None when the library's dot code, calling `address`, gives NumPy's bits and
    warnings on every probe; else what differed. Cached per (key, address); `data`:
    the unit's record (its routine slot, and where its flags put each op's events)."""
    slot = ctypes.c_void_p.in_dll(library, str(data["blas"]["ddot"]))
    before = slot.value
    slot.value = address
    if (key, address) not in _verdicts:
        ops = [str(op) for op in data["flag_ops"]]
        bits = {kind: (ops.index(kind), int(data["flag_stride"])) for kind in KINDS}
        _verdicts[key, address] = _prove(library, bits)
    if _verdicts[key, address] is not None:
        slot.value = before  # functions already loaded keep the routine they were proven with
    return _verdicts[key, address]


def _values(rng: Any, n: int, mode: int) -> Any:
    x = rng.standard_normal(n)
    if mode == 1:  # specials sprinkled in
        specials = np.array(
            [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -1e-310, 1e300, -1e300]
        )
        payloads = np.array([0x7FF8000000000001, 0x7FF0000000000002, 0xFFF8000000000003])
        nans = payloads.astype(np.uint64).view(np.float64)
        picks = rng.random(n) < 0.3
        pool = np.concatenate([specials, nans])
        x[picks] = pool[rng.integers(0, len(pool), int(picks.sum()))]
    elif mode == 2:  # signed zeros and subnormals only: exact cancellations, -0.0 sums
        x = rng.choice(np.array([0.0, -0.0, 5e-324, -5e-324, 2.2e-308]), n)
    elif mode == 3:  # products that overflow, or cancel to inf - inf
        x = rng.choice(np.array([1e200, -1e200, 1e160]), n)
    return x


def _view(rng: Any, n: int, stride: Any, mode: int) -> Any:
    """A length-n view with the given element stride ("u": unaligned data)."""
    if stride == "u":
        raw = np.zeros(8 * n + 1, np.uint8)[1:]
        view = raw.view(np.float64) if n else np.zeros(0)
        view[:] = _values(rng, n, mode)
        return view
    if stride == 0:
        return np.broadcast_to(_values(rng, 1, mode), (n,))
    base = _values(rng, max(1, n * abs(stride)), mode)
    return base[::stride][:n]


def _numpy(kind: str, u: Any, v: Any) -> tuple[bytes, int]:
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
        warnings.simplefilter("always")
        r = np.dot(u, v) if kind == "dot" else u @ v
    bits = 0
    for w in caught:
        text = str(w.message)
        for event, name in enumerate(EVENTS):
            if text == f"{name} encountered in {kind}":
                bits |= 1 << event
    return np.float64(r).tobytes(), bits


def _ours(fn: Any, u: Any, v: Any, where: tuple[int, int]) -> tuple[bytes, int]:
    flags = ctypes.c_int64(0)
    r = fn(
        len(u),
        u.__array_interface__["data"][0],
        u.strides[0],
        v.__array_interface__["data"][0],
        v.strides[0],
        ctypes.byref(flags),
    )
    bits = 0
    for event in range(len(EVENTS)):
        if flags.value >> (event * where[1] + where[0]) & 1:
            bits |= 1 << event
    return np.float64(r).tobytes(), bits


def _prove(library: Any, bits: dict[str, tuple[int, int]]) -> str | None:
    rng = np.random.default_rng(SEED)
    for kind in KINDS:
        try:
            address = ctypes.cast(getattr(library, f"ppy_loops_probe_{kind}"), ctypes.c_void_p)
        except AttributeError:
            continue  # the library's functions make no such call
        fn = _FN(address.value)
        for n in LENGTHS:
            for sa, sb in STRIDES:
                for mode in (0, 1, 1, 2, 3):
                    u, v = _view(rng, n, sa, mode), _view(rng, n, sb, mode)
                    want, got = _numpy(kind, u, v), _ours(fn, u, v, bits[kind])
                    if want != got:
                        return (
                            f"{kind} of length {n}, strides ({sa}, {sb}): NumPy gives "
                            f"{want[0].hex()} (warnings {want[1]}), the routine {got[0].hex()} "
                            f"(warnings {got[1]})"
                        )
    return None


__all__ = ["DDOT_NAMES", "numpy_ddot", "proven"]
