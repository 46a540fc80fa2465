"""The loops dialect's function in LLVM IR: its frame, arrays and control flow.

See `_loops` for the calling convention. Locals are stack slots made up front
(mem2reg makes them registers); element accesses check bounds as NumPy does
(negative indices wrap) and return IndexError's details; `contiguous` builds the
variant for C-order arrays, whose strides follow from the shape.
"""

from __future__ import annotations

from typing import Any

from ppy_core.ir.dialects.loops import is_loops

from ._errors import LlvmBackendError
from ._loops_blas import BlasOps
from ._loops_defer import use_counts
from ._loops_flat import flat_entry_checks
from ._loops_flip import FlipOps
from ._loops_gather import GatherOps
from ._loops_inplace import InplaceOps, entry_checks
from ._loops_masked import MaskedOps
from ._loops_narrow import NarrowOps
from ._loops_outer import OuterOps, release
from ._loops_outer import entry_checks as outer_entry_checks
from ._loops_proof import Access, provable
from ._loops_scalar import ScalarOps, _bad
from ._loops_spec import restored, speculation
from ._loops_vector import VectorOps
from ._loops_vector import entry_checks as vector_entry_checks

OK, INDEX_ERROR = 0, 1
_INT_BITS = {"i32": 32, "u8": 8, "u32": 32}  # narrow elements: widened to i64 when loaded


