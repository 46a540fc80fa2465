"""The names a module binds at its top level, on any branch (an `if`, a `try` and its
`except ImportError` fallback, a loop), and whether it can bind more than its source
shows: a module-level `__getattr__`, `globals()` or `vars()` written, `exec`, its
`__path__` or `sys.modules` entry replaced.

Any binding on any branch counts: a name some path defines is never reported (only
one that no path defines is)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

#: what every module has without binding it
IMPLICIT = frozenset(
    {"__name__", "__file__", "__doc__", "__package__", "__spec__", "__loader__",
     "__builtins__", "__path__", "__cached__", "__annotations__", "__dict__"}
)  # fmt: skip


@dataclass(slots=True)
class Bound:
    names: set[str] = field(default_factory=set)
    open: bool = False
    #: (module, level) of every `from M import *`
    star_imports: list[tuple[str | None, int]] = field(default_factory=list)


#: what a source holds where it binds names beyond its top-level statements
_DYNAMIC = re.compile(
    rb"\bglobal\b|:=|\b(?:globals|vars|locals)\(|\bexec(?:file)?\b|modules\[|__path__"
)


def module_bindings(tree: ast.Module, source: bytes | None = None) -> Bound:
    """What `tree` binds; given its `source`, the whole tree is walked only where the
    text shows it may bind more than its statements (a large stub rarely does)."""
    found = Bound()
    for stmt in top_statements(tree.body):
        found.names.update(statement_names(stmt))
        if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
            found.star_imports.append((stmt.module, stmt.level))
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == "__getattr__":
            found.open = True
    if source is not None and _DYNAMIC.search(source) is None:
        return found
    from ppy_core.compiler.check import flatten

    for node in flatten(tree):  # (a checked file's walk, shared with every check)
        if isinstance(node, ast.Global):  # `global X` in a function binds a module's X
            found.names.update(node.names)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            found.names.add(node.target.id)  # (a walrus anywhere: a safe over-count)
        elif writes_namespace(node):
            found.open = True
    return found


def writes_namespace(node: ast.AST) -> bool:
    """Whether `node` may bind module names no statement shows: any use of `globals()`,
    `vars()[...] = v`, `exec(...)`, `sys.modules[...] = m`, `__path__` rebound or
    extended."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("exec", "execfile", "globals")
    ):
        return True  # (`g = globals(); g[name] = f`: pyarrow.compute makes its functions so)
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
        owner = node.value
        if _namespace_call(owner):
            return True
        if isinstance(owner, ast.Attribute) and owner.attr == "modules":
            return True  # `sys.modules[name] = ...`
    if isinstance(node, ast.Attribute) and _namespace_call(node.value):
        return node.attr in ("update", "setdefault", "__setitem__")
    if isinstance(node, ast.Name) and node.id == "__path__" and isinstance(node.ctx, ast.Store):
        return True
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id == "__path__" and node.attr in ("append", "extend", "insert")
    return False


def _namespace_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("globals", "vars", "locals")
    )


def top_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run in the module's own scope, on every branch."""
    for stmt in body:
        yield stmt
        for name in ("body", "orelse", "finalbody"):
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                yield from top_statements(getattr(stmt, name, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            yield from top_statements(handler.body)
        for case in getattr(stmt, "cases", None) or []:
            yield from top_statements(case.body)


def statement_names(stmt: ast.stmt) -> Iterator[str]:
    """The names one statement binds in the scope it runs in (not its nested blocks)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield stmt.name
    elif isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            yield from target_names(target)
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor):
        yield from target_names(stmt.target)
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        for item in stmt.items:
            if item.optional_vars is not None:
                yield from target_names(item.optional_vars)
    elif isinstance(stmt, ast.Import):
        for alias in stmt.names:
            yield alias.asname or alias.name.partition(".")[0]
    elif isinstance(stmt, ast.ImportFrom):
        for alias in stmt.names:
            if alias.name != "*":
                yield alias.asname or alias.name
    elif isinstance(stmt, ast.Try | getattr(ast, "TryStar", ast.Try)):
        for handler in stmt.handlers:
            if handler.name:
                yield handler.name
    elif isinstance(stmt, ast.Match):
        for case in stmt.cases:
            for node in ast.walk(case.pattern):
                for attr in ("name", "rest"):
                    value = getattr(node, attr, None)
                    if isinstance(value, str):
                        yield value
    elif isinstance(stmt, ast.Delete):
        for target in stmt.targets:
            yield from target_names(target)
    elif type(stmt).__name__ == "TypeAlias":  # `type X = ...` (3.12)
        yield from target_names(stmt.name)  # type: ignore[attr-defined]


def target_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from target_names(element)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


__all__ = [
    "IMPLICIT",
    "Bound",
    "module_bindings",
    "statement_names",
    "target_names",
    "top_statements",
    "writes_namespace",
]
