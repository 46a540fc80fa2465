"""The checker's typer: the compiler's `Typer`, asking the same plugins, plus what a
checker must also see — the standard library from typeshed, builtins, and the
expression kinds the compiler never needs typed (strings, displays, comparisons,
subscripts). Compilation keeps its own narrower typer; what the plugins answer is the
same in both, because both ask them through one `Oracle`."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Mapping
from dataclasses import dataclass, field

from ppy_core.compiler.check import stdlib
from ppy_core.compiler.frontend.typer import Typer
from ppy_core.interface.plugin import AttributeContext, Converge, SubscriptContext
from ppy_core.ir.types import (
    F64,
    I1,
    I64,
    NONE,
    UNKNOWN,
    OpaqueType,
    ScalarType,
    TensorType,
    TupleType,
    Type,
)

STR = OpaqueType("builtins.str")
BYTES = OpaqueType("builtins.bytes")
DISPLAYS: Mapping[type[ast.expr], Type] = {
    ast.JoinedStr: STR,
    ast.List: OpaqueType("builtins.list"),
    ast.ListComp: OpaqueType("builtins.list"),
    ast.Dict: OpaqueType("builtins.dict"),
    ast.DictComp: OpaqueType("builtins.dict"),
    ast.Set: OpaqueType("builtins.set"),
    ast.SetComp: OpaqueType("builtins.set"),
    ast.GeneratorExp: OpaqueType("builtins.generator"),
    ast.Lambda: OpaqueType("builtins.function"),
}
_BUILTINS = frozenset(dir(builtins))
_CLASSES = frozenset(n for n in _BUILTINS if isinstance(getattr(builtins, n), type))


@dataclass(slots=True)
class CheckTyper(Typer):
    """`Typer` with the standard library and every expression kind typed."""

    classes: Mapping[str, str] = field(default_factory=dict)  # local class -> qualname
    functions: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)

    def qualname(self, node: ast.expr) -> str | None:
        name = Typer.qualname(self, node)
        if name is not None:
            return name
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if (
            isinstance(node, ast.Name)
            and node.id in _BUILTINS
            and node.id not in self.env
            and node.id not in self.globals
        ):
            return ".".join([f"builtins.{node.id}", *reversed(parts)])
        return None

    def annotation(self, node: ast.expr | None) -> Type:
        found = Typer.annotation(self, node)
        if found is not UNKNOWN or node is None:
            return found
        target = node.value if isinstance(node, ast.Subscript) else node
        name = self.qualname(target)
        if name is not None and name.startswith("builtins.") and name[9:] in _CLASSES:
            return OpaqueType(name)  # `str`, `list[int]`: the class (elements not checked)
        if name in self.classes.values():
            return OpaqueType(name)
        return UNKNOWN

    def module_name(self, node: ast.expr) -> bool:
        """Whether `node` names an imported module (or a name inside one)."""
        return isinstance(node, ast.Name | ast.Attribute) and Typer.qualname(self, node) is not None

    def expr(self, node: ast.expr, conv: Mapping[int, Converge]) -> Type:
        found = Typer.expr(self, node, conv)
        if found is not UNKNOWN:
            return found
        if isinstance(node, ast.Constant):
            return (
                STR
                if isinstance(node.value, str)
                else BYTES
                if isinstance(node.value, bytes)
                else NONE
                if node.value is None
                else UNKNOWN
            )
        if type(node) in DISPLAYS:
            return DISPLAYS[type(node)]
        if isinstance(node, ast.Name) and node.id not in self.env:
            if node.id in self.functions:
                return OpaqueType("builtins.function")  # a function of this module, as a value
            if node.id in self.classes:
                return OpaqueType("builtins.type")
        if isinstance(node, ast.Tuple):
            return TupleType(tuple(self.expr(e, conv) for e in node.elts))
        if isinstance(node, ast.Compare):
            return self._compare(node, conv)
        if isinstance(node, ast.BoolOp | ast.IfExp):
            parts = node.values if isinstance(node, ast.BoolOp) else [node.body, node.orelse]
            kinds = {self.expr(p, conv) for p in parts}
            return kinds.pop() if len(kinds) == 1 else UNKNOWN
        if isinstance(node, ast.Subscript):
            return self._subscript(node, conv)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id not in self.env:
                local = self.local_call(node.func.id)
                if local is not None:
                    return local
            return self._stdlib_call(node, conv)
        if isinstance(node, ast.Attribute):
            return self._stdlib_attribute(node, conv)
        if isinstance(node, ast.BinOp):
            return self._python_binop(node, conv)
        return UNKNOWN

    # -- what the plugins did not answer ----------------------------------------------
    def _compare(self, node: ast.Compare, conv: Mapping[int, Converge]) -> Type:
        if len(node.ops) == 1:
            reply = self.oracle.operator(
                self.operator_context(node, [node.left, node.comparators[0]], conv)
            )
            if isinstance(reply, Converge):
                return reply.result
            if isinstance(reply, Type):
                return reply
        operands = [self.expr(o, conv) for o in (node.left, *node.comparators)]
        if any(isinstance(t, TensorType) for t in operands):
            return UNKNOWN  # an array comparison no plugin typed
        return I1

    def _subscript(self, node: ast.Subscript, conv: Mapping[int, Converge]) -> Type:
        value = self.expr(node.value, conv)
        if value is UNKNOWN:
            return UNKNOWN
        reply = self.oracle.subscript(
            SubscriptContext(
                value=value,
                index=(self.expr(node.slice, conv),),
                location=self.location(node),
                report=self.oracle.report,
            )
        )
        if reply is not None:
            return reply
        if isinstance(value, TupleType) and isinstance(node.slice, ast.Constant):
            index = node.slice.value
            if isinstance(index, int) and -len(value.elements) <= index < len(value.elements):
                return value.elements[index]
        if value == STR:
            return STR
        return UNKNOWN

    def _stdlib_call(self, node: ast.Call, conv: Mapping[int, Converge]) -> Type:
        ctx = self.call_context(node, conv)
        if ctx is None:
            return UNKNOWN
        if ctx.callee in self.classes.values():
            return OpaqueType(ctx.callee)  # a class of this project: its instance
        _owner, _, name = ctx.callee.rpartition(".")
        if ctx.receiver is not None and isinstance(ctx.receiver, OpaqueType | ScalarType):
            found = stdlib.member(_class_of(ctx.receiver), name)
            return found[1] if found and found[0] == "method" else UNKNOWN
        if stdlib.is_stdlib(ctx.callee):
            if ctx.callee == "builtins.abs" and ctx.args and ctx.args[0] in (F64, I64):
                return ctx.args[0]  # typeshed spells abs through a protocol
            return stdlib.call_type(ctx.callee) or UNKNOWN
        return UNKNOWN

    def _stdlib_attribute(self, node: ast.Attribute, conv: Mapping[int, Converge]) -> Type:
        owner = self.qualname(node.value)
        if owner is not None:
            if stdlib.is_stdlib(owner):
                return stdlib.attribute_type(f"{owner}.{node.attr}") or UNKNOWN
            return UNKNOWN
        value = self.expr(node.value, conv)
        if isinstance(value, OpaqueType | ScalarType):
            found = stdlib.member(_class_of(value), node.attr)
            if found is not None:
                return found[1] if found[0] == "attribute" else OpaqueType("builtins.method")
        return UNKNOWN

    def _python_binop(self, node: ast.BinOp, conv: Mapping[int, Converge]) -> Type:
        left, right = self.expr(node.left, conv), self.expr(node.right, conv)
        op = type(node.op).__name__
        if left == STR and ((right == STR and op == "Add") or op == "Mod"):
            return STR
        if {left, right} <= {STR, I64} and STR in (left, right) and op == "Mult":
            return STR
        numbers = {left, right} <= {F64, I64, I1}
        if numbers and op in ("FloorDiv", "Mod"):
            return F64 if F64 in (left, right) else I64  # Python's own rules
        if numbers and op in ("BitAnd", "BitOr", "BitXor", "LShift", "RShift"):
            return I64 if F64 not in (left, right) else UNKNOWN
        if numbers and op == "Pow" and F64 in (left, right):
            return F64  # float ** x is a float (or raises); int ** int may be either
        return UNKNOWN

    def local_call(self, callee: str) -> Type | None:
        """A call of a function defined in this module: its annotated return type."""
        node = self.functions.get(callee)
        if node is None:
            return None
        return self.annotation(node.returns) if node.returns is not None else UNKNOWN

    def _owner_class(self, t: Type) -> str:
        if isinstance(t, OpaqueType):
            return t.name
        if isinstance(t, ScalarType) and t in _SCALAR_CLASSES:
            return _SCALAR_CLASSES[t]
        return Typer._owner_class(self, t)

    def instance_attribute(self, value: Type, name: str, node: ast.AST) -> Type:
        """`value.name` as the plugins answer it (for the checker's own questions)."""
        ctx = AttributeContext(
            name, owner_type=value, location=self.location(node), report=self.oracle.report
        )
        return self.oracle.instance_attribute(ctx) or UNKNOWN


_SCALAR_CLASSES: Mapping[Type, str] = {
    F64: "builtins.float",
    I64: "builtins.int",
    I1: "builtins.bool",
}


def _class_of(t: Type) -> str:
    if isinstance(t, OpaqueType):
        return t.name
    return _SCALAR_CLASSES.get(t, "")


__all__ = ["CheckTyper", "STR", "BYTES"]
