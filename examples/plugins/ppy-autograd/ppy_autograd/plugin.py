"""The `autograd` plugin: `autograd.numpy` calls named as the shared tensor ops.

Outside a gradient trace, `autograd.numpy.exp(x)` of an ndarray *is* `numpy.exp(x)`:
autograd's primitives unwrap nothing and call NumPy's ufunc. So a tree of them over
float64 arrays converges onto the same `tensor` ops NumPy's plugin uses, ppy-llvm
fuses it into one loop, and NumPy's runtime adapter guards it: an argument that is an
exact float64 ndarray takes the kernel; anything else — above all autograd's
`ArrayBox` while `grad` traces the function — runs the Python path, so gradients
come out exactly as autograd computes them.

This plugin types nothing of autograd's own (`grad`, `elementwise_grad`, boxes): a
call it does not name stays Python.
"""

from __future__ import annotations

import importlib.metadata as md
from collections.abc import Mapping
from typing import Any, Final

from ppy_core.interface.plugin import (
    NOT_CONSTANT,
    CallAnswer,
    CallContext,
    Converge,
    OperatorContext,
    Plugin,
)
from ppy_core.interface.specs import IntrinsicSpec
from ppy_core.ir.dialects.tensor import UNARY_FUNCTIONS
from ppy_core.ir.types import F64, I1, I64, UNKNOWN, ScalarType, TensorType, Type

NUMPY: Final = "numpy"  # the library of the arrays: its runtime adapter guards them
ARRAY: Final = TensorType(F64, None, NUMPY)
PREFIX: Final = "autograd.numpy."

#: autograd.numpy names -> the tensor op they are (the same ufunc as NumPy's)
UNARY: Final = {name: name for name in UNARY_FUNCTIONS if name != "erf"}  # no np.erf
SIGN: Final = {"negative": "neg", "abs": "abs", "absolute": "abs", "fabs": "abs"}
BINARY: Final = {
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
    "true_divide": "div",
    "maximum": "maximum",
    "minimum": "minimum",
}
COMPARE: Final = {
    "less": "lt",
    "less_equal": "le",
    "greater": "gt",
    "greater_equal": "ge",
    "equal": "eq",
    "not_equal": "ne",
}
OPERATORS: Final = {"Add": "add", "Sub": "sub", "Mult": "mul", "Div": "div"}
COMPARE_OPERATORS: Final = {"Lt": "lt", "LtE": "le", "Gt": "gt", "GtE": "ge"}


class AutogradPlugin(Plugin):
    name = "autograd"
    version = "1"
    modules = ("autograd",)

    def fingerprint(self) -> str:
        """`v1:autograd=VERSION`: autograd decides which ufunc each name calls."""
        try:
            import autograd  # noqa: F401  (the fingerprint may import the library)
        except ImportError:
            return f"v{self.version}:autograd=none"
        return f"v{self.version}:autograd={md.version('autograd')}"

    def detected(self) -> Mapping[str, str]:
        return {"autograd": self.fingerprint().rpartition("=")[2]}

    def speculative_array(self) -> Type | None:
        """Unannotated leaves may be float64 ndarrays: NumPy's guard checks each, so an
        ArrayBox (under `grad`) or a list runs Python."""
        return ARRAY

    def call(self, ctx: CallContext) -> CallAnswer | None:
        if _writes(ctx):
            return None  # out=...: autograd refuses it when tracing; leave it to Python
        converge = self.tensor_operation(ctx)
        if converge is None:
            return None
        name = ctx.callee.removeprefix(PREFIX)
        intrinsic = UNARY.get(name) or SIGN.get(name)
        return CallAnswer(converge.result, lowering=IntrinsicSpec(intrinsic) if intrinsic else None)

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        if not ctx.callee.startswith(PREFIX) or ctx.kwargs:
            return None
        name, args = ctx.callee.removeprefix(PREFIX), _typed(ctx.args, ctx.constants)
        result = _result(args)
        if result is None:
            return None
        if len(args) == 1 and name in UNARY:
            return Converge("tensor.unary", result, {"op": UNARY[name]})
        if len(args) == 1 and name in SIGN:
            return Converge(f"tensor.{SIGN[name]}", result)
        if len(args) == 2 and name in BINARY:
            return Converge(f"tensor.{BINARY[name]}", result)
        if len(args) == 2 and name in COMPARE:
            return Converge("tensor.compare", _bools(result), {"pred": COMPARE[name]})
        return None

    def operator(self, ctx: OperatorContext) -> Converge | Type | None:
        """Operators over the arrays autograd.numpy returns (asked only where no plugin
        claiming NumPy answered: a module that imports `autograd.numpy as np`)."""
        args = _typed(ctx.operands, ctx.constants)
        if not any(isinstance(t, TensorType) for t in args):
            return None  # Python numbers: Python's business
        result = _result(args)
        if result is None:
            return None
        if ctx.op == "USub":
            return Converge("tensor.neg", result)
        if ctx.op in OPERATORS:
            return Converge(f"tensor.{OPERATORS[ctx.op]}", result)
        if ctx.op in COMPARE_OPERATORS:
            return Converge("tensor.compare", _bools(result), {"pred": COMPARE_OPERATORS[ctx.op]})
        return None


def _writes(ctx: CallContext) -> bool:
    return "out" in ctx.kwargs and ctx.kw_constants.get("out", NOT_CONSTANT) is not None


def _typed(types: tuple[Type, ...], constants: tuple[Any, ...]) -> tuple[Type, ...]:
    """Operand types, with literal numbers (`-2.5`, unknown to the typer) typed."""
    out = list(types)
    for i, value in enumerate(constants[: len(out)]):
        if out[i] is UNKNOWN and isinstance(value, int | float) and not isinstance(value, bool):
            out[i] = F64 if isinstance(value, float) else I64
    return tuple(out)


def _result(args: tuple[Type, ...]) -> TensorType | None:
    """float64 arrays (or unknowns the guard checks) and Python numbers in, a float64
    array out; anything else — other dtypes, other libraries — is NumPy's business."""
    if not any(t is UNKNOWN or isinstance(t, TensorType) for t in args):
        return None  # numbers only: a numpy.float64 scalar, not a kernel
    for t in args:
        if isinstance(t, TensorType) and (t.library != NUMPY or t.element.kind != "f64"):
            return None
        if isinstance(t, ScalarType) and t.kind not in ("f64", "i64"):
            return None
        if not isinstance(t, TensorType | ScalarType) and t is not UNKNOWN:
            return None
    shapes = {t.shape for t in args if isinstance(t, TensorType) and t.shape is not None}
    return TensorType(F64, shapes.pop() if len(shapes) == 1 else None, NUMPY)


def _bools(t: TensorType) -> TensorType:
    return TensorType(I1, t.shape, t.library)
