"""Members of the classes the checked module defines, read from their source: a
method's annotated return, a property, a class attribute (annotated, or a literal /
class instance assigned), an attribute a method annotates (`self.n: int = 0`), and
what a base provides (another local class, or a stub class: `class P(Plugin)` gets
`Plugin`'s members from the core's annotated source). A class a plugin types (a
pydantic model, a Flax Module) is the plugin's to answer; this reads the rest."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ppy_core.compiler.check import signatures
from ppy_core.compiler.check.hints import class_name
from ppy_core.compiler.check.signatures import Args
from ppy_core.ir.types import UNKNOWN, OpaqueType, Type

if TYPE_CHECKING:
    from ppy_core.compiler.check.typer import CheckTyper

METHOD = OpaqueType("builtins.method")


def member(typer: CheckTyper, qualname: str, attr: str, *, call: Args | None) -> Type | None:
    """`instance.attr` (or, with `call`, what `instance.attr(...)` returns) for an
    instance of the local class `qualname`; None when neither it nor a base has it."""
    return _member(typer, qualname, attr, call, set())


def _member(
    typer: CheckTyper, qualname: str, attr: str, call: Args | None, seen: set[str]
) -> Type | None:
    node = typer.class_nodes.get(qualname)
    if node is None or qualname in seen:
        return None
    seen.add(qualname)
    for stmt in node.body:
        found = _declared(typer, stmt, attr, call)
        if found is not None:
            return found
    for stmt in ast.walk(node):  # `self.attr: T = ...` in a method
        if isinstance(stmt, ast.AnnAssign) and _self_attribute(stmt.target, attr):
            return typer.annotation(stmt.annotation) if call is None else UNKNOWN
        if (
            isinstance(stmt, ast.Assign)
            and any(_self_attribute(t, attr) for t in stmt.targets)
            and call is None
        ):
            return UNKNOWN  # `self.attr = value` unannotated: it exists, its type unread
    for base in node.bases:
        base_name = typer.qualname(base.value if isinstance(base, ast.Subscript) else base)
        if base_name is None:
            continue
        if base_name in typer.class_nodes:
            found = _member(typer, base_name, attr, call, seen)
        elif typer.typed(base_name) and (stub := class_name(base_name)) is not None:
            base_type = OpaqueType(stub)
            found = (
                signatures.member_type(base_type, attr)
                if call is None
                else signatures.method(base_type, attr, call)
            )
        else:
            continue
        if found is not None:
            return found
    return None


def method(typer: CheckTyper, qualname: str, attr: str) -> ast.FunctionDef | None:
    """The definition of method `attr` of local class `qualname` or a local base."""
    todo, seen = [qualname], set()
    while todo:
        node = typer.class_nodes.get(todo.pop(0))
        if node is None or node.name in seen:
            continue
        seen.add(node.name)
        for stmt in node.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == attr:
                return stmt
        for base in node.bases:
            found = typer.qualname(base.value if isinstance(base, ast.Subscript) else base)
            todo += [found] if found is not None else []
    return None


def _declared(typer: CheckTyper, stmt: ast.stmt, attr: str, call: Args | None) -> Type | None:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == attr:
        if any(_named(d, "overload") for d in stmt.decorator_list):
            return UNKNOWN  # which overload a call fits is not read here
        returns = typer.annotation(stmt.returns) if stmt.returns is not None else UNKNOWN
        if any(_named(d, "property") for d in stmt.decorator_list):
            return returns if call is None else UNKNOWN
        return returns if call is not None else METHOD
    if call is not None:
        return None  # an attribute called: what it returns is not read here
    if isinstance(stmt, ast.AnnAssign) and _target(stmt.target, attr):
        return typer.annotation(stmt.annotation)
    if isinstance(stmt, ast.Assign) and any(_target(t, attr) for t in stmt.targets):
        return typer.expr(stmt.value, {})
    return None


def _target(node: ast.expr, attr: str) -> bool:
    return isinstance(node, ast.Name) and node.id == attr


def _self_attribute(node: ast.expr, attr: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _named(node: ast.expr, name: str) -> bool:
    return (isinstance(node, ast.Name) and node.id == name) or (
        isinstance(node, ast.Attribute) and node.attr == name
    )


__all__ = ["member", "method"]
