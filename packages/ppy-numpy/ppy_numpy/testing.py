"""Copies of array arguments laid out exactly as the originals.

A typed loop's signature holds its arrays' layout class (C, F or strided), so a test
that hands a compiled function an F-ordered array or a strided view must hand it that
layout, not the C-ordered `a.copy()` of it. `layout_copies` copies each argument's
whole buffer (the bytes around a view too: an out-of-bounds read sees the same bytes
in both calls, an out-of-bounds write shows in `buffer_bytes`) and rebuilds the view on
it at the same offset, with the same shape, strides, alignment and writeable flag.
Arguments sharing a buffer share the copy, so aliasing is kept as well.

Test support for the NumPy plugin and the backends that compile for it (ppy-llvm's
tests import it too: its tox environment installs ppy-numpy); nothing at run time
imports it.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: the copy keeps each address modulo this (a cache line, wider than any vector load)
ALIGNMENT = 64


def _extent(a: np.ndarray) -> tuple[int, int]:
    """[low, high) byte addresses of `a`'s elements (empty at its data pointer)."""
    start = int(a.__array_interface__["data"][0])
    if a.size == 0:
        return start, start
    low = sum((n - 1) * s for n, s in zip(a.shape, a.strides, strict=True) if s < 0)
    high = sum((n - 1) * s for n, s in zip(a.shape, a.strides, strict=True) if s > 0)
    return start + low, start + high + a.itemsize


def _owner(a: np.ndarray) -> np.ndarray:
    """The last ndarray on `a`'s chain of bases (through as_strided's DummyArray)."""
    owner, base = a, a.base
    while base is not None:
        if isinstance(base, np.ndarray):
            owner = base
        base = getattr(base, "base", None)
    return owner


@dataclass(slots=True)
class Layouts:
    """The fresh buffers of one call's copies, keyed by the original's [low, high)."""

    buffers: dict[tuple[int, int], tuple[np.ndarray, int]] = field(default_factory=dict)

    def copy(self, a: np.ndarray) -> np.ndarray:
        """`a` on a fresh copy of its buffer: same shape, strides, offset, alignment."""
        low, high = _extent(_owner(a))
        a_low, a_high = _extent(a)
        if a.size and not (low <= a_low and a_high <= high):  # a view outside its owner
            low, high = a_low, a_high
        key = next((k for k in self.buffers if k[0] <= a_low and a_high <= k[1]), None)
        if key is None:
            key = (low, high)
            # room to put the copy's first byte at the original's address modulo ALIGNMENT
            raw = np.empty(high - low + ALIGNMENT, np.uint8)
            shift = (low - raw.ctypes.data) % ALIGNMENT
            ctypes.memmove(raw.ctypes.data + shift, low, high - low)
            self.buffers[key] = (raw, shift)
        raw, shift = self.buffers[key]
        start = int(a.__array_interface__["data"][0])
        fresh = np.ndarray(
            a.shape, a.dtype, buffer=raw, offset=shift + start - key[0], strides=a.strides
        )
        fresh.flags.writeable = bool(a.flags.writeable)
        if type(a) is not np.ndarray:
            fresh = fresh.view(type(a))
        assert_same_layout(fresh, a)
        return fresh

    def buffer_bytes(self) -> list[bytes]:
        """Every copied buffer's bytes, those around the views included."""
        return [
            raw[shift : shift + high - low].tobytes()
            for (low, high), (raw, shift) in self.buffers.items()
        ]


def layout_copies(args: Sequence[Any]) -> tuple[list[Any], Layouts]:
    """`args` with every ndarray replaced by its `Layouts.copy`; the copies' buffers."""
    layouts = Layouts()
    copies = [layouts.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    return copies, layouts


def layout_of(a: np.ndarray) -> tuple[Any, ...]:
    """What a call can tell of `a`'s layout: shape, strides, dtype, the C/F/aligned and
    writeable flags, and its address modulo ALIGNMENT."""
    f = a.flags
    address = int(a.__array_interface__["data"][0]) % ALIGNMENT
    return (
        a.shape,
        a.strides,
        a.dtype.str,
        f.c_contiguous,
        f.f_contiguous,
        f.aligned,
        f.writeable,
        address,
        type(a),
    )


def assert_same_layout(copy: np.ndarray, original: np.ndarray) -> None:
    """`copy` is laid out as `original` and holds the same bytes."""
    assert layout_of(copy) == layout_of(original), (layout_of(copy), layout_of(original))
    assert copy.tobytes() == original.tobytes()