class Emitter(
    ScalarOps, BlasOps, InplaceOps, FlipOps, GatherOps, OuterOps, VectorOps, NarrowOps, MaskedOps
):
    def __init__(
        self, func: Any, module: Any = None, sym: str = "f", contiguous: bool = False
    ) -> None:
        from llvmlite import ir

        self.ir, self.func, self.contiguous = ir, func, contiguous
        self.module = module if module is not None else ir.Module()
        self.i64, self.i32, self.i1, self.f64 = (
            ir.IntType(64),
            ir.IntType(32),
            ir.IntType(1),
            ir.DoubleType(),
        )
        ptr = self.i64.as_pointer()
        fnty = ir.FunctionType(self.i32, [ptr, ptr])
        self.fn = ir.Function(self.module, fnty, name=sym)
        self.args_ptr, self.out = self.fn.args
        entry = self.entry = self.fn.append_basic_block("entry")
        self.b = ir.IRBuilder(entry)
        self.slots: dict[str, Any] = {}
        self.values: dict[int, Any] = {}
        self.arrays: dict[int, tuple[Any, list[Any], list[Any]]] = {}
        self.loop_stack: list[tuple[Any, Any]] = []
        self.counters: dict[int, Any] = {}
        self.tags: dict[int, Any] = {}
        self.proven: frozenset[int] = frozenset()  # accesses `in_bounds` proved (ids)
        self.uses = use_counts(func)
        self.covered: frozenset[int] = frozenset()  # float ops a speculating copy leaves untested
        self.rerun: Any = None  # where a speculating copy's exits go
        self.deferred: set[int] = set()  # float results whose test their consumer makes
        self.flags = self.b.alloca(self.i64, name="flags")
        self.snapshots: list[Any] = []  # buffers every exit frees (`_loops_outer`)
        self.b.store(self.i64(0), self.flags)

    def ty(self, t: Any) -> Any:
        kind = getattr(t, "kind", "")
        return {"i64": self.i64, "i1": self.i1, "f64": self.f64}.get(kind) or _bad(f"type {t}")

    def emit(self) -> None:
        if not is_loops(self.func):
            raise LlvmBackendError("E2040", "not a loops function")
        self.allocate()
        word = 0
        for arg, py in zip(self.func.entry.args, self.func.attributes["py_args"], strict=True):
            if py == "array":
                rank = len(arg.type.shape)
                raw = self.b.load(self.b.gep(self.args_ptr, [self.i64(word)]))
                record = self.b.inttoptr(raw, self.i64.as_pointer())
                fields = [self.b.load(self.b.gep(record, [self.i64(k)])) for k in (0, 2, 3)]
                data = self.b.inttoptr(fields[0], self.ir.IntType(8).as_pointer())
                shape_ptr, stride_ptr = (
                    self.b.inttoptr(f, self.i64.as_pointer()) for f in fields[1:]
                )
                shape = [self.b.load(self.b.gep(shape_ptr, [self.i64(k)])) for k in range(rank)]
                strides = [self.b.load(self.b.gep(stride_ptr, [self.i64(k)])) for k in range(rank)]
                if self.contiguous:  # row-major: strides (in elements) from the shape
                    strides = [self.i64(1)]
                    for dim in reversed(shape[1:]):
                        strides.insert(0, self.b.mul(strides[0], dim, flags=["nsw"]))
                self.arrays[id(arg)] = (data, shape, strides)
                word += 1
            else:
                if py != "unused":
                    raw = self.b.load(self.b.gep(self.args_ptr, [self.i64(word)]))
                    self.values[id(arg)] = raw if py == "int" else self.b.bitcast(raw, self.f64)
                word += 1
        entry_checks(self)  # LAYOUT before anything runs: Python takes the call
        vector_entry_checks(self)
        flat_entry_checks(self)  # flat views: C-contiguous arrays of one shape
        outer_entry_checks(self)  # likewise: lengths NumPy would broadcast
        self.block(self.func.entry)
        if not self.b.block.is_terminated:
            self.finish(OK)

    def finish(self, code: int) -> None:
        release(self)  # the copies taken on entry, before any exit
        self.b.store(self.b.load(self.flags), self.b.gep(self.out, [self.i64(4)]))
        self.b.ret(self.i32(code))

    def fail(self, cond: Any, code: int, info: list[Any]) -> None:
        """If `cond`: write `info` to out[1..] and return `code` (in a speculating
        copy: rerun the loop tested, which reaches this exit as Python would)."""
        if self.rerun is not None:
            go_on = self.fn.append_basic_block("spec_ok")
            self.b.cbranch(cond, self.rerun, go_on)
            self.b.position_at_end(go_on)
            return
        with self.b.if_then(cond, likely=False):
            for k, v in enumerate(info):
                self.b.store(v, self.b.gep(self.out, [self.i64(1 + k)]))
            self.finish(code)

    def block(self, block: Any) -> None:
        for op in block.ops:
            if self.b.block.is_terminated:  # after break/continue/return: dead code
                self.b.position_at_end(self.fn.append_basic_block("dead"))
            getattr(self, "op_" + op.name.split(".", 1)[1])(op)

    def v(self, value: Any) -> Any:
        return self.values[id(value)]

    def put(self, op: Any, value: Any, tag: Any = None) -> None:
        self.values[id(op.results[0])] = value
        if tag is not None:
            self.tags[id(op.results[0])] = tag

    def tag(self, value: Any) -> Any:
        """i1: whether this double is an np.float64 (a "fnum" carries it at run time)."""
        owner = getattr(value, "owner", None)
        py = getattr(owner, "attributes", {}).get("py")
        if py == "fnum":
            return self.tags[id(value)]
        return self.i1(1 if py == "f64" else 0)

    def slot(self, name: str, t: Any) -> Any:
        if name not in self.slots:
            self.slots[name] = self.alloca(t, name)
        return self.slots[name]

    def alloca(self, t: Any, name: str) -> Any:
        """A stack slot in the entry block (mem2reg makes it a register); every slot
        is made before any other code (`allocate`), so the builder never moves."""
        if self.b.block is not self.entry or self.b.block.is_terminated:
            _bad(f"slot {name} made after the entry block")
        return self.b.alloca(t, name=name)

    def allocate(self) -> None:
        """Every local slot and every loop counter, up front."""
        for op in self.func.walk():
            if op.name == "loops.set":
                t = op.operands[0].type
            elif op.name == "loops.get":
                t = op.results[0].type
                if op.attributes.get("py") == "fnum":
                    self.slot(op.attributes["slot"] + "$tag", self.i1)
            elif op.name == "loops.for":
                self.counters[id(op)] = self.alloca(self.i64, "it")
                self.slot(op.attributes["slot"], self.i64)
                continue
            else:
                continue
            self.slot(op.attributes["slot"], self.ty(t))

    # -- arrays ----------------------------------------------------------------------
    def op_dim(self, op: Any) -> None:
        self.put(op, self.arrays[id(op.operands[0])][1][op.attributes["axis"]])

    def address(self, op: Any, array: Any, indices: list[Any]) -> Any:
        """The element's pointer, each index checked (or proven) within [0, n) first:
        so the offset arithmetic cannot wrap (`nsw`) and stays inside the array's
        buffer (`inbounds`), which lets LLVM's alias analysis follow it."""
        data, shape, strides = self.arrays[id(array)]
        b_, offset = self.b, self.i64(0)
        names = op.attributes.get("axes") or range(len(indices))  # what IndexError names
        nsw = ["nsw"]
        for axis, index in enumerate(indices):
            i = self.v(index)
            if id(op) not in self.proven:  # else in [0, n) on every iteration (`in_bounds`)
                n = shape[axis]
                i = b_.select(b_.icmp_signed("<", i, self.i64(0)), b_.add(i, n), i)
                out = b_.icmp_unsigned(">=", i, n)  # negative after wrapping: huge unsigned
                self.fail(out, INDEX_ERROR, [self.v(index), self.i64(names[axis]), n])
            offset = b_.add(offset, b_.mul(i, strides[axis], flags=nsw), flags=nsw)
        elem = self.element(array).as_pointer()
        if self.contiguous:  # strides in elements
            return b_.gep(b_.bitcast(data, elem), [offset], inbounds=True)
        return b_.bitcast(b_.gep(data, [offset], inbounds=True), elem)

    def element(self, array: Any) -> Any:
        """The LLVM type of the array's elements."""
        kind = array.type.element.kind
        return self.f64 if kind == "f64" else self.ir.IntType(_INT_BITS.get(kind, 64))

    def op_load(self, op: Any) -> None:
        value = self.b.load(self.address(op, op.operands[0], op.operands[1:]), align=1)
        kind = op.operands[0].type.element.kind
        if kind == "i32":  # widened: NumPy's value as a Python int
            value = self.b.sext(value, self.i64)
        elif kind in ("u8", "u32"):
            value = self.b.zext(value, self.i64)
        self.put(op, value)

    def op_store(self, op: Any) -> None:
        ptr = self.address(op, op.operands[0], op.operands[2:])
        value = self.v(op.operands[1])
        if op.operands[0].type.element.kind in _INT_BITS:  # a value the front end proved fits
            value = self.b.trunc(value, ptr.type.pointee)
        self.b.store(value, ptr, align=1)

    # -- control flow ----------------------------------------------------------------
    def op_for(self, op: Any) -> None:
        """`for` over range(lo, hi, step); an innermost loop whose accesses are proven in
        bounds on entry (`_loops_proof`) runs a copy without their checks."""
        b_, step = self.b, op.attributes["step"]
        lo, hi = self.v(op.operands[0]), self.v(op.operands[1])
        done = self.fn.append_basic_block("for_end")
        accesses = provable(op)
        if accesses:
            fast, checked = (self.fn.append_basic_block(n) for n in ("proven", "checked"))
            b_.cbranch(self.in_bounds(accesses, lo, hi, step), fast, checked)
            b_.position_at_end(fast)
            outer, self.proven = self.proven, self.proven | {id(a.op) for a in accesses}
            try:
                self.speculate(op, lo, hi, done)
            finally:
                self.proven = outer
            b_.position_at_end(checked)
            self.loop(op, lo, hi, done)
        else:
            self.speculate(op, lo, hi, done)
        b_.position_at_end(done)

    def speculate(self, op: Any, lo: Any, hi: Any, done: Any) -> None:
        """The loop, first as a copy whose covered float ops carry no inf/NaN test
        (`_loops_spec`); when an accumulator ends inf or NaN, or the copy would leave
        the function, the locals it wrote are restored and the tested copy runs."""
        covered, accumulators = speculation(op)
        if not covered:
            self.loop(op, lo, hi, done)
            return
        b_ = self.b
        names = [n for name in restored(op) for n in (name, name + "$tag") if n in self.slots]
        saved = [(self.slots[n], b_.load(self.slots[n])) for n in names]
        ended, rerun = self.fn.append_basic_block("spec_end"), self.fn.append_basic_block("rerun")
        outer = self.covered, self.rerun
        self.covered, self.rerun = covered, rerun
        try:
            self.loop(op, lo, hi, ended)
        finally:
            self.covered, self.rerun = outer
        b_.position_at_end(ended)
        finite = self.i1(1)
        for name in accumulators:
            value = b_.load(self.slots[name])
            magnitude = self.call_f("llvm.fabs.f64", [value])
            finite = b_.and_(finite, b_.fcmp_ordered("<", magnitude, self.f64(float("inf"))))
        b_.cbranch(finite, done, rerun)
        b_.position_at_end(rerun)
        for slot, value in saved:
            b_.store(value, slot)
        self.loop(op, lo, hi, done)

    def loop(self, op: Any, lo: Any, hi: Any, done: Any) -> None:
        b_, step = self.b, op.attributes["step"]
        counter = self.counters[id(op)]  # Python's hidden iterator, not the slot
        b_.store(lo, counter)
        cond, body, inc = (
            self.fn.append_basic_block(n) for n in ("for_cond", "for_body", "for_inc")
        )
        b_.branch(cond)
        b_.position_at_end(cond)
        it = b_.load(counter)
        b_.cbranch(b_.icmp_signed("<" if step > 0 else ">", it, hi), body, done)
        b_.position_at_end(body)
        b_.store(it, self.slot(op.attributes["slot"], self.i64))
        self.loop_stack.append((inc, done))
        self.block(op.regions[0].block)
        self.loop_stack.pop()
        if not b_.block.is_terminated:
            b_.branch(inc)
        b_.position_at_end(inc)
        it = b_.load(counter)
        if abs(step) == 1:  # it < hi (or > hi): one step more cannot leave int64
            b_.store(b_.add(it, self.i64(step), flags=["nsw"]), counter)
            b_.branch(cond)
            return
        # a longer step past int64's end: Python's range is over, as the test would say
        both = b_.call(self.overflow_add(), [it, self.i64(step)])
        b_.store(b_.extract_value(both, 0), counter)
        b_.cbranch(b_.extract_value(both, 1), done, cond)

    def overflow_add(self) -> Any:
        name = "llvm.sadd.with.overflow.i64"
        fn = self.module.globals.get(name)
        if fn is None:
            pair = self.ir.LiteralStructType([self.i64, self.i1])
            fn = self.ir.Function(self.module, self.ir.FunctionType(pair, [self.i64] * 2), name)
        return fn

    def in_bounds(self, accesses: list[Access], lo: Any, hi: Any, step: int) -> Any:
        """i1: every index of every access lies in [0, n) at both ends of the counter's
        range ([lo, hi - 1], or [hi + 1, lo] stepping down), summed in 128 bits."""
        b_, wide = self.b, self.ir.IntType(128)
        ends = (lo, b_.sub(hi, self.i64(1))) if step > 0 else (b_.add(hi, self.i64(1)), lo)
        ok, seen = self.i1(1), set()
        for access in accesses:
            shape = self.arrays[id(access.array)][1]
            for axis, form in enumerate(access.forms):
                key = (id(access.array), axis, form.const, tuple(sorted(form.terms.items())))
                if key in seen:  # `L[j, k] * L[j, k]`: one test
                    continue
                seen.add(key)
                n = b_.sext(shape[axis], wide)
                for end in ends if ("iv",) in form.terms else ends[:1]:
                    total = wide(form.const)
                    for key, coeff in form.terms.items():
                        if key[0] == "iv":
                            var = end
                        elif key[0] == "slot":  # a local the loop never writes
                            var = b_.load(self.slots[key[1]])
                        else:
                            var = self.arrays[key[1]][1][key[2]]
                        total = b_.add(total, b_.mul(wide(coeff), b_.sext(var, wide)))
                    inside = b_.and_(
                        b_.icmp_signed(">=", total, wide(0)), b_.icmp_signed("<", total, n)
                    )
                    ok = b_.and_(ok, inside)
        return ok

    def op_while(self, op: Any) -> None:
        b_ = self.b
        cond, body, done = (
            self.fn.append_basic_block(n) for n in ("while_cond", "while_body", "while_end")
        )
        b_.branch(cond)
        b_.position_at_end(cond)
        b_.cbranch(self.region_value(op.regions[0]), body, done)
        b_.position_at_end(body)
        self.loop_stack.append((cond, done))
        self.block(op.regions[1].block)
        self.loop_stack.pop()
        if not b_.block.is_terminated:
            b_.branch(cond)
        b_.position_at_end(done)

    def op_if(self, op: Any) -> None:
        b_ = self.b
        then, orelse, done = (self.fn.append_basic_block(n) for n in ("then", "else", "endif"))
        b_.cbranch(self.v(op.operands[0]), then, orelse)
        for bb, region in ((then, op.regions[0]), (orelse, op.regions[1])):
            b_.position_at_end(bb)
            self.block(region.block)
            if not b_.block.is_terminated:
                b_.branch(done)
        b_.position_at_end(done)

    def op_break(self, op: Any) -> None:
        self.b.branch(self.loop_stack[-1][1])

    def op_continue(self, op: Any) -> None:
        self.b.branch(self.loop_stack[-1][0])

    def op_return(self, op: Any) -> None:
        if op.operands:
            value = self.v(op.operands[0])
            if value.type == self.f64:
                value = self.b.bitcast(value, self.i64)
            elif value.type == self.i1:
                value = self.b.zext(value, self.i64)
            self.b.store(value, self.b.gep(self.out, [self.i64(0)]))
            if op.operands[0].owner.attributes.get("py") == "fnum":  # out[1]: np.float64?
                tag = self.b.zext(self.tag(op.operands[0]), self.i64)
                self.b.store(tag, self.b.gep(self.out, [self.i64(1)]))
        self.finish(OK)

    def op_yield(self, op: Any) -> None:  # handled by region_value
        _bad("yield outside a condition")


__all__ = ["INDEX_ERROR", "OK", "Emitter"]
