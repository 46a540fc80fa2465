"""Proof, per NumPy build and CPU, of typed loops' array statements (`C[i, :n] += s * x`).

A loops library's `ppy_loops_probe_vector_<op>` runs one NumPy ufunc call the way
its statements run every operation (ppy_llvm._loops_vector: which NaN NumPy's inner
loops return when both operands are NaN depends on the call's length, its strides
and whether it writes in place). Here each runs against NumPy's own call over
lengths around the SIMD threshold and long ones, contiguous, strided and broadcast-scalar
operands, fresh and in-place outputs, and values with NaN payloads on both sides,
signalling NaNs, infinities, -0.0, subnormals and overflow: the bytes and the
warnings must be NumPy's, or the library's functions run as Python.
"""

from __future__ import annotations

import ctypes
import warnings
from typing import Any

import numpy as np

UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide}
NAMES = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide"}
EVENTS = ("divide by zero", "overflow", "invalid value")
LENGTHS = (*range(1, 20), 23, 24, 25, 31, 32, 33, 64, 65, 100, 1003)
SEED = 20261228
_P = ctypes.c_void_p
_I = ctypes.c_int64
_FN = ctypes.CFUNCTYPE(None, _P, _I, _P, _I, _P, _I, _I, _I, ctypes.POINTER(ctypes.c_int64))
_verdicts: dict[str, str | None] = {}


def _nan(bits: int) -> float:
    return float(np.array([bits], np.uint64).view(np.float64)[0])


def _data(rng: Any, size: int) -> Any:
    pool = np.array(
        [
            *(_nan(0x7FF8000000000001), _nan(0xFFF8000000000004), _nan(0x7FF0000000000003)),
            *(np.inf, -np.inf, 0.0, -0.0, 5e-324, -1e-310, 1e300, 2.0),
        ]
    )
    x = rng.standard_normal(size)
    picks = rng.random(size) < 0.6
    x[picks] = pool[rng.integers(0, len(pool), int(picks.sum()))]
    return x


def _flags_of(caught: list[Any], ufunc: str) -> int:
    bits = 0
    for w in caught:
        for event, name in enumerate(EVENTS):
            if str(w.message) == f"{name} encountered in {ufunc}":
                bits |= 1 << event
    return bits


def _operand(rng: Any, n: int, step: int) -> Any:
    """A view of n elements (step 1 or 2), or a broadcast scalar (step 0)."""
    if step == 0:
        return np.float64(_data(rng, 1)[0])
    return _data(rng, n * step)[::step]


def _copy(x: Any) -> Any:
    """A copy of a view with the same stride (a scalar as itself)."""
    if not isinstance(x, np.ndarray):
        return x
    step = x.strides[0] // 8 or 1
    out = np.empty(x.size * step)[::step]
    out[...] = x
    return out


def _case(fn: Any, name: str, x: Any, y: Any, inplace: bool, k: int, stride: int) -> str | None:
    """One call both ways: None when the bytes and warnings agree."""
    ufunc = UFUNCS[name]
    want_x = _copy(x)
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
        warnings.simplefilter("always")
        want = ufunc(want_x, y, out=want_x) if inplace else ufunc(want_x, y)
    ours_x = _copy(x) if isinstance(x, np.ndarray) else np.array(x, ndmin=1)
    ours_y = np.array(y, ndmin=1) if not isinstance(y, np.ndarray) else y
    n = max(np.size(x), np.size(y))
    out = np.empty(n)
    flags = ctypes.c_int64(0)
    fn(
        out.ctypes.data,
        8,
        ours_x.ctypes.data,
        ours_x.strides[0] if isinstance(x, np.ndarray) else 0,
        ours_y.ctypes.data,
        ours_y.strides[0] if isinstance(y, np.ndarray) else 0,
        n,
        int(inplace),
        ctypes.byref(flags),
    )
    got = sum(1 << e for e in range(3) if flags.value >> (e * stride + k) & 1)
    mine = ours_x if inplace else out
    if np.asarray(want).tobytes() != np.ascontiguousarray(mine).tobytes():
        return f"{NAMES[name]} of {n} elements (in place {inplace}): NumPy's bytes differ"
    if got != _flags_of(caught, NAMES[name]):
        return f"{NAMES[name]} of {n} elements (in place {inplace}): NumPy's warnings differ"
    return None


def _prove(library: Any, ops: list[str], stride: int) -> str | None:
    rng = np.random.default_rng(SEED)
    for name in UFUNCS:
        try:
            address = ctypes.cast(getattr(library, f"ppy_loops_probe_vector_{name}"), _P)
        except AttributeError:
            return f"the library has no probe of its {NAMES[name]} statements"
        fn, k = _FN(address.value), ops.index(NAMES[name])
        for n in LENGTHS:
            for sx, sy in ((1, 1), (1, 0), (0, 1), (2, 1), (1, 2), (2, 0), (0, 2), (2, 2)):
                for inplace in (False, True):
                    if inplace and sx == 0:
                        continue  # a scalar is never the target
                    for _ in range(3 if n < 1000 else 1):  # long calls: one sample
                        x, y = _operand(rng, n, sx), _operand(rng, n, sy)
                        why = _case(fn, name, x, y, inplace, k, stride)
                        if why is not None:
                            return why
    return None


def proven(library: Any, data: Any, key: str) -> str | None:
    """None when the library's array statements give NumPy's bytes and warnings on
    every probe; else what differed (cached per library file)."""
    if key not in _verdicts:
        ops = [str(op) for op in data["flag_ops"]]
        _verdicts[key] = _prove(library, ops, int(data["flag_stride"]))
    return _verdicts[key]


__all__ = ["proven"]
