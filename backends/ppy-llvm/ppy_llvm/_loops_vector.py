"""Typed loops: array statements (`loops.vector`) as one loop over the elements.

NumPy runs `C[i, :n] += alpha * A[i, k] * A[:n, k]` as one ufunc call per
operation, each into a fresh temporary, then the in-place call into the target.
Every element's value is the same IEEE operation whichever way it is looped, so
the function computes each element of E and applies it at once; what it keeps of
NumPy's calls:

* which NaN comes out of `x op y` when both are NaN (`nan_rule`): NumPy's loops
  for + and * (measured on its x86 build, proven per build by the runtime adapter
  through the exported `ppy_loops_probe_vector`) return the second operand's where
  the call is longer than 8 elements and either its second operand is a broadcast
  scalar (stride 0, the others contiguous) or all three are contiguous and the
  element lies in the last `n % 8`; a one-element in-place + returns the second's
  too; everything else, and - and / always, the first's. A NaN with a non-NaN
  operand is that NaN quieted, as on the FPU;
* the warnings: each operation's flags under its ufunc's name;
* broadcasting: views of length 1 are read as NumPy broadcasts them; lengths that
  differ raise NumPy's ValueError (return code 7, out[1..3]: the form, both
  lengths) before anything of the statement is written;
* the reads before the writes: where a view of E may overlap the target other than
  ahead of it on the same stride, E is first computed into a buffer (malloc), as
  NumPy's temporary is (none to be had: NumPy's MemoryError, return code 8).

The function runs only on arrays whose strides are non-negative multiples of 8
and whose data is 8-byte aligned (`entry_checks`: else code 5, Python runs it):
there NumPy's iterator hands each call its operands' own strides.
"""

from __future__ import annotations

from typing import Any

from ._loops_blas import QUIET_BIT, _libc
from ._loops_flat import flat_take, is_flat
from ._loops_inplace import LAYOUT
from ._loops_vector_chunks import VectorChunks
from ._loops_vector_probe import probe_functions
from ._loops_vector_warn import VectorWarnings

BROADCAST = 7  # return code: NumPy's ValueError for lengths that do not broadcast
NO_MEMORY = 8  # return code: NumPy's MemoryError for a temporary of out[1] float64s
#: out[1] of BROADCAST: which of NumPy's messages (see the loader)
BINARY, INPLACE, INPLACE_OUT, COPY = 0, 1, 2, 3
UFUNC = {"add": "ufunc_add", "sub": "ufunc_sub", "mul": "ufunc_mul", "truediv": "ufunc_truediv"}
SIMD_MIN = 8  # NumPy's SIMD loops take calls longer than this
_TREE_OPS = ("add", "sub", "mul", "truediv")
_BOUNDS = {"i": 1, "s": 2, "f": 0}  # operands per axis of a view ("f": flat, _loops_flat)


