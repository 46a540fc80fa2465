"""Dead code elimination."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ppy_core.compiler.passes._util import is_pure, users
from ppy_core.ir.core import Block, Operation


@dataclass(frozen=True, slots=True)
class DeadCodeElimination:
    """Erase operations whose results are all unused and that have no effect.

    An operation goes when it has at least one result, none of them is used, it
    is not a terminator, and it and everything nested in it declare exactly the
    Pure effect. Operations with any other effect (ReadMemory, WriteMemory,
    Callback, IO) stay even when unused. Blocks are visited from the end, so a
    chain of dead operations goes in one run.
    """

    name: ClassVar[str] = "dce"
    owner: ClassVar[str] = "core"

    def run(self, root: Operation) -> None:
        uses = {key: len(ops) for key, ops in users(root).items()}
        for r in root.regions:
            for block in r.blocks:
                _dce_block(block, uses)


def _dce_block(block: Block, uses: dict[int, int]) -> None:
    for op in reversed(list(block.ops)):
        for r in op.regions:
            for inner in r.blocks:
                _dce_block(inner, uses)
        if not _dead(op, uses):
            continue
        block.remove(op)
        for nested in op.walk():
            for v in nested.operands:
                uses[id(v)] -= 1


def _dead(op: Operation, uses: dict[int, int]) -> bool:
    if not op.results or op.is_terminator or not is_pure(op):
        return False
    return all(uses.get(id(r), 0) == 0 for r in op.results)
