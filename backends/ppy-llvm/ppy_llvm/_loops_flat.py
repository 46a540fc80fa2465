"""Typed loops: flat views of array statements (`loops.vector` views "ff", every axis
"f"): a whole array of rank 2 or more as one vector over its buffer.

NumPy runs each operation of `imgOut[:] = c2 * (y1 + y2)` over C-contiguous 2-D
arrays of one shape as a single inner-loop call over all their elements (its
iterator coalesces the axes), so the statement is the 1-D one over the flat buffers
(`_loops_vector`: each call's NaN rule by position in that call, its warnings). That
holds only where the arrays are C-contiguous and of one shape: `flat_entry_checks`
returns LAYOUT on entry otherwise (Python runs the call; NumPy broadcasts or raises).
"""

from __future__ import annotations

from typing import Any

from ._loops_inplace import LAYOUT


def is_flat(view: str) -> bool:
    return bool(view) and set(view) == {"f"}


def flat_take(host: Any, array: Any) -> tuple[Any, Any, Any]:
    """(i8* of the first element, the element count, the byte stride 8)."""
    data, shape, _ = host.arrays[id(array)]
    size = host.i64(1)
    for dim in shape:
        size = host.b.mul(size, dim)
    return data, size, host.i64(8)


def flat_entry_checks(host: Any) -> None:
    """Before anything runs: LAYOUT unless, per array statement with flat views, its
    arrays all have the first one's shape and are C-contiguous (NumPy's flag: strides
    of the row-major layout, an axis of length 1 or an empty array saying nothing)."""
    b_ = host.b
    ok, any_flat = host.i1(1), False
    for op in host.func.walk():
        if op.name != "loops.vector":
            continue
        views = op.attributes["views"]
        arrays = [op.operands[k] for k, view in enumerate(views) if is_flat(view)]
        if not arrays:
            continue
        any_flat = True
        first = host.arrays[id(arrays[0])][1]
        for array in arrays:
            _, shape, strides = host.arrays[id(array)]
            for a, b in zip(shape, first, strict=True):
                ok = b_.and_(ok, b_.icmp_signed("==", a, b))
            if not host.contiguous:  # else strides come from the shape: row-major
                ok = b_.and_(ok, _c_contiguous(host, shape, strides))
    if any_flat:
        with b_.if_then(b_.not_(ok), likely=False):
            host.finish(LAYOUT)


def _c_contiguous(host: Any, shape: list[Any], strides: list[Any]) -> Any:
    b_, i64 = host.b, host.i64
    ok, empty, expected = host.i1(1), host.i1(0), i64(8)
    for dim, stride in zip(reversed(shape), reversed(strides), strict=True):
        fits = b_.or_(b_.icmp_signed("==", dim, i64(1)), b_.icmp_signed("==", stride, expected))
        ok = b_.and_(ok, fits)
        empty = b_.or_(empty, b_.icmp_signed("==", dim, i64(0)))
        expected = b_.mul(expected, dim)
    return b_.or_(ok, empty)


__all__ = ["flat_entry_checks", "flat_take", "is_flat"]
