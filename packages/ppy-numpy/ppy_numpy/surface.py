"""What a checker may ask of NumPy's surface: the attributes an ndarray has, the
reduction axes an array of known rank accepts and what indexing an array gives. No
NumPy import.

`NDARRAY_ATTRIBUTES` is `dir(numpy.ndarray)` of NumPy 2.4 plus what NumPy 1.26 still
had (`ptp`, `newbyteorder`, `itemset`), so a name is reported missing only when no
supported NumPy has it. Dunder names are Python's protocol and never reported.
"""

from __future__ import annotations

from typing import Any, Final

from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.plugin import CallContext
from ppy_core.ir.types import (
    I1,
    I64,
    NONE,
    Dim,
    OpaqueType,
    TensorType,
    TupleType,
    Type,
)

NDARRAY_ATTRIBUTES: Final = frozenset(
    (
        "T",
        "__array__",
        "all",
        "any",
        "argmax",
        "argmin",
        "argpartition",
        "argsort",
        "astype",
        "base",
        "byteswap",
        "choose",
        "clip",
        "compress",
        "conj",
        "conjugate",
        "copy",
        "ctypes",
        "cumprod",
        "cumsum",
        "data",
        "device",
        "diagonal",
        "dot",
        "dtype",
        "dump",
        "dumps",
        "fill",
        "flags",
        "flat",
        "flatten",
        "getfield",
        "imag",
        "item",
        "itemset",
        "itemsize",
        "mT",
        "max",
        "mean",
        "min",
        "nbytes",
        "ndim",
        "newbyteorder",
        "nonzero",
        "partition",
        "prod",
        "ptp",
        "put",
        "ravel",
        "real",
        "repeat",
        "reshape",
        "resize",
        "round",
        "searchsorted",
        "setfield",
        "setflags",
        "shape",
        "size",
        "sort",
        "squeeze",
        "std",
        "strides",
        "sum",
        "swapaxes",
        "take",
        "to_device",
        "tobytes",
        "tofile",
        "tolist",
        "trace",
        "transpose",
        "var",
        "view",
    )
)
#: reductions whose `axis` must name a dimension of their operand
AXIS_REDUCTIONS: Final = frozenset(
    (
        "sum",
        "prod",
        "mean",
        "max",
        "min",
        "amax",
        "amin",
        "std",
        "var",
        "argmax",
        "argmin",
        "cumsum",
        "cumprod",
        "any",
        "all",
    )
)


def missing_attribute(name: str) -> bool:
    """Whether no supported NumPy's ndarray has attribute `name`."""
    return not name.startswith("__") and name not in NDARRAY_ATTRIBUTES


def check_axis(ctx: CallContext, array: Any) -> None:
    """`np.sum(a, axis=k)` / `a.sum(axis=k)` over an array of known rank: report an axis
    it does not have (NumPy raises AxisError there)."""
    name = ctx.callee.rpartition(".")[2]
    axis = ctx.kw_constants.get("axis")
    if name not in AXIS_REDUCTIONS or not isinstance(axis, int) or isinstance(axis, bool):
        return
    if not isinstance(array, TensorType) or array.shape is None:
        return
    rank = len(array.shape)
    if -rank <= axis < rank:
        return
    ctx.report(
        Diagnostic(
            "E1007",
            f"{name}(axis={axis}) of an array of rank {rank}: it has no axis {axis}",
            f"use an axis in [{-rank}, {rank - 1}]",
            ctx.location,
        )
    )


#: the checker's types of index items that are no numbers (their classes' names)
SLICE: Final = OpaqueType("builtins.slice")
ELLIPSIS: Final = OpaqueType("types.EllipsisType")
_BASIC: Final = (I64, SLICE, NONE, ELLIPSIS)


def indexed(ctx: CallContext) -> Type | None:
    """`a[index]` of a NumPy array, as the checker asks it (`numpy.ndarray.__getitem__`;
    the compiler asks only the `subscript` hook, which leaves value subscripts alone, so
    no compiled site takes a view as a leaf it assumed). Basic indexing by ints, slices,
    None and `...` gives a view of the array's dtype, or one element (a scalar) when
    ints take every dimension and no `...` is given; advanced indexing (by int or bool
    arrays, lists, a bool) an array of its dtype. None where it depends on the rank and
    that is unknown, or the index is none of these; an index of more dimensions than a
    known rank is reported (NumPy raises IndexError)."""
    array = ctx.receiver
    if ctx.callee != "numpy.ndarray.__getitem__" or not isinstance(array, TensorType):
        return None
    if len(ctx.args) != 2 or ctx.kwargs:
        return None
    index = ctx.args[1]
    items = index.elements if isinstance(index, TupleType) else (index,)
    if not all(i in _BASIC or _advanced(i) for i in items) or items.count(ELLIPSIS) > 1:
        return None  # a float, a str, an unknown: NumPy raises or it is not known
    if array.shape is not None and _too_many(ctx, len(array.shape), items):
        return None
    if any(_advanced(i) for i in items):
        return TensorType(array.element, None, array.library)
    if array.shape is None:
        scalar = all(i == I64 for i in items)  # a scalar or not, by the rank
        return None if scalar else TensorType(array.element, None, array.library)
    return _basic(array, items)


def _advanced(item: Type) -> bool:
    if isinstance(item, TensorType):
        return item.element.kind in ("i64", "i32", "i1")
    if isinstance(item, OpaqueType):
        return item.name == "builtins.list"
    return item == I1  # `a[True]`: a new axis of length 1, as a mask


def _taken(item: Type) -> int:
    """How many of the array's dimensions an index item takes (at least)."""
    if isinstance(item, TensorType) and item.element.kind == "i1":
        return len(item.shape or ())  # a mask takes as many as it has (a 0-d one none)
    return 0 if item in (NONE, ELLIPSIS, I1) else 1


def _too_many(ctx: CallContext, rank: int, items: tuple[Type, ...]) -> bool:
    taken = sum(map(_taken, items))
    if taken <= rank:
        return False
    ctx.report(
        Diagnostic(
            "E1007",
            f"an array of rank {rank} indexed with {taken} indices: too many",
            f"index at most {rank} dimensions",
            ctx.location,
        )
    )
    return True


def _basic(array: TensorType, items: tuple[Type, ...]) -> Type:
    """Basic indexing of an array of known rank (not too many indices)."""
    shape = array.shape or ()
    taken = sum(map(_taken, items))
    if taken == len(shape) and all(i == I64 for i in items):
        return array.element  # one element: a NumPy scalar of the array's dtype
    out: list[Dim] = []
    dims = iter(shape)
    for item in items:
        if item == ELLIPSIS:
            out.extend(next(dims) for _ in range(len(shape) - taken))
        elif item == NONE:
            out.append(1)
        elif item == SLICE:
            next(dims)
            out.append(None)  # (its bounds are not known here)
        else:
            next(dims)
    out.extend(dims)
    return TensorType(array.element, tuple(out), array.library)
