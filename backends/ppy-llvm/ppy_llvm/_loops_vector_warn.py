"""Typed loops: an array statement's warnings before an error, emitted once.

Where NumPy raises in the middle of `V op= E` (two lengths that do not broadcast, a
late view's IndexError), it has already run the operations before, and warned about
them; with an empty target it runs E's operations without writing anything.
`_loops_vector` reproduces those warnings by computing, at each such point, the
subtrees NumPy had computed: at every error point its own loops, so a statement of
n operations carried O(n**2) operations of cold code (adi's longest statement, ten
operations, about sixty), which LLVM optimized and compiled like any other.

Here each point only records what it needs: it stores the values of the plan items
of those subtrees (pointers, steps, lengths, scalars: each defined before the point)
into stack slots, the set of subtrees as a bit mask, the error's details into the
out words and its code, then branches to the statement's one warnings block. That
block computes each masked subtree from the slots, over its own length, with each
operation's flags, and returns the code (code 0, the empty target: the statement is
done). Flags are bits, so the order the subtrees are computed in does not matter,
and NaN payloads of the values computed there are never written: only the flags are
kept, and whether a value is NaN (or a signalling one, at a leaf) does not depend on
which NaN an operation returned.
"""

from __future__ import annotations

from typing import Any

from ._loops_fields import VectorFields

#: plan items a mask can name (bits of an i64); a longer statement computes in place
MASKED = 63


class VectorWarnings(VectorFields):
    """The shared warnings block of `loops.vector`; mixed into Emitter."""

    out: Any
    entry: Any
    _starts: list[int]
    _count: Any
    _value: Any
    finish: Any

    def _warn_start(self, tokens: int) -> None:
        """A new statement: its warnings block (None: it computes them in place)."""
        self._warn_block = self.fn.append_basic_block("vec_warn") if tokens <= MASKED else None
        self._warn_slots: dict[int, tuple[Any, ...]] = {}
        self._warn_main: Any = None  # the block an error point branches off (`_warn_point`)
        self._warn_codes: set[int] = set()
        if getattr(self, "_warn_state", None) is None:
            with self.b.goto_block(self.entry):
                self._warn_state = (
                    self.b.alloca(self.i64, name="warn_mask"),
                    self.b.alloca(self.i64, name="warn_code"),
                )

    def _warn_point(self) -> None:
        """An error point's test comes next: the block it branches off, which runs
        whatever follows (the items' values are stored there, once)."""
        self._warn_main = self.b.block

    def _warn_defer(self, plan: list[tuple], done: list[int]) -> bool:
        """At an error point: record the subtrees `done` (False: computed in place).
        Each item's values are stored on the statement's own path, before the first
        point that needs them (so every later point may read them too)."""
        if self._warn_block is None:
            return False
        b_, mask = self.b, 0
        for k in done:
            if plan[k][0] != "op":
                continue
            mask |= 1 << k
            for j in range(self._starts[k], k + 1):
                if j in self._warn_slots:
                    continue
                slots = self._slots(j, plan[j])
                with b_.goto_block(self._warn_main):  # before its test's branch
                    for slot, value in zip(slots, _values(plan[j]), strict=True):
                        b_.store(value, slot)
        b_.store(self.i64(mask), self._warn_state[0])
        return True

    def _warn_raise(self, code: int, info: list[Any]) -> None:
        """After `_warn_defer`: the error's details, then the warnings block."""
        for k, v in enumerate(info):
            self.b.store(v, self.b.gep(self.out, [self.i64(1 + k)]))
        self._warn_codes.add(code)
        self.b.store(self.i64(code), self._warn_state[1])
        self.b.branch(self._warn_block)

    def _warn_emit(self, plan: list[tuple], done: Any) -> None:
        """The statement's warnings block, then code 0 on to `done`."""
        if self._warn_block is None:
            return
        b_, i64 = self.b, self.i64
        b_.position_at_end(self._warn_block)
        mask = b_.load(self._warn_state[0])
        for k, item in enumerate(plan):
            if item[0] != "op" or k not in self._warn_slots:
                continue  # no error point computes this subtree
            bit = b_.and_(b_.lshr(mask, i64(k)), i64(1))
            with b_.if_then(b_.icmp_unsigned("!=", bit, i64(0)), likely=False):
                sub = [self._loaded(j, plan[j]) for j in range(self._starts[k], k + 1)]
                self._count(sub[-1][1], lambda e, sub=sub: self._value(sub, e))
        code = b_.load(self._warn_state[1])
        for c in sorted(self._warn_codes - {0}):
            with b_.if_then(b_.icmp_signed("==", code, i64(c)), likely=False):
                self.finish(c)
        b_.branch(done)
        b_.position_at_end(done)

    def _slots(self, j: int, item: tuple) -> tuple[Any, ...]:
        found = self._warn_slots.get(j)
        if found is None:
            with self.b.goto_block(self.entry):
                found = tuple(self.b.alloca(v.type) for v in _values(item))
            self._warn_slots[j] = found
        return found

    def _loaded(self, j: int, item: tuple) -> tuple:
        """Plan item j rebuilt from its slots in the warnings block."""
        values = [self.b.load(slot) for slot in self._slots(j, item)]
        kind = item[0]
        if kind == "view":
            ptr, step, n = values
            return ("view", n, (ptr, step, step))
        if kind == "scalar":
            return ("scalar", self.i64(1), values[0])
        name = item[2][0]  # the NaN rule does not matter: flags only (module docstring)
        return ("op", values[0], (name, None if name == "neg" else (self.i1(0), values[0])))


def _values(item: tuple) -> list[Any]:
    """The run-time values of a plan item the warnings block reads."""
    kind, n, extra = item
    if kind == "view":
        return [extra[0], extra[1], n]
    if kind == "scalar":
        return [extra]
    return [n]


__all__ = ["MASKED", "VectorWarnings"]
