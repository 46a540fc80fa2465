"""Proof, per NumPy build and CPU, of typed loops' in-place array updates (`C *= beta`).

A loops library's `ppy_loops_probe_inplace_<op>` runs the code its functions run for
`X op= s` (see ppy_llvm._loops_inplace: which NaN NumPy's inner loops return when
both operands are NaN depends on their SIMD path). Here it runs against NumPy's own
`X op= s` over many lengths (around the SIMD threshold), strides (negative, wide),
2-D layouts (C, Fortran, rows that do not abut) and values (NaN payloads on both
sides, signalling NaNs, infinities, -0.0, subnormals, overflow): the bytes and the
warnings must be NumPy's, or the library's functions run as Python.
"""

from __future__ import annotations

import ctypes
import warnings
from typing import Any

import numpy as np

OPS = {"add": "__iadd__", "sub": "__isub__", "mul": "__imul__", "truediv": "__itruediv__"}
UFUNCS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide"}
EVENTS = ("divide by zero", "overflow", "invalid value")
LENGTHS = (*range(1, 20), 31, 32, 33, 63, 64, 65, 100)
SEED = 20261202
_FN = ctypes.CFUNCTYPE(
    None,
    ctypes.c_void_p,
    *(ctypes.c_int64,) * 4,
    ctypes.c_double,
    ctypes.POINTER(ctypes.c_int64),
)
_verdicts: dict[str, str | None] = {}


def _nan(bits: int) -> float:
    return float(np.array([bits], np.uint64).view(np.float64)[0])


def _scalars() -> list[float]:
    return [
        _nan(0x7FF8000000000002),
        _nan(0x7FF0000000000005),  # signalling
        float("inf"),
        0.0,
        -0.0,
        1e300,
        5e-324,
        -1.5,
    ]


def _data(rng: Any, size: int) -> Any:
    pool = np.array(
        [
            *(_nan(0x7FF8000000000001), _nan(0xFFF0000000000004), np.inf, -np.inf),
            *(0.0, -0.0, 5e-324, 1e300, -1e-310, 2.0),
        ]
    )
    x = rng.standard_normal(size)
    picks = rng.random(size) < 0.5
    x[picks] = pool[rng.integers(0, len(pool), int(picks.sum()))]
    return x


def _layouts(rng: Any) -> list[tuple[Any, Any]]:
    """(base array, how to view it) pairs: each probe views a fresh copy of the base."""
    out: list[tuple[Any, Any]] = []
    for n in LENGTHS:
        for step in (1, 2, -1, 3):
            out.append((_data(rng, n * abs(step)), lambda a, step=step: a[::step]))
    for rows, cols in ((3, 3), (2, 5), (1, 9), (9, 1), (4, 4), (3, 12), (0, 3)):
        base = _data(rng, rows * cols).reshape(rows, cols)
        out += [(base, lambda a: a), (np.asfortranarray(base), lambda a: a)]
        wide = _data(rng, rows * cols * 2).reshape(rows, 2 * cols)
        out += [(wide, lambda a: a[:, ::2]), (wide, lambda a: a[:, ::-2])]  # rows that abut
    return out


def _flags_of(caught: list[Any], ufunc: str) -> int:
    bits = 0
    for w in caught:
        for event, name in enumerate(EVENTS):
            if str(w.message) == f"{name} encountered in {ufunc}":
                bits |= 1 << event
    return bits


def _prove(library: Any, ops: list[str], stride: int) -> str | None:
    rng = np.random.default_rng(SEED)
    layouts = _layouts(rng)
    for name, method in OPS.items():
        try:
            address = ctypes.cast(
                getattr(library, f"ppy_loops_probe_inplace_{name}"), ctypes.c_void_p
            )
        except AttributeError:
            continue  # this library updates no array with that op
        fn, k = _FN(address.value), ops.index(UFUNCS[name])
        for base, view_of in layouts:
            for s in _scalars():
                want = view_of(base.copy(order="K"))
                with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn"):
                    warnings.simplefilter("always")
                    getattr(want, method)(s)
                ours = view_of(base.copy(order="K"))
                shape = ours.shape if ours.ndim == 2 else (1, *ours.shape)
                strides = ours.strides if ours.ndim == 2 else (0, *ours.strides)
                flags = ctypes.c_int64(0)
                pointer = ours.__array_interface__["data"][0]
                fn(pointer, shape[0], strides[0], shape[1], strides[1], s, ctypes.byref(flags))
                got = sum(1 << e for e in range(3) if flags.value >> (e * stride + k) & 1)
                if want.tobytes() != ours.tobytes() or got != _flags_of(caught, UFUNCS[name]):
                    return (
                        f"x {method[2:-2]}= {s!r} over shape {want.shape}, strides "
                        f"{want.strides}: NumPy's bytes or warnings differ"
                    )
    return None


def proven(library: Any, data: Any, key: str) -> str | None:
    """None when the library's in-place updates give NumPy's bytes and warnings on
    every probe; else what differed (cached per library file)."""
    if key not in _verdicts:
        ops = [str(op) for op in data["flag_ops"]]
        _verdicts[key] = _prove(library, ops, int(data["flag_stride"]))
    return _verdicts[key]


__all__ = ["proven"]
