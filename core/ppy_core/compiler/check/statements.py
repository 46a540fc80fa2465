"""What the walker reads off a statement: the expressions it evaluates itself, the
names it binds, whether a block always leaves, what `except X as e` binds."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ppy_core.ir.types import UNKNOWN, OpaqueType, Type


def expressions(stmt: ast.stmt) -> Iterator[ast.expr]:
    """The expressions a statement evaluates itself (not those of nested blocks)."""
    if isinstance(stmt, ast.For | ast.AsyncFor):
        yield stmt.iter
    elif isinstance(stmt, ast.While | ast.If):
        yield stmt.test
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        yield from (item.context_expr for item in stmt.items)
    elif isinstance(stmt, ast.Try | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return
    elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
        if stmt.value is not None:
            yield stmt.value
    else:
        yield from (c for c in ast.iter_child_nodes(stmt) if isinstance(c, ast.expr))


def instance(caught: Type, node: ast.expr | None) -> Type:
    """The exception `except X as e` binds: an instance of class X."""
    if caught != OpaqueType("builtins.type") or node is None:
        return UNKNOWN
    text = ast.unparse(node)
    return OpaqueType(f"builtins.{text}") if text.isidentifier() else UNKNOWN


def bound_names(stmt: ast.stmt) -> list[str]:
    """The names a statement binds itself (not in the blocks it holds)."""
    if isinstance(stmt, ast.Assign):
        targets: list[ast.expr] = list(stmt.targets)
    elif isinstance(stmt, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor):
        targets = [stmt.target]
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    else:
        return []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def leaves(body: list[ast.stmt]) -> bool:
    """Whether a block always leaves (its last statement returns, raises, ...)."""
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise | ast.Continue | ast.Break)


__all__ = ["bound_names", "expressions", "instance", "leaves"]
