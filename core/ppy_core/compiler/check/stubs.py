"""Annotations in stubs as checker types: a name resolved in its stub module (through
re-exports), typing's constructs (`Any`, `Optional`, `Literal`, `Self`, aliases), a
class with its type arguments, and a type variable replaced by what `subst` binds it
to (Unknown when nothing does)."""

from __future__ import annotations

import ast
from typing import Any

from ppy_core.compiler.check import stdlib
from ppy_core.compiler.check.types import ANY, FUNCTION, OBJECT, STR, generic, union
from ppy_core.ir.types import I1, I64, NONE, UNKNOWN, OpaqueType, TupleType, Type

Subst = dict[str, Type]
_TYPING = ("typing.", "typing_extensions.", "_typeshed.")
_TUPLE = "builtins.tuple"


# -- names in stubs ---------------------------------------------------------------------
def typing_form(module: str, node: ast.expr) -> str | None:
    """The typing construct a stub name denotes (`Any`, `Union`, ...), if it is one."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id in ("typing", "typing_extensions", "_typeshed") else None
    if not isinstance(node, ast.Name):
        return None
    found = stdlib.lookup(f"{module}.{node.id}")
    where = found[0] + "." if found else f"{module}."
    return node.id if where.startswith(_TYPING) else None


def definition(module: str, name: str) -> tuple[str, Any] | None:
    found = stdlib.lookup(f"{module}.{name}") or stdlib.lookup(f"builtins.{name}")
    return found


def is_typevar(node: Any) -> bool:
    return (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name | ast.Attribute)
        and (getattr(node.value.func, "id", None) or getattr(node.value.func, "attr", ""))
        in ("TypeVar", "ParamSpec", "TypeVarTuple")
    )


def alias_value(node: Any) -> ast.expr | None:
    if isinstance(node, ast.Assign) and not is_typevar(node):
        return node.value
    if (
        isinstance(node, ast.AnnAssign)
        and node.value is not None
        and "TypeAlias" in ast.unparse(node.annotation)
    ):
        return node.value
    return None


# -- annotations -> types ---------------------------------------------------------------
def convert(node: ast.expr | None, module: str, subst: Subst) -> Type:
    """A stub annotation as a checker type; a type variable not in `subst` is Unknown."""
    if node is None:
        return UNKNOWN
    if isinstance(node, ast.Constant):
        return NONE if node.value is None else UNKNOWN
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union([convert(node.left, module, subst), convert(node.right, module, subst)])
    if isinstance(node, ast.Subscript):
        return _subscripted(node, module, subst)
    if isinstance(node, ast.Name) and node.id in subst:
        return subst[node.id]
    special = typing_form(module, node)
    if special in ("Any", "Incomplete"):
        return ANY
    if special in ("LiteralString", "AnyStr"):
        return STR if special == "LiteralString" else subst.get("AnyStr", UNKNOWN)
    if special == "Self":
        return subst.get("Self", UNKNOWN)
    if isinstance(node, ast.Attribute):  # `_socket.socket`: a class of an imported module
        dotted = ast.unparse(node)
        found = stdlib.class_info(dotted)
        return OpaqueType(stdlib.canonical(dotted)) if found is not None else UNKNOWN
    name = node.id if isinstance(node, ast.Name) else None
    if name is None:
        return UNKNOWN
    if name in stdlib.SCALARS:
        return stdlib.SCALARS[name]
    found = definition(module, name)
    if found is None:
        return UNKNOWN
    where, info = found
    if isinstance(info.ast, ast.ClassDef):
        qualname = stdlib.canonical(f"{where}.{info.ast.name}")
        if qualname == "builtins.object":
            return OBJECT  # accepts anything (see `accepts`), says nothing of what it is
        return (
            stdlib.SCALARS.get(info.ast.name, OpaqueType(qualname))
            if where == "builtins"
            else (OpaqueType(qualname))
        )
    value = alias_value(info.ast)
    return convert(value, where, subst) if value is not None else UNKNOWN


def _subscripted(node: ast.Subscript, module: str, subst: Subst) -> Type:
    base = node.value
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    special = typing_form(module, base)
    if special in ("Optional",):
        return union([convert(items[0], module, subst), NONE])
    if special == "Union":
        return union([convert(i, module, subst) for i in items])
    if special == "Literal":
        return union([literal_type(i) for i in items])
    if special in ("Final", "ClassVar", "Annotated", "Required", "NotRequired", "ReadOnly"):
        return convert(items[0], module, subst)
    if special in ("Callable",):
        return FUNCTION
    if special == "Type" or (isinstance(base, ast.Name) and base.id == "type"):
        return OpaqueType("builtins.type")
    target = convert(base, module, subst)
    if not isinstance(target, OpaqueType) or target == ANY:
        return UNKNOWN
    if target.name == _TUPLE:
        if len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is ...:
            return generic(_TUPLE, [convert(items[0], module, subst)])
        return TupleType(tuple(convert(i, module, subst) for i in items))
    return generic(target.name, [convert(i, module, subst) for i in items])


def literal_type(node: ast.expr) -> Type:
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, bool):
        return I1
    return {int: I64, str: STR, bytes: OpaqueType("builtins.bytes")}.get(type(value), UNKNOWN)


# -- classes ----------------------------------------------------------------------------
def type_params(cls: ast.ClassDef, module: str) -> list[str]:
    """A generic class's type variables in order: `Generic[...]`/`Protocol[...]`, else
    as they first appear in its bases (the typing spec's rule)."""
    found: list[str] = []
    for base in cls.bases:
        if isinstance(base, ast.Subscript):
            names = [n.id for n in ast.walk(base.slice) if isinstance(n, ast.Name)]
            names = [n for n in names if is_var(module, n)]
            if typing_form(module, base.value) in ("Generic", "Protocol"):
                return names
            found.extend(n for n in names if n not in found)
    return found


def is_var(module: str, name: str) -> bool:
    found = definition(module, name)
    return found is not None and is_typevar(found[1].ast)


__all__ = [
    "Subst",
    "alias_value",
    "convert",
    "definition",
    "is_typevar",
    "is_var",
    "literal_type",
    "type_params",
    "typing_form",
]
