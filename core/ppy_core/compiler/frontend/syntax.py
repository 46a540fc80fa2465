"""Syntax questions the site finder asks of `ast` nodes: which expressions a
statement holds, an operator's operands, the literals the IR holds as constants,
which repeated leaves may be passed once. Pure functions over syntax; no typing."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from ppy_core.interface.plugin import Converge


def opt_level(deco: ast.Call) -> int | None:
    """The level of `@ppy.opt(3)` or `@ppy.opt(level=3)`; None if not a literal 0-3."""
    given = [*deco.args[:1], *(k.value for k in deco.keywords if k.arg == "level")]
    if len(given) != 1 or not isinstance(given[0], ast.Constant):
        return None
    value = given[0].value
    return value if value in (0, 1, 2, 3) and not isinstance(value, bool) else None


def single_target(stmt: ast.stmt) -> ast.Name | None:
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        return stmt.targets[0]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target
    return None


def dedupe(leaves: list[ast.expr]) -> tuple[list[ast.expr], dict[int, int]]:
    """Pass a repeated name once (`a*b + a` takes a and b), unless some leaf could
    rebind it between the two reads (a call, a walrus, an await)."""
    risky = (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)
    if any(isinstance(n, risky) for leaf in leaves for n in ast.walk(leaf)):
        return leaves, {}
    unique: list[ast.expr] = []
    first: dict[str, int] = {}
    repeats: dict[int, int] = {}
    for leaf in leaves:
        if isinstance(leaf, ast.Name) and leaf.id in first:
            repeats[id(leaf)] = first[leaf.id]
            continue
        if isinstance(leaf, ast.Name):
            first[leaf.id] = len(unique)
        unique.append(leaf)
    return unique, repeats


def own_nodes(func: ast.FunctionDef) -> Iterator[ast.AST]:
    """Nodes of `func`'s body, not descending into nested functions, lambdas, classes."""
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(node))


SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def expression_roots(stmt: ast.stmt, remark: Any) -> Iterator[ast.expr]:
    """Top-level expressions of a statement (and of statements nested in it)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        remark(stmt, f"nested definition '{stmt.name}' stays Python")
        return
    for field_name, value in ast.iter_fields(stmt):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.stmt):
                yield from expression_roots(item, remark)
            elif isinstance(item, ast.expr) and field_name not in ("annotation", "returns"):
                if isinstance(item, SCOPES):
                    remark(item, f"{type(item).__name__.lower()} stays Python")
                    continue
                if isinstance(stmt, ast.AugAssign) and field_name == "target":
                    continue
                for scope in scopes_inside(item):
                    remark(scope, f"{type(scope).__name__.lower()} stays Python")
                yield item
            elif isinstance(item, ast.excepthandler | ast.match_case | ast.withitem):
                for sub in ast.iter_child_nodes(item):
                    if isinstance(sub, ast.stmt):
                        yield from expression_roots(sub, remark)
                    elif isinstance(sub, ast.expr):
                        yield sub


def scopes_inside(node: ast.AST) -> Iterator[ast.AST]:
    """The lambdas and comprehensions inside `node` (not inside each other)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, SCOPES):
            yield child
        else:
            yield from scopes_inside(child)


def children(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, SCOPES):
        return []
    return [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]


def operator_operands(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Compare):
        return [node.left, node.comparators[0]]
    return []


def is_literal(node: ast.expr) -> bool:
    return literal_value(node) is not None


def literal_value(node: ast.expr) -> float | None:
    """The f64 constant the IR holds for a number literal (`2`, `2.5`, `-2.5`), or None.
    An int float64 cannot hold exactly stays a leaf: NumPy, not the compiler, converts it."""
    negate = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    if negate:
        node = node.operand  # type: ignore[attr-defined]
    if (
        not isinstance(node, ast.Constant)
        or isinstance(node.value, bool)
        or not isinstance(node.value, int | float)
    ):
        return None
    value = -node.value if negate else node.value  # -0 is 0, -0.0 is -0.0
    if isinstance(value, float) or (isinstance(value, int) and abs(value) <= 2**53):
        return float(value)
    return None


def tree_nodes(
    node: ast.expr, conv: dict[int, Converge], operands: dict[int, list[ast.expr]]
) -> Iterator[ast.expr]:
    yield node
    for child in operands[id(node)]:
        if id(child) in conv and conv[id(child)].op != "tensor.reduce":
            yield from tree_nodes(child, conv, operands)


__all__ = [
    "SCOPES",
    "children",
    "dedupe",
    "expression_roots",
    "is_literal",
    "literal_value",
    "operator_operands",
    "opt_level",
    "own_nodes",
    "scopes_inside",
    "single_target",
    "tree_nodes",
]
