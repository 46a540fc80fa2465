"""Where paths through a function meet again (after an `if`, a loop, a `try`): each
name's type is what any path that reaches the meeting point may have bound, the union
of them; Unknown if any path's is (`types.union`). A path that left (return, raise,
break, continue) does not reach it. Without this a name bound on one path only (`x =
None` in a branch, in an `except`, before a `break`) would be taken for what it holds on
every path, and a check would report what no run does."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ppy_core.compiler.check.types import union
from ppy_core.ir.types import Type

Env = dict[str, Type]


def join(envs: Iterable[Env]) -> Env:
    """The names' types where the paths that bound `envs` meet: a name bound on some
    paths only is what those bound (reading it on another raises); an attribute's
    narrowed type (`self.x`) is kept only where every path kept one."""
    envs = list(envs)
    if len(envs) == 1:
        return dict(envs[0])
    names = dict.fromkeys(n for env in envs for n in env)
    return {
        n: union([env[n] for env in envs if n in env])
        for n in names
        if "." not in n or all(n in env for env in envs)
    }


def stored(body: list[ast.stmt]) -> frozenset[str]:
    """The names a block may rebind anywhere in it (its nested scopes' own aside,
    though their names are bound): what a loop's later iterations may see changed."""
    found: set[str] = set()
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).partition(".")[0])
        todo.extend(ast.iter_child_nodes(node))
    return frozenset(found)


__all__ = ["Env", "join", "stored"]
