"""Pattern rewriting: small patterns, each with its guard first, applied greedily."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ppy_core.ir.core import Block, Operation, Value


class RewritePattern(Protocol):
    """Matches one operation; rewrites it through the rewriter and returns True."""

    def match_and_rewrite(self, op: Operation, rewriter: Rewriter) -> bool: ...


class Rewriter:
    """Edits the IR under `root`, keeping uses consistent."""

    def __init__(self, root: Operation) -> None:
        self.root = root
        self.changed = False

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        block = _block_of(anchor)
        block.insert(block.ops.index(anchor), op)
        self.changed = True
        return op

    def replace_all_uses(self, old: Value, new: Value) -> None:
        for op in self.root.walk():
            op.operands = [new if v is old else v for v in op.operands]
        self.changed = True

    def replace_op(self, op: Operation, new_values: Sequence[Value]) -> None:
        """Replace every use of `op`'s results with `new_values`, then erase `op`."""
        for old, new in zip(op.results, new_values, strict=True):
            self.replace_all_uses(old, new)
        self.erase_op(op)

    def erase_op(self, op: Operation) -> None:
        _block_of(op).remove(op)
        self.changed = True


def _block_of(op: Operation) -> Block:
    if op.parent is None:
        raise ValueError(f"{op.name} is not inside a block")
    return op.parent


def apply_patterns(
    root: Operation, patterns: Sequence[RewritePattern], max_rounds: int = 16
) -> bool:
    """Apply patterns until none matches (or `max_rounds`); True if anything changed."""
    rewriter = Rewriter(root)
    for _ in range(max_rounds):
        progress = False
        for op in list(root.walk()):
            if op is not root and op.parent is None:
                continue  # erased earlier in this round
            for pattern in patterns:
                if pattern.match_and_rewrite(op, rewriter):
                    progress = True
                    break
        if not progress:
            break
    return rewriter.changed


@dataclass(frozen=True, slots=True)
class ApplyPatterns:
    """One plugin's rewrite patterns as a pass: applied greedily to a module, verified
    after by the pass manager. `owner` is the plugin that registered them (the driver
    takes it from the hook caller, never from the patterns), so a pattern that leaves
    the IR invalid is an E1902 naming that plugin."""

    owner: str
    patterns: tuple[RewritePattern, ...]

    @property
    def name(self) -> str:
        return "patterns[" + ", ".join(type(p).__name__ for p in self.patterns) + "]"

    def run(self, root: Operation) -> None:
        apply_patterns(root, self.patterns)


__all__ = ["RewritePattern", "Rewriter", "apply_patterns", "ApplyPatterns"]