class VectorOps(VectorChunks, VectorWarnings):
    """`loops.vector` and `loops.index_check`; mixed into Emitter."""

    module: Any
    flags: Any
    arrays: dict[int, Any]
    fail: Any
    v: Any
    view_of: Any
    machine_op: Any
    call_f: Any
    _flag_bits: Any
    cold_function: Any

    def op_index_check(self, op: Any) -> None:
        from ._loops_emit import INDEX_ERROR

        b_ = self.b
        axis = op.attributes["axis"]
        n = self.arrays[id(op.operands[0])][1][axis]
        index = self.v(op.operands[1])
        i = b_.select(b_.icmp_signed("<", index, self.i64(0)), b_.add(index, n), index)
        self.fail(b_.icmp_unsigned(">=", i, n), INDEX_ERROR, [index, self.i64(axis), n])

    def op_vector(self, op: Any) -> None:
        views = op.attributes["views"]
        nv = len(views)
        parts = iter(op.operands[nv:])
        self._views = [
            (op.operands[k], view, [next(parts) for c in view for _ in range(_BOUNDS[c])])
            for k, view in enumerate(views)
        ]
        rest = list(parts)
        loads = op.attributes.get("loads", ())
        split = len(rest) - sum(1 + rank for rank in loads)
        self._scalars = [self.v(x) for x in rest[:split]]
        tail = iter(rest[split:])
        self._loads = [(next(tail), [next(tail) for _ in range(rank)]) for rank in loads]
        self._starts: list[int] = []  # per plan item: where its subtree begins
        self._warn_start(len(op.attributes["tree"]))  # one warnings block (_loops_vector_warn)
        late = set(op.attributes.get("late", ()))
        leaves: dict[int, Any] = {}
        for k in range(nv):  # the views whose checks came before: taken now
            if k not in late:
                leaves[k] = self._take(k)
        probe_functions(self)
        plan = self._plan(op.attributes["tree"], leaves)
        length = plan[-1][1]  # E's

        def computed() -> None:
            self._computed(plan, [len(plan) - 1])

        if 0 in late:  # `V = E`: V's view is taken after E
            self._late_view(0, leaves, computed)
        _, lt, st = leaves[0]
        how = op.attributes["op"]
        self._final_check(how, length, lt, computed)
        final = None
        if how != "set":  # np.op(target, E, out=target): in place, E broadcast if length 1
            e_stride = self.b.select(self.b.icmp_signed("==", length, lt), self.i64(8), self.i64(0))
            final = self._rule(how, lt, st, e_stride, st, inplace=True)
        b_ = self.b
        # an empty target: NumPy still computes E's operations of one element (warnings)
        self._warn_point()
        with b_.if_then(b_.icmp_signed("==", lt, self.i64(0)), likely=False):
            self._computed(plan, [k for k, item in enumerate(plan) if item[0] == "op"])
            if self._warn_block is not None:
                self._warn_raise(0, [])  # then the statement is done
        safe = self._safe([leaves[k] for k in range(nv)])
        fused, buffered, done = (
            self.fn.append_basic_block(x) for x in ("vec_fused", "vec_buffered", "vec_done")
        )
        b_.cbranch(safe, fused, buffered)
        b_.position_at_end(fused)
        self._fused(how, final, leaves[0], plan)  # in vectorized chunks (_loops_vector_chunks)
        b_.branch(done)
        b_.position_at_end(buffered)
        self._buffered(how, final, leaves[0], plan, length)
        b_.branch(done)
        b_.position_at_end(done)
        self._warn_emit(plan, done)

    # -- the plan: per token, what its value is and its call's NaN rule ----------------
    def _plan(self, tree: tuple[str, ...], leaves: dict[int, Any]) -> list[tuple]:
        """Per token of the postfix tree: (kind, length, extra). A view: its pointer
        and its element stride (0 where it is broadcast); a scalar: its value; an op:
        its name, its NaN rule. Broadcast errors are checked here, in Python's order."""
        b_, i64 = self.b, self.i64
        plan: list[tuple] = []
        stack: list[int] = []
        for token in tree:
            if token == "neg":  # np.negative of the subtree: a temporary of its length
                below = stack.pop()
                plan.append(("op", plan[below][1], ("neg", None)))
                start = self._starts[below]
            elif token in _TREE_OPS:
                before = list(stack)  # the subtrees Python has computed by this call
                right, left = plan[stack.pop()], plan[stack.pop()]
                n = self._broadcast(left, right, lambda b=before: self._computed(plan, b))
                s0, s1 = (self._ufunc_stride(x, n) for x in (left, right))
                rule = self._rule(token, n, s0, s1, i64(8), inplace=False)
                start = self._starts[before[-2]]
                plan.append(("op", n, (token, rule)))
            elif token[0] == "v":
                k = int(token[1:])
                if k not in leaves:  # its index checks come after an operation
                    self._late_view(k, leaves, lambda b=list(stack): self._computed(plan, b))
                ptr, n, stride = leaves[k]
                step = b_.select(b_.icmp_signed("==", n, i64(1)), i64(0), stride)
                plan.append(("view", n, (ptr, step, stride)))
                start = len(plan) - 1
            elif token[0] == "e":
                pending = list(stack)
                value = self._late_load(int(token[1:]), lambda b=pending: self._computed(plan, b))
                plan.append(("scalar", i64(1), value))
                start = len(plan) - 1
            else:
                plan.append(("scalar", i64(1), self._scalars[int(token[1:])]))
                start = len(plan) - 1
            self._starts.append(start)
            stack.append(len(plan) - 1)
        return plan

    def _take(self, k: int) -> tuple[Any, Any, Any]:
        """View k: (i8* of its first element, its length, its byte stride)."""
        array, view, bounds = self._views[k]
        if is_flat(view):  # the whole C-contiguous array
            return flat_take(self, array)
        ptr, [(n, stride)] = self.view_of(array, view, iter(bounds))
        return ptr, n, stride

    def _checked(self, array: Any, axis: int, index: Any, computed: Any) -> Any:
        """NumPy's IndexError for `index` on `axis`, after what it computed before;
        the index, wrapped."""
        from ._loops_emit import INDEX_ERROR

        b_ = self.b
        n = self.arrays[id(array)][1][axis]
        i = b_.select(b_.icmp_signed("<", index, self.i64(0)), b_.add(index, n), index)
        self._raise(b_.icmp_unsigned(">=", i, n), computed, INDEX_ERROR, [index, self.i64(axis), n])
        return i

    def _late_view(self, k: int, leaves: dict[int, Any], computed: Any) -> None:
        array, view, bounds = self._views[k]
        values = iter(bounds)
        for axis, how in enumerate(view):
            if how == "i":
                self._checked(array, axis, self.v(next(values)), computed)
            elif how == "s":
                next(values)
                next(values)
        leaves[k] = self._take(k)  # its own checks pass now

    def _late_load(self, j: int, computed: Any) -> Any:
        """Element j of `loads`: each index checked in turn, then read."""
        b_ = self.b
        array, indices = self._loads[j]
        data, _, strides = self.arrays[id(array)]
        offset = self.i64(0)
        for axis, index in enumerate(indices):
            i = self._checked(array, axis, self.v(index), computed)
            stride = b_.mul(strides[axis], self.i64(8)) if self.contiguous else strides[axis]
            offset = b_.add(offset, b_.mul(i, stride))
        at = b_.bitcast(b_.gep(data, [offset]), self.f64.as_pointer())
        return b_.load(at, align=1)

    def _computed(self, plan: list[tuple], done: list[int]) -> None:
        """Before a broadcast error: the operations NumPy ran before it, each subtree in
        `done` over its own length, for their warnings (their values are dropped); or
        only recorded, for the statement's warnings block (`_loops_vector_warn`)."""
        if self._warn_defer(plan, done):
            return
        for k in done:
            if plan[k][0] == "op":
                sub = plan[self._starts[k] : k + 1]
                self._count(plan[k][1], lambda e, sub=sub: self._value(sub, e))

    def _broadcast(self, left: tuple, right: tuple, computed: Any) -> Any:
        """The call's length; NumPy's ValueError where two arrays do not broadcast."""
        b_, i64 = self.b, self.i64
        la, lb = left[1], right[1]
        if left[0] == "scalar":
            return lb
        if right[0] == "scalar":
            return la
        one_a, one_b = b_.icmp_signed("==", la, i64(1)), b_.icmp_signed("==", lb, i64(1))
        bad = b_.and_(b_.icmp_signed("!=", la, lb), b_.not_(b_.or_(one_a, one_b)))
        self._raise(bad, computed, BROADCAST, [i64(BINARY), la, lb])
        return b_.select(one_a, lb, la)

    def _ufunc_stride(self, x: tuple, n: Any) -> Any:
        """The byte stride NumPy's inner loop sees for operand `x` of a call of `n`."""
        b_, i64 = self.b, self.i64
        if x[0] == "scalar":
            return i64(0)
        own = x[2][2] if x[0] == "view" else i64(8)
        return b_.select(b_.icmp_signed("==", x[1], n), own, i64(0))

    def _rule(self, name: str, n: Any, s0: Any, s1: Any, so: Any, inplace: bool) -> Any:
        """(always, from): the second operand's NaN wins on every element where
        `always`, else on the elements from index `from` on (see the module doc)."""
        b_, i64 = self.b, self.i64
        never = (self.i1(0), n)
        if name not in ("add", "mul"):
            return never
        big = b_.icmp_signed(">", n, i64(SIMD_MIN))
        eight = [b_.icmp_signed("==", s, i64(8)) for s in (s0, s1, so)]
        scalar_second = b_.and_(b_.and_(eight[0], eight[2]), b_.icmp_signed("==", s1, i64(0)))
        always = b_.and_(big, scalar_second)
        if inplace and name == "add":
            always = b_.or_(always, b_.icmp_signed("==", n, i64(1)))
        contiguous = b_.and_(b_.and_(eight[0], eight[1]), eight[2])
        tail = b_.and_(big, contiguous)
        start = b_.select(tail, b_.and_(n, i64(~7)), n)
        return always, start

    def _final_check(self, how: str, length: Any, lt: Any, computed: Any) -> None:
        b_, i64 = self.b, self.i64
        fits = b_.or_(b_.icmp_signed("==", length, lt), b_.icmp_signed("==", length, i64(1)))
        if how == "set":
            self._raise(b_.not_(fits), computed, BROADCAST, [i64(COPY), length, lt])
            return
        form = b_.select(b_.icmp_signed("==", lt, i64(1)), i64(INPLACE_OUT), i64(INPLACE))
        self._raise(b_.not_(fits), computed, BROADCAST, [form, lt, length])

    def _raise(self, bad: Any, computed: Any, code: int, info: list[Any]) -> None:
        """If `bad`: what NumPy computed before the error (its warnings), then the error."""
        self._warn_point()
        with self.b.if_then(bad, likely=False):
            computed()
            if self._warn_block is not None:
                self._warn_raise(code, info)
            else:
                self.fail(self.i1(1), code, info)

    def _safe(self, leaves: list[Any]) -> Any:
        """i1: no view of E reads an element the target writes before E reads it
        (disjoint bytes, or the same stride and not behind the target)."""
        b_, i64 = self.b, self.i64
        tp, tn, ts = leaves[0]
        t_lo = b_.ptrtoint(tp, i64)
        t_hi = b_.add(t_lo, b_.add(b_.mul(b_.sub(tn, i64(1)), ts), i64(8)))
        ok = self.i1(1)
        for ptr, n, stride in leaves[1:]:
            lo = b_.ptrtoint(ptr, i64)
            hi = b_.add(lo, b_.add(b_.mul(b_.sub(n, i64(1)), stride), i64(8)))
            empty = b_.or_(b_.icmp_signed("==", n, i64(0)), b_.icmp_signed("==", tn, i64(0)))
            apart = b_.or_(b_.icmp_unsigned("<=", hi, t_lo), b_.icmp_unsigned("<=", t_hi, lo))
            ahead = b_.and_(
                b_.and_(b_.icmp_signed("==", stride, ts), b_.icmp_signed("==", n, tn)),
                b_.and_(b_.icmp_signed(">=", ts, i64(8)), b_.icmp_unsigned(">=", lo, t_lo)),
            )
            ok = b_.and_(ok, b_.or_(empty, b_.or_(apart, ahead)))
        return ok

    # -- the element loop -------------------------------------------------------------
    def _count(self, n: Any, body: Any) -> None:
        """for e in range(n): body(e)."""
        b_, i64 = self.b, self.i64
        before = b_.block
        head, loop, done = (self.fn.append_basic_block(x) for x in ("e_cond", "e_body", "e_end"))
        b_.branch(head)
        b_.position_at_end(head)
        e = b_.phi(i64)
        e.add_incoming(i64(0), before)
        b_.cbranch(b_.icmp_signed("<", e, n), loop, done)
        b_.position_at_end(loop)
        body(e)
        e.add_incoming(b_.add(e, i64(1)), b_.block)
        b_.branch(head)
        b_.position_at_end(done)

    def _quick(self, plan: list[tuple], e: Any) -> Any:
        """E's element `e` with one test: an inf or NaN anywhere in a tree of + - *
        leaves its root inf or NaN (x / inf would not: with a division every operation
        is tested), so a finite root had no NaN to choose and no warning; else the
        element is computed again, each operation tested (`_value`)."""
        if any(kind == "op" and extra[0] == "truediv" for kind, _, extra in plan):
            return self._value(plan, e)
        b_ = self.b
        stack: list[Any] = []
        for kind, _, extra in plan:
            if kind == "view":
                stack.append(self._element(extra, e))
            elif kind == "scalar":
                stack.append(extra)
            elif extra[0] == "neg":  # np.negative: the sign bit flipped, NaNs too
                stack.append(b_.fneg(stack.pop()))
            else:
                y, x = stack.pop(), stack.pop()
                stack.append(self.machine_op(extra[0], x, y))
        r = stack[-1]
        special = b_.not_(
            b_.fcmp_ordered("<", self.call_f("llvm.fabs.f64", [r]), self.f64(float("inf")))
        )
        start = b_.block
        with b_.if_then(special, likely=False):
            fixed = self._value(plan, e)
            end = b_.block
        out = b_.phi(self.f64)
        out.add_incoming(r, start)
        out.add_incoming(fixed, end)
        return out

    def _element(self, view: tuple, e: Any) -> Any:
        ptr, step, _ = view
        at = self.b.bitcast(self.b.gep(ptr, [self.b.mul(e, step)]), self.f64.as_pointer())
        return self.b.load(at, align=8)

    def _value(self, plan: list[tuple], e: Any) -> Any:
        """E's element `e`, each operation with its call's NaN rule and flags."""
        values: list[Any] = []
        stack: list[Any] = []
        for kind, _, extra in plan:
            if kind == "view":
                values.append(self._element(extra, e))
            elif kind == "scalar":
                values.append(extra)
            elif extra[0] == "neg":  # no NaN to choose, no warning: a sign flip
                values.append(self.b.fneg(stack.pop()))
            else:
                name, rule = extra
                y, x = stack.pop(), stack.pop()
                values.append(self._binary(name, rule, x, y, e))
            stack.append(values[-1])
        return stack[-1]

    def _binary(self, name: str, rule: Any, x: Any, y: Any, e: Any) -> Any:
        """x op y with NumPy's NaN and flags (off the hot path: only an inf/NaN result)."""
        b_ = self.b
        r = self.machine_op(name, x, y)
        special = b_.not_(
            b_.fcmp_ordered("<", self.call_f("llvm.fabs.f64", [r]), self.f64(float("inf")))
        )
        start = b_.block
        with b_.if_then(special, likely=False):
            always, first_second = rule
            second = b_.or_(always, b_.icmp_signed(">=", e, first_second))
            fixed = b_.call(self._special(name), [x, y, r, second, self.flags])
            end = b_.block
        out = b_.phi(self.f64)
        out.add_incoming(r, start)
        out.add_incoming(fixed, end)
        return out

    def _special(self, name: str) -> Any:
        """`double f(x, y, r, i1 second, i64 *flags)`: the NaN NumPy's call returns
        (`_nan`) and its warnings' bits, out of line (noinline, cold): a statement
        tests every operation of E in several places (its loops, its buffered copy,
        the warnings before an error), and inlined this made adi's one function
        tens of thousands of lines of IR that LLVM took seconds over."""
        from ._loops_scalar import FLAG_OPS

        def body(x: Any, y: Any, r: Any, second: Any) -> Any:
            fixed = _nan(self, x, y, r, second)
            self._flag_bits(name, FLAG_OPS.index(UFUNC[name]), x, y, fixed)
            return fixed

        return self.cold_function(f"ppy_loops_vector_special_{name}", body)

    def _apply(self, how: str, final: Any, target: tuple, e: Any, x: Any) -> None:
        b_ = self.b
        ptr, _, stride = target
        at = b_.bitcast(b_.gep(ptr, [b_.mul(e, stride)]), self.f64.as_pointer())
        if how != "set":
            x = self._binary(how, final, b_.load(at, align=8), x, e)
        b_.store(x, at, align=8)

    def _buffered(self, how: str, final: Any, target: tuple, plan: list, length: Any) -> None:
        """E into a malloc'ed buffer first (NumPy's temporary), then into the target."""
        b_, i64 = self.b, self.i64
        i8p = self.ir.IntType(8).as_pointer()
        size = b_.mul(b_.select(b_.icmp_signed(">", length, i64(0)), length, i64(1)), i64(8))
        raw = b_.call(_libc(self.module, "malloc"), [size])
        # NumPy's MemoryError where its temporary could not be had (out[1]: its length)
        null = b_.icmp_unsigned("==", b_.ptrtoint(raw, i64), i64(0))
        self.fail(null, NO_MEMORY, [length, i64(0), i64(0)])  # 1-D, float64
        buffer = b_.bitcast(raw, self.f64.as_pointer())
        self._count(length, lambda e: b_.store(self._quick(plan, e), b_.gep(buffer, [e])))
        one = b_.icmp_signed("==", length, i64(1))

        def put(e: Any) -> None:
            x = b_.load(b_.gep(buffer, [b_.select(one, i64(0), e)]))
            self._apply(how, final, target, e, x)

        self._count(target[1], put)
        b_.call(_libc(self.module, "free"), [b_.bitcast(buffer, i8p)])


