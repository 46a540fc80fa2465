"""What a checker may ask of NumPy's surface: the attributes an ndarray has and the
reduction axes an array of known rank accepts. Tables only; no NumPy import.

`NDARRAY_ATTRIBUTES` is `dir(numpy.ndarray)` of NumPy 2.4 plus what NumPy 1.26 still
had (`ptp`, `newbyteorder`, `itemset`), so a name is reported missing only when no
supported NumPy has it. Dunder names are Python's protocol and never reported.
"""

from __future__ import annotations

from typing import Any, Final

from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.plugin import CallContext
from ppy_core.ir.types import TensorType

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
