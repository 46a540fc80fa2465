"""An expression site becomes a func.func of shared ops over its leaves."""

from __future__ import annotations

import ast

from ppy_core.compiler.frontend.sites import ExprSite
from ppy_core.compiler.frontend.syntax import literal_value
from ppy_core.diagnostics import InternalError
from ppy_core.ir.core import DialectRegistry, Value
from ppy_core.ir.dialects.builtin import ConstantOp, FuncOp, ReturnOp
from ppy_core.ir.types import F64, I1, UNKNOWN, ColumnType, ScalarType, TensorType, Type


def leaf_type(t: Type) -> Type:
    """A leaf's argument type: its recorded type (`ExprSite.leaf_types`, already the
    guess where one was made: `speculate.guessed_leaf`), a Python number as float64."""
    if isinstance(t, TensorType | ColumnType):
        return t
    if isinstance(t, ScalarType) and t.kind in ("f64", "i64"):
        return F64
    if isinstance(t, ScalarType) and t.kind == "i1":
        return I1
    raise InternalError(f"leaf of type {t} recorded without a guess")


def build_site_ir(site: ExprSite, registry: DialectRegistry) -> FuncOp:
    """The site as `func.func @<id>(leaves...) -> (result)`, one op per tree node."""
    arg_types = [leaf_type(t) for t in site.leaf_types]
    names = [leaf.id if isinstance(leaf, ast.Name) else None for leaf in site.leaves]
    func = FuncOp.build(site.id, arg_types, [], names)
    values: dict[int, Value] = {
        id(leaf): arg for leaf, arg in zip(site.leaves, func.args, strict=True)
    }
    values.update({node_id: func.args[index] for node_id, index in site.repeats.items()})

    def emit(node: ast.expr) -> Value:
        if id(node) in values:
            return values[id(node)]
        literal = literal_value(node)
        if literal is not None:
            const = func.entry.append(ConstantOp([], [F64], {"value": literal}))
            return const.result
        converge = site.conv.get(id(node))
        if converge is None:
            raise InternalError(
                f"site {site.id}: node at line {node.lineno} is neither a leaf nor converged"
            )
        operands = [emit(child) for child in site.operands[id(node)]]
        cls = registry.lookup(converge.op)
        if cls is None:
            raise InternalError(f"site {site.id}: no operation named {converge.op}")
        op = func.entry.append(cls(operands, [converge.result], dict(converge.attributes)))
        values[id(node)] = op.result
        return op.result

    out = emit(site.node)
    func.entry.append(ReturnOp([out]))
    func.attributes["result_types"] = (out.type,)
    if out.type is UNKNOWN:
        raise InternalError(f"site {site.id}: result type unknown")
    return func


__all__ = ["build_site_ir", "leaf_type"]
