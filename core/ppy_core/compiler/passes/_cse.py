"""Common subexpression elimination."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ppy_core.ir.core import PURE, Block, Operation, Value
from ppy_core.ir.printer import print_attribute

_Key = tuple[str, tuple[int, ...], str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class CommonSubexpressionElimination:
    """Merge pure operations that are the same computation on the same values.

    Two operations merge when they have the same name, the same operands (the same
    SSA values, in order), the same result types and the same attributes, compared
    by their printed text: `0.0` and `-0.0` differ, NaNs merge only with the same
    bits, `1` and `1.0` and `true` all differ. Only operations whose effects are
    exactly Pure, with results and without regions, are candidates; the later one
    is erased and its uses take the earlier one's results. Each block is its own
    scope: an operation is never replaced by one from an enclosing block, so a
    `tensor.kernel` body keeps using only its own arguments.
    """

    name: ClassVar[str] = "cse"
    owner: ClassVar[str] = "core"

    def run(self, root: Operation) -> None:
        replaced: dict[int, Value] = {}
        for r in root.regions:
            for block in r.blocks:
                _cse_block(block, replaced)


def _cse_block(block: Block, replaced: dict[int, Value]) -> None:
    seen: dict[_Key, Operation] = {}
    for op in list(block.ops):
        if any(id(v) in replaced for v in op.operands):
            op.operands = [replaced.get(id(v), v) for v in op.operands]
        for r in op.regions:
            for inner in r.blocks:
                _cse_block(inner, replaced)
        if op.effects != PURE or op.regions or not op.results or op.is_terminator:
            continue
        key = _key(op)
        earlier = seen.setdefault(key, op)
        if earlier is op:
            continue
        for old, new in zip(op.results, earlier.results, strict=True):
            replaced[id(old)] = new
        block.remove(op)


def _key(op: Operation) -> _Key:
    attributes = print_attribute(dict(sorted(op.attributes.items())))
    return (
        op.name,
        tuple(id(v) for v in op.operands),
        attributes,
        tuple(r.type.text() for r in op.results),
    )
