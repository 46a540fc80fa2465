"""Typed loops: an array statement's elements in chunks LLVM can vectorize.

`_loops_vector` computes each element of `V op= E` with one test of its result (an
inf or NaN goes to the exact path: NumPy's NaN, its warnings). That test is a branch
in the element loop, which keeps LLVM's vectorizer out: jacobi_1d's
`B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])` ran one element at a time. Here,
where every view and the target step by one element, the statement runs `CHUNK`
elements at a time: a branch-free loop computes them into a stack buffer and ORs
together whether any result is not finite (with a division anywhere, every
operation's result: `x / inf` is finite); a clean chunk is copied into the target,
and a chunk with anything special is done again by the exact path, element by
element. Nothing of the chunk is written before that choice, so the exact path
reads what it would have read; and since `_safe` holds (no view of E reads an
element the target writes before E reads it), reading a chunk's inputs before
writing its outputs is what element-by-element order reads too. The bits of a
clean chunk are the exact path's: the same IEEE operations in the same order.
"""

from __future__ import annotations

from typing import Any

from ._loops_fields import VectorFields

#: elements per chunk: 2 KiB of stack, long enough that the loop's setup is noise
CHUNK = 256


class VectorChunks(VectorFields):
    """The fused (non-overlapping) path of `loops.vector`; mixed into Emitter."""

    entry: Any
    machine_op: Any
    call_f: Any
    _count: Any
    _apply: Any
    _quick: Any

    def _fused(self, how: str, final: Any, target: tuple, plan: list[tuple]) -> None:
        """`V op= E` over the target's elements, E read element by element where it
        does not overlap the target (see the module docstring)."""
        b_, i64 = self.b, self.i64
        _, lt, stride = target
        unit = b_.icmp_signed("==", stride, i64(8))
        for kind, _, extra in plan:
            if kind == "view":
                unit = b_.and_(unit, b_.icmp_signed("==", extra[1], i64(8)))
        buffer = self._chunk_buffer()
        before = b_.block
        head, body, quick, store, exact, step, done = (
            self.fn.append_basic_block(f"chunk_{x}")
            for x in ("head", "body", "quick", "store", "exact", "step", "done")
        )
        b_.branch(head)
        b_.position_at_end(head)
        base = b_.phi(i64)
        base.add_incoming(i64(0), before)
        b_.cbranch(b_.icmp_signed("<", base, lt), body, done)
        b_.position_at_end(body)
        left = b_.sub(lt, base)
        m = b_.select(b_.icmp_signed("<", left, i64(CHUNK)), left, i64(CHUNK))
        b_.cbranch(unit, quick, exact)
        b_.position_at_end(quick)
        special = self._chunk_values(how, target, plan, base, m, buffer)
        b_.cbranch(special, exact, store)
        b_.position_at_end(store)
        ptr = target[0]

        def put(e: Any) -> None:
            at = b_.bitcast(b_.gep(ptr, [b_.mul(b_.add(base, e), i64(8))]), self.f64.as_pointer())
            b_.store(b_.load(b_.gep(buffer, [i64(0), e])), at, align=8)

        self._count(m, put)
        b_.branch(step)
        b_.position_at_end(exact)

        def element(e: Any) -> None:
            g = b_.add(base, e)
            self._apply(how, final, target, g, self._quick(plan, g))

        self._count(m, element)
        b_.branch(step)
        b_.position_at_end(step)
        base.add_incoming(b_.add(base, m), step)
        b_.branch(head)
        b_.position_at_end(done)

    def _chunk_values(
        self, how: str, target: tuple, plan: list[tuple], base: Any, m: Any, buffer: Any
    ) -> Any:
        """Elements base .. base + m of the statement's result into `buffer`; i1:
        whether any tested value was an inf or a NaN."""
        b_, i64 = self.b, self.i64
        divides = how == "truediv" or any(
            kind == "op" and extra[0] == "truediv" for kind, _, extra in plan
        )
        before = b_.block
        head, loop, end = (self.fn.append_basic_block(f"chunk_{x}") for x in ("e", "eb", "ee"))
        b_.branch(head)
        b_.position_at_end(head)
        e = b_.phi(i64)
        seen = b_.phi(self.i1)
        e.add_incoming(i64(0), before)
        seen.add_incoming(self.i1(0), before)
        b_.cbranch(b_.icmp_signed("<", e, m), loop, end)
        b_.position_at_end(loop)
        g = b_.add(base, e)
        found = self.i1(0)
        stack: list[Any] = []
        for kind, _, extra in plan:
            if kind == "view":
                stack.append(self._unit_element(extra[0], g))
            elif kind == "scalar":
                stack.append(extra)
            elif extra[0] == "neg":
                stack.append(b_.fneg(stack.pop()))
            else:
                y, x = stack.pop(), stack.pop()
                stack.append(self.machine_op(extra[0], x, y))
                if divides:
                    found = b_.or_(found, self._not_finite(stack[-1]))
        r = stack[-1]
        if how != "set":  # np.op(target, E, out=target)
            r = self.machine_op(how, self._unit_element(target[0], g), r)
        found = b_.or_(found, self._not_finite(r))
        b_.store(r, b_.gep(buffer, [i64(0), e]))
        seen.add_incoming(b_.or_(seen, found), b_.block)
        e.add_incoming(b_.add(e, i64(1)), b_.block)
        b_.branch(head)
        b_.position_at_end(end)
        return seen

    def _unit_element(self, ptr: Any, e: Any) -> Any:
        b_ = self.b
        at = b_.bitcast(b_.gep(ptr, [b_.mul(e, self.i64(8))]), self.f64.as_pointer())
        return b_.load(at, align=8)

    def _not_finite(self, x: Any) -> Any:
        fabs = self.call_f("llvm.fabs.f64", [x])
        return self.b.fcmp_unordered(">=", fabs, self.f64(float("inf")))

    def _chunk_buffer(self) -> Any:
        """The function's one chunk buffer, a stack array in the entry block (an
        alloca inside a loop would grow the stack with every iteration)."""
        found = getattr(self, "_chunks", None)
        if found is None:
            with self.b.goto_block(self.entry):
                found = self.b.alloca(self.ir.ArrayType(self.f64, CHUNK), name="chunk")
            self._chunks = found
        return found


__all__ = ["CHUNK", "VectorChunks"]