def _nan(host: Any, x: Any, y: Any, r: Any, second: Any) -> Any:
    """The NaN NumPy's call returns: a lone NaN operand's, quieted; with both NaN,
    the second's where `second`, else the first's."""
    b_, i64, f64 = host.b, host.i64, host.f64

    def isnan(v: Any) -> Any:
        return b_.fcmp_unordered("uno", v, v)

    def quiet(v: Any) -> Any:
        return b_.bitcast(b_.or_(b_.bitcast(v, i64), i64(QUIET_BIT)), f64)

    both = b_.and_(isnan(x), isnan(y))
    lone = b_.select(isnan(x), quiet(x), b_.select(isnan(y), quiet(y), r))
    return b_.select(both, b_.select(second, quiet(y), quiet(x)), lone)


def entry_checks(host: Any) -> None:
    """Before anything runs: LAYOUT unless every array an array statement reads or
    writes has 8-byte aligned data and non-negative strides that are multiples of 8."""
    b_, i64 = host.b, host.i64
    seen: set[int] = set()
    ok = host.i1(1)
    for op in host.func.walk():
        if op.name != "loops.vector":
            continue
        for array in op.operands[: len(op.attributes["views"])]:
            if id(array) in seen:
                continue
            seen.add(id(array))
            data, _, strides = host.arrays[id(array)]
            ok = b_.and_(ok, _aligned(b_, i64, b_.ptrtoint(data, i64)))
            if host.contiguous:  # strides in elements, from the shape: never negative
                continue
            for s in strides:
                ok = b_.and_(ok, b_.and_(b_.icmp_signed(">=", s, i64(0)), _aligned(b_, i64, s)))
    if seen:
        with b_.if_then(b_.not_(ok), likely=False):
            host.finish(LAYOUT)


def _aligned(b_: Any, i64: Any, x: Any) -> Any:
    return b_.icmp_signed("==", b_.and_(x, i64(7)), i64(0))


__all__ = ["BROADCAST", "NO_MEMORY", "VectorOps", "entry_checks"]
