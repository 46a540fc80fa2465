"""Scalar ops of the loops dialect in LLVM IR: Python's and NumPy's meaning, bit for bit.

The mixin of `_loops_emit.Emitter`: constants, slots, casts, comparisons, binary
ops (Python's floor division and modulo, ZeroDivisionError where Python raises,
NumPy's scalar warnings as flags, the NaN payload Python and NumPy produce), the
`math` calls and short-circuit booleans.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._errors import LlvmBackendError
from ._loops_defer import defers, source

ZERO_DIVISION, MATH_DOMAIN = 2, 3  # return codes (see `_loops`)
#: the ops whose NumPy warnings are flagged: bit = event * FLAG_STRIDE + op's index
FLAG_OPS = (
    *("add", "sub", "mul", "truediv"),  # NumPy's scalar ops
    *("dot", "matmul", "sqrt"),
    *("ufunc_add", "ufunc_sub", "ufunc_mul", "ufunc_truediv"),  # in-place array updates
)
FLAG_STRIDE = 16


class ScalarOps:
    """Scalar ops; mixed into Emitter (which supplies b, values, slots, fail, ...)."""

    b: Any
    ir: Any
    i1: Any
    i64: Any
    f64: Any
    module: Any
    flags: Any
    slots: dict[str, Any]
    uses: dict[int, int]
    proven: frozenset[int]
    covered: frozenset[int]
    deferred: set[int]
    fn: Any
    v: Any
    put: Any
    tag: Any
    slot: Any
    ty: Any
    fail: Any
    block_ops: Any
    narrow_int_binop: Any

    def op_const(self, op: Any) -> None:
        t = self.ty(op.results[0].type)
        self.put(
            op, t(float(op.attributes["value"]) if t is self.f64 else int(op.attributes["value"]))
        )

    def op_get(self, op: Any) -> None:
        name = op.attributes["slot"]
        tag = self.b.load(self.slots[name + "$tag"]) if op.attributes["py"] == "fnum" else None
        self.put(op, self.b.load(self.slot(name, self.ty(op.results[0].type))), tag)

    def op_set(self, op: Any) -> None:
        value = self.v(op.operands[0])
        name = op.attributes["slot"]
        self.b.store(value, self.slot(name, value.type))
        if name + "$tag" in self.slots:
            self.b.store(self.tag(op.operands[0]), self.slots[name + "$tag"])

    def op_cast(self, op: Any) -> None:
        src, dst = self.v(op.operands[0]), self.ty(op.results[0].type)
        if src.type == dst:
            self.put(op, src, self.tag(op.operands[0]) if op.attributes["py"] == "fnum" else None)
        elif dst is self.f64 and src.type == self.i64:
            self.put(op, self.b.sitofp(src, self.f64))
        else:
            _bad(f"cast {src.type} -> {dst}")

    def op_unary(self, op: Any) -> None:
        x, name = self.v(op.operands[0]), op.attributes["op"]
        if name == "pos":
            self.put(op, x, self.tag(op.operands[0]))
        elif name == "not":
            self.put(op, self.b.xor(x, self.i1(1)))
        elif name == "invert":
            self.put(op, self.b.not_(x))
        elif x.type == self.f64:
            self.put(op, self.b.fneg(x), self.tag(op.operands[0]))
        else:
            self.put(op, self.b.sub(self.i64(0), x))

    def op_compare(self, op: Any) -> None:
        a, b = self.v(op.operands[0]), self.v(op.operands[1])
        sym = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[
            op.attributes["op"]
        ]
        if a.type == self.f64:  # ordered, but != is true on NaN (Python's)
            cmp = (
                self.b.fcmp_unordered(sym, a, b) if sym == "!=" else self.b.fcmp_ordered(sym, a, b)
            )
        else:
            cmp = self.b.icmp_signed(sym, a, b)
        self.put(op, cmp)

    def op_binop(self, op: Any) -> None:
        a, b = self.v(op.operands[0]), self.v(op.operands[1])
        name, py = op.attributes["op"], op.attributes["py"]
        if py == "int":
            self.put(op, self.int_binop(name, a, b))
            return
        if py == "i64":
            self.put(op, self.numpy_int_binop(name, a, b))
            return
        if py in ("i32", "u8"):  # _loops_narrow
            self.put(op, self.narrow_int_binop(name, py, a, b))
            return
        tag = (
            self.b.or_(self.tag(op.operands[0]), self.tag(op.operands[1])) if py == "fnum" else None
        )
        if name == "truediv" and py in ("float", "fnum"):
            which = 1 if op.attributes.get("ints") else 0
            zero = self.b.fcmp_ordered("==", b, self.f64(0.0))
            if tag is not None:  # a Python float divides by zero into an error, NumPy's not
                zero = self.b.and_(zero, self.b.not_(tag))
            self.fail(zero, ZERO_DIVISION, [self.i64(which)])
        r = self.machine_op(name, a, b)
        if id(op) in self.covered:  # a speculating copy: the accumulators' test covers it
            self.deferred.discard(id(op.results[0]))
            self.put(op, r, tag)
            return
        if defers(op, self.uses, self.proven):  # its consumer's test covers it
            self.deferred.add(id(op.results[0]))
            self.put(op, r, tag)
            return
        self.deferred.discard(id(op.results[0]))  # (the other copy of a versioned loop)
        # every NaN payload choice and NumPy event leaves a result that is inf or NaN:
        # test that alone on the hot path, settle the rest off it
        b_ = self.b
        special = b_.not_(
            b_.fcmp_ordered("<", self.call_f("llvm.fabs.f64", [r]), self.f64(float("inf")))
        )
        start = b_.block
        with b_.if_then(special, likely=False):
            if any(id(source(x)) in self.deferred for x in op.operands):
                fixed = self.settle(op, tag)  # a deferred op in the tree may have an event
            else:
                fixed = self.unless_inf_carried(op, tag, a, b, r)
            end = b_.block
        merged = b_.phi(self.f64)
        merged.add_incoming(r, start)
        merged.add_incoming(fixed, end)
        self.put(op, merged, tag)

    def unless_inf_carried(self, op: Any, tag: Any, a: Any, b: Any, r: Any) -> Any:
        """An infinite result with an infinite operand (inf + 1, inf * 2, inf / 0) is
        exact and raises no event: it skips the slow path (Floyd's `inf + d`)."""
        b_ = self.b

        def infinite(x: Any) -> Any:
            return b_.fcmp_ordered("==", self.call_f("llvm.fabs.f64", [x]), self.f64(float("inf")))

        carried = b_.and_(infinite(r), b_.or_(infinite(a), infinite(b)))
        start = b_.block
        with b_.if_then(b_.not_(carried), likely=False):
            fixed = self.settle(op, tag)
            end = b_.block
        merged = b_.phi(self.f64)
        merged.add_incoming(r, start)
        merged.add_incoming(fixed, end)
        return merged

    def machine_op(self, name: str, a: Any, b: Any) -> Any:
        return {"add": self.b.fadd, "sub": self.b.fsub, "mul": self.b.fmul, "truediv": self.b.fdiv}[
            name
        ](a, b)

    def settle(self, op: Any, tag: Any) -> Any:
        """Off the hot path: `op`'s exact result, recomputed from its operands with the
        ops that deferred their test to it (`_loops_defer`) settled first, each with
        its NaN payload and NumPy flags (the slow path leaves a finite result as is)."""
        operands = []
        for value in op.operands:
            behind = source(value)
            if id(behind) in self.deferred:
                operands.append(self.settle(behind.owner, self.tags.get(id(behind))))
            else:
                operands.append(self.v(value))
        a, b = operands
        name, py = op.attributes["op"], op.attributes["py"]
        numpy = py in ("f64", "fnum")
        flag = tag if tag is not None else self.i1(1 if numpy else 0)
        r = self.machine_op(name, a, b)
        return self.b.call(self.slow_path(name, numpy), [a, b, r, flag, self.flags])

    def slow_path(self, name: str, numpy: bool) -> Any:
        """`double f(a, b, r, i1 numpy, i64 *flags)`: the NaN payload and NumPy's flags
        of an inf/NaN result, out of line (noinline, cold): kept a call, it stays off
        the hot path instead of being speculated into selects on a loop's critical path."""

        def body(a: Any, b: Any, r: Any, tag: Any) -> Any:
            fixed = self.nan_payload(name, a, b, r)
            if numpy:
                self.numpy_flags(name, a, b, fixed, tag)
            return fixed

        return self.cold_function(f"ppy_loops_special_{name}_{int(numpy)}", body)

    def cold_function(self, key: str, body: Callable[[Any, Any, Any, Any], Any]) -> Any:
        """`double key(x, y, r, i1, i64 *flags)`, made once per module (internal,
        noinline, cold): `body(x, y, r, i1)` emits it with `self.b` and `self.flags`
        pointing into it and returns the double it returns."""
        fn = self.module.globals.get(key)
        if fn is not None:
            return fn
        ir = self.ir
        fnty = ir.FunctionType(self.f64, [self.f64, self.f64, self.f64, self.i1, self.flags.type])
        fn = ir.Function(self.module, fnty, name=key)
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        fn.attributes.add("cold")
        outer, outer_flags = self.b, self.flags
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        x, y, r, tag, self.flags = fn.args
        try:
            self.b.ret(body(x, y, r, tag))
        finally:
            self.b, self.flags = outer, outer_flags
        return fn

    def nan_payload(self, name: str, a: Any, b: Any, r: Any) -> Any:
        """Python's and NumPy's NaN when both operands are NaN: the right one's for
        + and * (their C compilers commute them), the left one's for - and /,
        quieted; LLVM leaves that choice open, so it is made explicit."""
        b_ = self.b
        first, second = (b, a) if name in ("add", "mul") else (a, b)
        pick = b_.select(b_.fcmp_unordered("uno", first, first), first, second)
        quiet = b_.or_(b_.bitcast(pick, self.i64), self.i64(0x0008000000000000))
        return b_.select(b_.fcmp_unordered("uno", a, b), b_.bitcast(quiet, self.f64), r)

    def numpy_int_binop(self, name: str, a: Any, b: Any) -> Any:
        """An np.int64 +, - or *: two's-complement wraparound, and NumPy's overflow
        warning (bit: event 1, this op) when it wrapped."""
        ir = self.ir
        pair = ir.LiteralStructType([self.i64, self.i1])
        key = {"add": "sadd", "sub": "ssub", "mul": "smul"}[name]
        intrinsic = f"llvm.{key}.with.overflow.i64"
        fn = self.module.globals.get(intrinsic)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(pair, [self.i64, self.i64]), intrinsic)
        both = self.b.call(fn, [a, b])
        with self.b.if_then(self.b.extract_value(both, 1), likely=False):
            bit = self.i64(1 << (FLAG_STRIDE + FLAG_OPS.index(name)))
            self.b.store(self.b.or_(self.b.load(self.flags), bit), self.flags)
        return self.b.extract_value(both, 0)

    def int_binop(self, name: str, a: Any, b: Any) -> Any:
        b_ = self.b
        nsw = ["nsw"]  # the front end proved every Python int here fits 63 bits
        simple = {
            "add": lambda x, y: b_.add(x, y, flags=nsw),
            "sub": lambda x, y: b_.sub(x, y, flags=nsw),
            "mul": lambda x, y: b_.mul(x, y, flags=nsw),
            "lshift": b_.shl,
            "rshift": b_.ashr,
            "and": b_.and_,
            "or": b_.or_,
            "xor": b_.xor,
        }
        if name in simple:
            return simple[name](a, b)  # the front end proved no overflow
        zero = self.i64(0)
        self.fail(
            b_.icmp_signed("==", b, zero), ZERO_DIVISION, [self.i64(2 if name == "floordiv" else 3)]
        )
        q, r = b_.sdiv(a, b), b_.srem(a, b)
        # Python rounds toward -inf: adjust when the remainder's sign differs from b's
        fix = b_.and_(
            b_.icmp_signed("!=", r, zero),
            b_.icmp_signed("!=", b_.icmp_signed("<", r, zero), b_.icmp_signed("<", b, zero)),
        )
        if name == "floordiv":
            return b_.select(fix, b_.sub(q, self.i64(1)), q)
        return b_.select(fix, b_.add(r, b), r)

    def numpy_flags(self, name: str, a: Any, b: Any, r: Any, tag: Any = None) -> None:
        """What NumPy's scalar op would warn about: invalid (NaN from non-NaN operands,
        or a signalling NaN operand), divide (a finite nonzero over zero), overflow
        (inf from finite operands)."""
        b_ = self.b
        k = FLAG_OPS.index(name)
        if tag is None:  # called only where the result is inf or NaN
            self._flag_bits(name, k, a, b, r)
            return
        with b_.if_then(tag):  # only where the value is an np.float64 at run time
            self._flag_bits(name, k, a, b, r)

    def _flag_bits(self, name: str, k: int, a: Any, b: Any, r: Any) -> None:
        b_ = self.b

        def isnan(x: Any) -> Any:
            return b_.fcmp_unordered("uno", x, x)

        def finite(x: Any) -> Any:
            return b_.fcmp_ordered("<", self.call_f("llvm.fabs.f64", [x]), self.f64(float("inf")))

        def signalling(x: Any) -> Any:  # a NaN without the quiet bit: the FPU's invalid
            quiet = b_.and_(b_.bitcast(x, self.i64), self.i64(0x0008000000000000))
            return b_.and_(isnan(x), b_.icmp_unsigned("==", quiet, self.i64(0)))

        invalid = b_.and_(
            isnan(r),
            b_.or_(b_.not_(b_.or_(isnan(a), isnan(b))), b_.or_(signalling(a), signalling(b))),
        )
        infinite = b_.and_(b_.not_(finite(r)), b_.not_(isnan(r)))
        both_finite = b_.and_(finite(a), finite(b))
        blown = b_.and_(infinite, both_finite)
        if name == "truediv":
            by_zero = b_.fcmp_ordered("==", b, self.f64(0.0))
            divide, overflow = b_.and_(blown, by_zero), b_.and_(blown, b_.not_(by_zero))
        else:
            divide, overflow = self.i1(0), blown
        bits = self.i64(0)
        for event, cond in enumerate((divide, overflow, invalid)):
            bits = b_.or_(
                bits, b_.select(cond, self.i64(1 << (event * FLAG_STRIDE + k)), self.i64(0))
            )
        b_.store(b_.or_(b_.load(self.flags), bits), self.flags)

    def call_f(self, name: str, args: list[Any]) -> Any:
        fn = self.module.globals.get(name)
        if fn is None:
            fnty = self.ir.FunctionType(self.f64, [self.f64] * len(args))
            fn = self.ir.Function(self.module, fnty, name=name)
        return self.b.call(fn, args)

    def op_call(self, op: Any) -> None:
        args = [self.v(x) for x in op.operands]
        fn, b_ = op.attributes["fn"], self.b
        if fn == "sqrt":
            self.fail(b_.fcmp_ordered("<", args[0], self.f64(0.0)), MATH_DOMAIN, [])
            self.put(op, self.call_f("llvm.sqrt.f64", args))
        elif fn in ("fabs", "abs") and args[0].type == self.f64:
            tag = self.tag(op.operands[0]) if op.attributes["py"] == "fnum" else None
            self.put(op, self.call_f("llvm.fabs.f64", args), tag)
        elif fn == "abs":
            self.put(
                op,
                b_.select(
                    b_.icmp_signed("<", args[0], self.i64(0)), b_.sub(self.i64(0), args[0]), args[0]
                ),
            )
        elif fn == "np_sqrt":  # NaN below 0 (and from a signalling NaN) with NumPy's warning
            x = args[0]
            quiet = b_.and_(b_.bitcast(x, self.i64), self.i64(0x0008000000000000))
            signalling = b_.and_(
                b_.fcmp_unordered("uno", x, x), b_.icmp_unsigned("==", quiet, self.i64(0))
            )
            invalid = b_.or_(b_.fcmp_ordered("<", x, self.f64(0.0)), signalling)
            with b_.if_then(invalid, likely=False):
                bit = self.i64(1 << (2 * FLAG_STRIDE + FLAG_OPS.index("sqrt")))
                b_.store(b_.or_(b_.load(self.flags), bit), self.flags)
            self.put(op, self.call_f("llvm.sqrt.f64", args))
        elif fn == "copysign":
            self.put(op, self.call_f("llvm.copysign.f64", args))
        elif fn in ("min", "max"):  # Python: the second only if strictly better
            a, b = args
            sym = "<" if fn == "min" else ">"
            better = b_.fcmp_ordered(sym, b, a) if a.type == self.f64 else b_.icmp_signed(sym, b, a)
            self.put(op, b_.select(better, b, a))
        else:
            _bad(f"call {fn}")

    def op_short_circuit(self, op: Any) -> None:
        lhs, b_ = self.v(op.operands[0]), self.b
        start = b_.block
        rhs_bb, done = self.fn.append_basic_block("sc_rhs"), self.fn.append_basic_block("sc_done")
        if op.attributes["op"] == "and":
            b_.cbranch(lhs, rhs_bb, done)
        else:
            b_.cbranch(lhs, done, rhs_bb)
        b_.position_at_end(rhs_bb)
        value = self.region_value(op.regions[0])
        end = b_.block
        b_.branch(done)
        b_.position_at_end(done)
        phi = b_.phi(self.i1)
        phi.add_incoming(lhs, start)
        phi.add_incoming(value, end)
        self.put(op, phi)

    def region_value(self, region: Any) -> Any:
        ops = region.block.ops
        self.block_ops(ops[:-1])
        return self.v(ops[-1].operands[0])

    def block_ops(self, ops: list[Any]) -> None:
        for op in ops:
            getattr(self, "op_" + op.name.split(".", 1)[1])(op)


def _bad(what: str) -> Any:
    raise LlvmBackendError("E2040", f"loops lowering: {what}")


__all__ = ["FLAG_OPS", "FLAG_STRIDE", "MATH_DOMAIN", "ZERO_DIVISION", "ScalarOps"]
