"""Elementwise fusion: a function's tensor expression becomes one `tensor.kernel`."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import ClassVar, Final

from ppy_core.compiler.passes._util import replace_uses
from ppy_core.ir.core import Block, Operation, Region, Value
from ppy_core.ir.dialects.builtin import ConstantOp, FuncOp, ReturnOp
from ppy_core.ir.dialects.tensor import KernelOp, YieldOp

FUSIBLE: Final = frozenset(
    f"tensor.{n}"
    for n in (
        "add",
        "sub",
        "mul",
        "div",
        "pow",
        "maximum",
        "minimum",
        "neg",
        "abs",
        "unary",
        "binary",
        "clip",
        "compare",
        "logical",
        "select",
        "reduce",
        "cast",
    )
)
"""The operations a kernel body holds (besides copies of `builtin.constant`)."""

_MOVABLE_PAST: Final = frozenset({"Pure", "ReadMemory"})


@dataclass(frozen=True, slots=True)
class FuseElementwise:
    """Move the tensor operations that compute a function's result into one kernel.

    For each value a `func.func` returns that a fusible tensor op (FUSIBLE) in the
    function's entry block computes, that op (the root) and every fusible op all
    of whose uses are inside the set move into one `tensor.kernel`. An op with a
    use outside the set stays where it is and its result becomes a kernel input,
    so nothing the kernel computes is needed elsewhere (the largest correct set).
    The kernel's region arguments are its inputs (function arguments, results of
    other ops) in order of first use; each `builtin.constant` an op in the set
    uses is copied into the kernel, and the original is erased when nothing else
    uses it. The kernel takes the root's place and its result replaces the root's.
    Operations never move past an op with an effect other than Pure/ReadMemory.
    A function returning several values gets one kernel per fusible returned
    value; a function whose result is not computed by a tensor op is unchanged,
    and so is an existing kernel (running the pass twice changes nothing).
    """

    name: ClassVar[str] = "fuse-elementwise"
    owner: ClassVar[str] = "core"

    def run(self, root: Operation) -> None:
        for op in list(root.walk()):
            if isinstance(op, FuncOp):
                _fuse_function(op)


def _fuse_function(func: FuncOp) -> None:
    block = func.entry
    if not block.ops or not isinstance(block.ops[-1], ReturnOp):
        return
    for value in list(block.ops[-1].operands):
        producer = value.owner
        if (
            isinstance(producer, Operation)
            and producer.parent is block
            and producer.name in FUSIBLE
        ):
            _fuse(func, block, producer)


def _fuse(func: FuncOp, block: Block, root: Operation) -> None:
    top = _top_level_users(block)
    chosen = _collect(block, root, top)
    members = {id(op) for op in chosen}
    inside = {id(r) for op in chosen for r in op.results}
    inputs: dict[int, Value] = {}
    constants: dict[int, Operation] = {}
    for op in chosen:
        for v in op.operands:
            if id(v) in inside:
                continue
            if isinstance(v.owner, ConstantOp) and v.owner.parent is block:
                constants.setdefault(id(v.owner), v.owner)
            else:
                inputs.setdefault(id(v), v)
    body = Block([v.type for v in inputs.values()])
    mapping = dict(zip(inputs, body.args, strict=True))
    for const in constants.values():
        copy = body.append(ConstantOp([], [const.result.type], dict(const.attributes)))
        copy.result.name_hint = const.result.name_hint
        mapping[id(const.result)] = copy.result
    kernel = KernelOp(list(inputs.values()), [root.result.type], regions=[Region([body])])
    kernel.result.name_hint = root.result.name_hint
    replace_uses(func, {id(root.result): kernel.result})
    block.insert(block.ops.index(root), kernel)
    for op in chosen:
        block.remove(op)
        op.operands = [mapping.get(id(v), v) for v in op.operands]
        body.append(op)
    body.append(YieldOp([root.result]))
    for const in constants.values():
        if all(user in members for user in top[id(const.result)]):
            block.remove(const)


def _collect(block: Block, root: Operation, top: dict[int, list[int]]) -> list[Operation]:
    """The root and the fusible ops before it all of whose uses are in the set, in
    block order; the scan stops at an op that operations may not move past."""
    members = {id(root)}
    chosen = [root]
    for op in reversed(block.ops[: block.ops.index(root)]):
        users = [u for r in op.results for u in top[id(r)]]
        if op.name in FUSIBLE and users and all(u in members for u in users):
            members.add(id(op))
            chosen.append(op)
        elif any(not nested.effects <= _MOVABLE_PAST for nested in op.walk()):
            break
    return chosen[::-1]


def _top_level_users(block: Block) -> dict[int, list[int]]:
    """id(value) -> ids of the ops of `block` that use it, themselves or nested."""
    table: dict[int, list[int]] = defaultdict(list)
    for op in block.ops:
        for nested in op.walk():
            for v in nested.operands:
                table[id(v)].append(id(op))
    return table
