"""Helpers shared by the core passes: use lists and effect queries."""

from __future__ import annotations

from collections import defaultdict

from ppy_core.ir.core import PURE, Operation, Value


def users(root: Operation) -> dict[int, list[Operation]]:
    """id(value) -> the operations under `root` that use it (once per operand)."""
    table: dict[int, list[Operation]] = defaultdict(list)
    for op in root.walk():
        for v in op.operands:
            table[id(v)].append(op)
    return table


def is_pure(op: Operation) -> bool:
    """`op` and every operation nested in it declare exactly the Pure effect."""
    return all(nested.effects == PURE for nested in op.walk())


def replace_uses(root: Operation, mapping: dict[int, Value]) -> None:
    """Rewrite every operand under `root` found in `mapping` (keyed by id of the old value)."""
    for op in root.walk():
        if any(id(v) in mapping for v in op.operands):
            op.operands = [mapping.get(id(v), v) for v in op.operands]
