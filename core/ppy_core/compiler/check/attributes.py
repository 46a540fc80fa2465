"""Attributes an instance of a project class cannot have (E1025): `self.name` read in
a method where no class `self` can be an instance of defines `name` and nothing in
the project ever writes an attribute of that name.

Judged only where the class cannot gain attributes at run time: every base (and
every base of every subclass, a mixin's siblings included) is a project class, an
exception or `object`; no class decorator, no metaclass, no `__getattr__` or
`__getattribute__`; and nowhere in the project a `setattr` with a computed name, a
`__dict__` or a `vars(obj)`. An attribute written anywhere (`obj.name = ...`,
`setattr(obj, "name", ...)`) may be on any object, as may one tested with
`hasattr` or read under `except AttributeError`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ppy_core.compiler.check.bindings import statement_names, top_statements
from ppy_core.compiler.check.guards import guarded
from ppy_core.compiler.check.imports import Finding
from ppy_core.compiler.check.project import Key, Project, decorator_name

_ATTRIBUTE_ERRORS = frozenset({"AttributeError"})
_DYNAMIC = frozenset({"__getattr__", "__getattribute__"})


def attribute_findings(
    project: Project, module: str, written: frozenset[str], tested: set[str]
) -> Iterator[Finding]:
    for cls in project.files[module].tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        known = _class_names(project, module, cls)
        if known is None:
            continue
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            yield from _reads(cls, method, known | written | tested)


def _reads(
    cls: ast.ClassDef,
    method: ast.FunctionDef | ast.AsyncFunctionDef,
    known: set[str] | frozenset[str],
) -> Iterator[Finding]:
    params = [*method.args.posonlyargs, *method.args.args]
    kinds = {decorator_name(d) for d in method.decorator_list}
    if not params or kinds & {"staticmethod", "classmethod"} or method.decorator_list:
        return
    this = params[0].arg
    for node in ast.walk(method):
        if isinstance(node, ast.Name) and node.id == this and not isinstance(node.ctx, ast.Load):
            return  # `self` rebound: what it is is not known
        if node is not method and isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
        ):
            inner = node.args
            if this in {a.arg for a in [*inner.posonlyargs, *inner.args, *inner.kwonlyargs]}:
                return  # a nested function's own `self`
    for node in ast.walk(method):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id == this
            and not node.attr.startswith("__")
            and node.attr not in known
            and not guarded(node, _ATTRIBUTE_ERRORS)
        ):
            yield Finding(
                node,
                "E1025",
                f"`{cls.name}` instances have no attribute `{node.attr}`: no class of "
                "theirs defines it and nothing sets it",
                f"check the name, or set `self.{node.attr}` (in `__init__`)",
            )


def _class_names(project: Project, module: str, cls: ast.ClassDef) -> set[str] | None:
    """What the classes an instance `self` of `cls` may be an instance of define in
    their bodies; None where one of them can gain attributes no body shows."""
    key = ("attributes", id(cls))
    if key in project.names_memo:
        return project.names_memo[key]
    found: set[str] | None = set()
    lines: list[list[Key] | None] = [project.mro(module, cls)]
    stack = list(project.subclasses.get(id(cls), []))
    seen: set[int] = set()
    while stack and found is not None:
        where, sub = stack.pop()
        if id(sub) in seen:
            continue
        seen.add(id(sub))
        lines.append(project.mro(where, sub))
        stack += project.subclasses.get(id(sub), [])
    for line in lines:
        if line is None:
            found = None
            break
        for _, k in line:
            if id(k) in project.namedtuples:  # a tuple's members: not read off a body
                found = None
                break
            if k.decorator_list or dynamic(list(ast.walk(k)), own=True):
                found = None
                break
            for stmt in top_statements(k.body):
                found.update(statement_names(stmt))  # type: ignore[union-attr]
            if id(k) in project.exception_based:
                found |= {n for n in dir(BaseException) if not n.startswith("__")}  # type: ignore[operator]
        if found is None:
            break
    if found is not None and found & _DYNAMIC:
        found = None
    project.names_memo[key] = found
    return found


def dynamic(nodes: list[ast.AST], *, own: bool = False) -> bool:
    """Whether code may set attributes under names no reader sees: `setattr` with a
    computed name, `obj.__dict__`, `vars(obj)`. Of `self` (`own` False) that is the
    business of its class only (`_class_names` asks with `own`)."""
    for node in nodes:
        target: ast.AST | None = None
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "vars" and node.args:
                target = node.args[0]
            elif node.func.id == "setattr" and not (
                len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                target = node.args[0] if node.args else node
        if target is not None and own == _is_self(target):
            return True
    return False


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


__all__ = ["attribute_findings", "dynamic"]
