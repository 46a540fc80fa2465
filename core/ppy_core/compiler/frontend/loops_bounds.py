"""Typed loops: the bound of a `while` loop's counter, so `k += 1` compiles.

`while k < limit:` (alone or as a term of an `and`) whose body only adds positive
int constants to k, never inside a nested loop: every value k takes in the body
lies between its value at entry and limit plus those constants, so its bound is
proven without climbing a fixpoint one increment at a time.
"""

from __future__ import annotations

import ast
from typing import Any


def counter_cap(
    stmt: ast.While, kinds: dict[str, str], compared: dict[int, Any]
) -> tuple[str, int] | None:
    """`while k < limit:` whose body only ever adds positive constants to the int k
    (never inside a nested loop): k stays within its bound at entry below and
    limit + those constants above, so the body's `k += 1` needs no growing bound."""
    # `k < limit`, alone or as one term of an `and` (the loop runs only if all hold)
    terms = stmt.test.values if isinstance(stmt.test, ast.BoolOp) else [stmt.test]
    if isinstance(stmt.test, ast.BoolOp) and not isinstance(stmt.test.op, ast.And):
        return None
    test = next(
        (
            t
            for t in terms
            if isinstance(t, ast.Compare)
            and len(t.ops) == 1
            and isinstance(t.ops[0], ast.Lt | ast.LtE)
            and isinstance(t.left, ast.Name)
            and kinds.get(t.left.id) == "int"
            and id(t) in compared
        ),
        None,
    )
    if test is None:
        return None
    name, limit = test.left.id, compared[id(test)]
    if limit.py != "int":
        return None
    total = 0
    for node in (n for s in stmt.body for n in ast.walk(s)):
        if isinstance(node, ast.For | ast.While) and name in _stored(node):
            return None
        step = _increment(node, name)
        if step is not None:
            total += step
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and name in _stored(node):
            return None
    return name, limit.bound + total


def _stored(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _increment(node: ast.AST, name: str) -> int | None:
    """c for `name += c` / `name = name + c` with c a positive int constant."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
        target, value = node.target, node.value
    elif (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.value, ast.BinOp)
        and isinstance(node.value.op, ast.Add)
        and isinstance(node.value.left, ast.Name)
        and node.value.left.id == name
    ):
        target, value = node.targets[0], node.value.right
    else:
        return None
    if not (isinstance(target, ast.Name) and target.id == name):
        return None
    if isinstance(value, ast.Constant) and type(value.value) is int and value.value > 0:
        return value.value
    return None
