"""Typed loops: reductions that run their float ops untested, and rerun if they must.

In `s -= L[i, j] * x[j]` every float op's result flows, through operands that carry
inf/NaN (`_loops_defer`), into the accumulator `s`, and `s` into itself on the next
iteration: if any of those ops ever produced inf or NaN, `s` is inf or NaN when the
loop ends. So a loop that writes no memory can run a copy whose *covered* ops carry
no inf/NaN test at all (LLVM may then unroll it), test its accumulators once at the
end, and -- only when one is not finite -- restore the locals it wrote and run the
tested copy from the start, which settles every NaN payload and NumPy warning as
Python would. An exit in the untested copy (a bounds check, a ZeroDivisionError)
also reruns: the tested copy reaches the same exit with the same warnings, since a
loop that stores nothing computes the same values again.

An accumulator is a local whose sets and reads sit in one block, each set after a
read made since the set before, every read flowing on into an accumulator (so once
inf or NaN it stays so, or passes it on); a covered op is a float op
whose result, by at least one path through carrying operands, same-bits casts and
locals of this iteration (`dx = a[j] - a[i]`), reaches an accumulator's set in its
own block with nothing between that could skip it (a break or continue). Its other
uses see its bits untested, which can differ from Python's only in a NaN's payload
-- and then the loop reruns.
"""

from __future__ import annotations

from typing import Any

from ._loops_defer import FLOAT_KINDS, carries, same_bits
from ._loops_proof import innermost


class _Flow:
    """Where an inf/NaN result goes in one loop body: `covered(value)` is whether it
    always reaches an accumulator's set (through carrying operands, same-bits casts
    and this iteration's locals), in its own block, before anything may leave it."""

    def __init__(self, body: list[Any], accumulators: set[str], temps: dict[str, Any]) -> None:
        self.body, self.accumulators, self.temps = body, accumulators, temps
        self.users: dict[int, list[Any]] = {}
        self.gets: dict[str, list[Any]] = {}
        for op in body:
            for value in op.operands:
                self.users.setdefault(id(value), []).append(op)
            if op.name == "loops.get":
                self.gets.setdefault(op.attributes["slot"], []).append(op)
        self.setters = {id(op) for op in body if op.name == "loops.set"}
        self.memo: dict[int, bool] = {}

    def covered(self, value: Any) -> bool:
        key = id(value)
        if key not in self.memo:
            self.memo[key] = False  # SSA has no cycles; a guard all the same
            self.memo[key] = any(self._onward(value, user) for user in self.users.get(key, ()))
        return self.memo[key]

    def _onward(self, value: Any, user: Any) -> bool:
        if not _straight(value.owner, user):
            return False
        if same_bits(user):
            return self.covered(user.results[0])
        if user.name == "loops.binop":
            return carries(user, user.operands.index(value)) and self.covered(user.results[0])
        if user.name != "loops.set":
            return False
        slot = user.attributes["slot"]
        if slot in self.accumulators:
            return True
        if self.temps.get(slot) is user:  # this iteration's local: follow its reads
            return any(
                _straight(user, get) and self.covered(get.results[0])
                for get in self.gets.get(slot, ())
            )
        return False


def _escapes(op: Any) -> bool:
    """Whether control may leave the block at `op` (a break or continue, or an `if`
    holding one): what comes after it may not run this iteration."""
    return any(inner.name in ("loops.break", "loops.continue") for inner in op.walk())


def _straight(first: Any, later: Any) -> bool:
    """`later` follows `first` in the same block, nothing between able to skip it."""
    block = getattr(first, "parent", None)
    if block is None or later.parent is not block:
        return False
    ops = block.ops
    i, j = ops.index(first), ops.index(later)
    return i < j and not any(_escapes(op) for op in ops[i:j])


def _read_before_set(sets: list[Any], gets: list[Any]) -> bool:
    """Whether a local's sets and reads all sit in one block, each set after a read
    made since the one before (`s += a; s -= b`): no set drops the value it replaces."""
    block = sets[0].parent
    if not gets or any(op.parent is not block for op in (*sets, *gets)):
        return False
    mine = {id(op) for op in (*sets, *gets)}
    pending = False
    for op in block.ops:
        if id(op) in mine:
            if op.name == "loops.get":
                pending = True
            elif not pending:
                return False
            else:
                pending = False
    return True


def speculation(op: Any) -> tuple[frozenset[int], tuple[str, ...]]:
    """(ids of the covered float ops, the accumulators) of the `for` loop `op`;
    nothing when it may not speculate (it nests a loop, stores or returns)."""
    none: tuple[frozenset[int], tuple[str, ...]] = (frozenset(), ())
    if not innermost(op):
        return none
    body = [inner for inner in op.walk() if inner is not op]
    # a write would be made twice when the tested copy reruns: any op that writes
    # memory (stores, in-place and array statements) stops it, as a return does
    if any(inner.name == "loops.return" or "WriteMemory" in inner.effects for inner in body):
        return none
    sets: dict[str, list[Any]] = {}
    gets: dict[str, list[Any]] = {}
    for inner in body:
        if inner.name in ("loops.set", "loops.get"):
            into = sets if inner.name == "loops.set" else gets
            into.setdefault(inner.attributes["slot"], []).append(inner)
    single = {slot: found[0] for slot, found in sets.items() if len(found) == 1}
    single.pop(op.attributes["slot"], None)
    # a temp: read only after its one set, this iteration; an accumulator: every
    # set follows a read of it, and every read flows on into an accumulator
    temps = {
        slot: setter
        for slot, setter in single.items()
        if all(_straight(setter, g) for g in gets.get(slot, ()))
    }
    counter = op.attributes["slot"]
    candidates = {
        slot
        for slot, found in sets.items()
        if slot != counter
        and getattr(found[0].operands[0].type, "kind", "") == "f64"  # a float local
        and _read_before_set(found, gets.get(slot, []))
    }
    while True:
        flow = _Flow(body, candidates, temps)
        keep = {s for s in candidates if all(flow.covered(g.results[0]) for g in gets[s])}
        if keep == candidates:
            break
        candidates = keep
    if not candidates:
        return none
    covered = frozenset(
        id(inner)
        for inner in body
        if inner.name == "loops.binop"
        and inner.attributes.get("py") in FLOAT_KINDS
        and flow.covered(inner.results[0])
    )
    return (covered, tuple(sorted(candidates))) if covered else none


def restored(op: Any) -> tuple[str, ...]:
    """Every local the loop writes: what a rerun restores."""
    return tuple(
        sorted(
            {
                inner.attributes["slot"]
                for inner in op.walk()
                if inner.name in ("loops.set", "loops.for")
            }
        )
    )


__all__ = ["restored", "speculation"]
