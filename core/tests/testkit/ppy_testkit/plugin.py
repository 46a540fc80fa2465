"""The `vecmath` plugin: Vec arithmetic and vecmath.sin/total as tensor ops."""

from __future__ import annotations

from collections.abc import Mapping

from ppy_core.interface.plugin import CallContext, Converge, OperatorContext, Plugin
from ppy_core.ir.types import F64, ScalarType, TensorType, Type

VEC = TensorType(F64, (None,), "vecmath")
_BINARY = {"Add": "tensor.add", "Sub": "tensor.sub", "Mult": "tensor.mul", "Div": "tensor.div"}


def _vec_or_scalar(t: Type) -> bool:
    return t == VEC or (isinstance(t, ScalarType) and t.kind in ("f64", "i64"))


class VecmathPlugin(Plugin):
    name = "vecmath"
    modules = ("vecmath",)
    version = "1"

    def fingerprint(self) -> str:
        return "v1:vecmath=test"

    def external_types(self) -> Mapping[str, Type]:
        return {"vecmath.Vec": VEC}

    def operator(self, ctx: OperatorContext) -> Converge | None:
        if ctx.op == "USub" and ctx.operands == (VEC,):
            return Converge("tensor.neg", VEC)
        if ctx.op in _BINARY and VEC in ctx.operands and all(map(_vec_or_scalar, ctx.operands)):
            return Converge(_BINARY[ctx.op], VEC)
        return None

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        if ctx.callee == "vecmath.sin" and len(ctx.args) == 1:
            return Converge("tensor.unary", VEC, {"op": "sin"})
        if ctx.callee == "vecmath.total" and len(ctx.args) == 1:
            return Converge("tensor.reduce", F64, {"op": "add"})
        return None
