"""Typed loops: `X[mask].mean()` / `.sum()` of a mask of comparisons
(`loops.masked_reduce`).

NumPy makes the mask (a bool array), then `X[mask]`, a fresh contiguous copy of the
selected elements in order, then its mean: `np.add.reduce` of the copy, which is +0.0
plus NumPy's `pairwise_sum` of it (fewer than 8 elements in order; up to 128, eight
accumulators over blocks of 8, joined ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)),
then the rest in order; more, the two halves at a multiple of 8, each so), divided by
the count as a double (`X[mask].sum()`: that sum). Here one pass over the operands
selects the elements into a buffer (on the stack up to STACK of them, then one malloc'ed
block of X's length), eight elements at a time where every operand steps by one element,
and the same sum runs over the buffer. Which NaN NumPy's compiled sum returns depends on
the order its compiler gave the additions (`_kernels.PAIRS_TOP`); a sum that is inf or
NaN (NumPy's overflow or invalid warning, or its NaN's bits), a mean below the normal
range (the division's underflow, which np.errstate may report), an empty selection's
mean (NumPy's "Mean of empty slice" warning and NaN) and operands of lengths that differ
(NumPy broadcasts or raises) and a selection whose block cannot be allocated (Python's
run raises NumPy's MemoryError where memory is still short) are left to Python: the
call returns RERUN (the front end emits the op only in functions that write no array
but those they make up front). Every
other sum of finite values is one association of IEEE additions, the same bits in any
operand order. `ppy_loops_probe_pairwise` is the sum alone: the adapter proves it
against NumPy's on this build before the library runs (ppy_numpy._runtime.masked).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ._loops_blas import _libc
from ._loops_flip import RERUN

STACK = 1024  # selected elements kept on the stack before one malloc of X's length
LANES = 8  # elements per step of the selecting pass where every operand is contiguous
LEAF = 128  # NumPy's PW_BLOCKSIZE
PROBE = "ppy_loops_probe_pairwise"
TINY = 2.2250738585072014e-308  # the least normal double
_ORDERED = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "=="}


class MaskedOps:
    """`loops.masked_reduce`; mixed into Emitter."""

    b: Any
    ir: Any
    i64: Any
    arrays: dict[int, Any]
    contiguous: bool
    fail: Any
    put: Any
    v: Any

    def op_masked_reduce(self, op: Any) -> None:
        b_ = self.b
        na = op.attributes["arrays"]
        vectors = op.operands[: 1 + na]
        scalars = [self.v(s) for s in op.operands[1 + na :]]
        args: list[Any] = []
        n = None
        for k, array in enumerate(vectors):
            data, shape, strides = self.arrays[id(array)]
            step = b_.mul(strides[0], self.i64(8)) if self.contiguous else strides[0]
            if k == 0:
                n = shape[0]
                args += [data, n, step]
            else:  # NumPy broadcasts a length-1 mask array, or raises: Python's
                self.fail(b_.icmp_signed("!=", shape[0], n), RERUN, [])
                args += [data, step]
        tree, reduce = tuple(op.attributes["tree"]), op.attributes["reduce"]
        fn = masked_function(self, tree, na, len(scalars), reduce)
        both = b_.call(fn, [*args, *scalars])
        self.fail(b_.extract_value(both, 1), RERUN, [])
        self.put(op, b_.extract_value(both, 0))


def masked_function(host: Any, tree: tuple[str, ...], na: int, ns: int, reduce: str) -> Any:
    """`{double, i1} ppy_loops_masked_<key>(i8 *x, n, sx, (i8 *a, sa)*na, double*ns)`
    (internal; byte strides): the mean (or the sum), and true for RERUN."""
    module, ir = host.module, host.ir
    text = f"{tree}|{na}|{ns}|{reduce}".encode()
    key = "ppy_loops_masked_" + hashlib.sha256(text).hexdigest()[:16]
    fn = module.globals.get(key)
    if fn is not None:
        return fn
    i64, f64, i1 = host.i64, host.f64, ir.IntType(1)
    i8p, fp = ir.IntType(8).as_pointer(), f64.as_pointer()
    params = [i8p, i64, i64] + [i8p, i64] * na + [f64] * ns
    pair = ir.LiteralStructType([f64, i1])
    fn = ir.Function(module, ir.FunctionType(pair, params), name=key)
    fn.linkage = "internal"
    b_ = ir.IRBuilder(fn.append_basic_block("entry"))
    x, n, sx = fn.args[:3]
    bases = [x] + [fn.args[3 + 2 * k] for k in range(na)]
    steps = [sx] + [fn.args[4 + 2 * k] for k in range(na)]
    values = list(fn.args[3 + 2 * na :])
    stack = b_.bitcast(b_.alloca(ir.ArrayType(f64, STACK)), fp)
    count, buffer, heap = b_.alloca(i64), b_.alloca(fp), b_.alloca(i8p)
    b_.store(i64(0), count)
    b_.store(stack, buffer)
    b_.store(ir.Constant(i8p, None), heap)

    def element(k: int, j: Any) -> Any:  # mask array k (0: X itself) at element j
        ptr = b_.gep(bases[k], [b_.mul(j, steps[k])])
        return b_.load(b_.bitcast(ptr, fp), align=1)

    def push(j: Any) -> None:
        """X[j] onto the selection; past STACK elements, the selection moves to the heap."""
        k = b_.load(count)
        full = b_.and_(
            b_.icmp_signed("==", k, i64(STACK)),
            b_.icmp_unsigned("==", b_.load(heap), ir.Constant(i8p, None)),
        )
        with b_.if_then(full, likely=False):
            block = b_.call(_libc(module, "malloc"), [b_.mul(n, i64(8))])
            with b_.if_then(b_.icmp_unsigned("==", b_.ptrtoint(block, i64), i64(0)), False):
                b_.ret(b_.insert_value(ir.Constant(pair, ir.Undefined), i1(1), 1))  # RERUN
            b_.store(block, heap)
            moved = b_.bitcast(block, fp)
            _copy(host, b_, stack, moved, i64(STACK))
            b_.store(moved, buffer)
        b_.store(element(0, j), b_.gep(b_.load(buffer), [k]))
        b_.store(b_.add(k, i64(1)), count)

    # the selecting pass: LANES at a time where every operand steps by 8 bytes
    unit = i1(1)
    for s in steps:
        unit = b_.and_(unit, b_.icmp_signed("==", s, i64(8)))
    wide = b_.select(unit, b_.and_(n, i64(-LANES)), i64(0))
    vt = ir.VectorType(f64, LANES)
    splats = [_splat(ir, b_, s, vt) for s in values]

    def chunk(j: Any) -> None:
        loads = []
        for k in range(len(bases)):
            ptr = b_.bitcast(b_.gep(bases[k], [b_.mul(j, i64(8))]), vt.as_pointer())
            loads.append(b_.load(ptr, align=1))
        hits = b_.bitcast(_mask(b_, tree, loads, splats), ir.IntType(LANES))
        hits = b_.zext(hits, i64)
        with b_.if_then(b_.icmp_unsigned("!=", hits, i64(0)), likely=False):
            # each set lane in order: the lowest bit, then clear it
            _bits_loop(host, b_, hits, lambda lane: push(b_.add(j, lane)))

    _counted(host, b_, i64(0), wide, LANES, chunk)

    def single(j: Any) -> None:
        loads = [element(k, j) for k in range(len(bases))]
        with b_.if_then(_mask(b_, tree, loads, values), likely=False):
            push(j)

    _counted(host, b_, wide, n, 1, single)
    k = b_.load(count)
    total = b_.fadd(f64(0.0), b_.call(pairwise_function(host), [b_.load(buffer), k]))
    rerun = b_.fcmp_unordered("uno", b_.fsub(total, total), f64(0.0))  # inf or NaN
    mean = total  # an empty selection's sum: +0.0, NumPy's too
    if reduce == "mean":
        rerun = b_.or_(b_.icmp_signed("==", k, i64(0)), rerun)
        mean = b_.fdiv(total, b_.sitofp(k, f64))
        # a mean below the normal range from a sum that is not zero may have underflowed,
        # which NumPy reports under np.errstate(under=...): Python's, where it is rare
        fabs = module.declare_intrinsic("llvm.fabs", [f64])
        tiny = b_.fcmp_ordered("<", b_.call(fabs, [mean]), f64(TINY))
        rerun = b_.or_(rerun, b_.and_(tiny, b_.fcmp_unordered("!=", total, f64(0.0))))
    block = b_.load(heap)
    with b_.if_then(b_.icmp_unsigned("!=", block, ir.Constant(i8p, None)), likely=False):
        b_.call(_libc(module, "free"), [block])
    result = b_.insert_value(ir.Constant(pair, ir.Undefined), mean, 0)
    b_.ret(b_.insert_value(result, rerun, 1))
    return fn


def _splat(ir: Any, b_: Any, value: Any, vt: Any) -> Any:
    v = ir.Constant(vt, ir.Undefined)
    for lane in range(vt.count):
        v = b_.insert_element(v, value, ir.IntType(32)(lane))
    return v


def _mask(b_: Any, tree: tuple[str, ...], loads: list[Any], scalars: list[Any]) -> Any:
    """The mask's i1 (or vector of i1) from the postfix tree."""
    stack: list[Any] = []
    for item in tree:
        if item[0] == "a" and item[1:].isdigit():
            stack.append(loads[1 + int(item[1:])])
        elif item[0] == "s" and item[1:].isdigit():
            stack.append(scalars[int(item[1:])])
        elif item in ("and", "or"):
            right, left = stack.pop(), stack.pop()
            stack.append(b_.and_(left, right) if item == "and" else b_.or_(left, right))
        else:
            right, left = stack.pop(), stack.pop()
            if item == "ne":  # NumPy's != of a NaN is true
                stack.append(b_.fcmp_unordered("!=", left, right))
            else:
                stack.append(b_.fcmp_ordered(_ORDERED[item], left, right))
    return stack.pop()


def _counted(host: Any, b_: Any, lo: Any, hi: Any, step: int, body: Any) -> None:
    """for (j = lo; j < hi; j += step) body(j)."""
    i64 = host.i64
    fn = b_.function
    head, inner, done = (fn.append_basic_block(x) for x in ("m_cond", "m_body", "m_end"))
    start = b_.block
    b_.branch(head)
    b_.position_at_end(head)
    j = b_.phi(i64)
    j.add_incoming(lo, start)
    b_.cbranch(b_.icmp_signed("<", j, hi), inner, done)
    b_.position_at_end(inner)
    body(j)
    j.add_incoming(b_.add(j, i64(step)), b_.block)
    b_.branch(head)
    b_.position_at_end(done)


def _bits_loop(host: Any, b_: Any, bits: Any, body: Any) -> None:
    """body(lane) for each set bit of `bits` (i64), lowest first."""
    ir, i64 = host.ir, host.i64
    fn = b_.function
    head, inner, done = (fn.append_basic_block(x) for x in ("b_cond", "b_body", "b_end"))
    start = b_.block
    b_.branch(head)
    b_.position_at_end(head)
    left = b_.phi(i64)
    left.add_incoming(bits, start)
    b_.cbranch(b_.icmp_unsigned("!=", left, i64(0)), inner, done)
    b_.position_at_end(inner)
    cttz = host.module.globals.get("llvm.cttz.i64") or ir.Function(
        host.module, ir.FunctionType(i64, [i64, ir.IntType(1)]), name="llvm.cttz.i64"
    )
    body(b_.call(cttz, [left, ir.IntType(1)(1)]))
    left.add_incoming(b_.and_(left, b_.sub(left, i64(1))), b_.block)
    b_.branch(head)
    b_.position_at_end(done)


def _copy(host: Any, b_: Any, src: Any, dst: Any, n: Any) -> None:
    _counted(
        host, b_, host.i64(0), n, 1, lambda j: b_.store(b_.load(b_.gep(src, [j])), b_.gep(dst, [j]))
    )


def pairwise_function(host: Any) -> Any:
    """`double ppy_loops_pairwise(double *a, i64 n)` (internal): NumPy's pairwise_sum
    of a contiguous buffer; and the library's `ppy_loops_probe_pairwise` (+0.0 plus it,
    np.add.reduce's value), which the adapter proves."""
    module, ir = host.module, host.ir
    fn = module.globals.get("ppy_loops_pairwise")
    if fn is not None:
        return fn
    i64, f64 = host.i64, host.f64
    fp = f64.as_pointer()
    fn = ir.Function(module, ir.FunctionType(f64, [fp, i64]), name="ppy_loops_pairwise")
    fn.linkage = "internal"
    a, n = fn.args
    b_ = ir.IRBuilder(fn.append_basic_block("entry"))
    vt = ir.VectorType(f64, 8)
    one, acc = b_.alloca(f64), b_.alloca(vt)  # in the entry block: registers after mem2reg
    small, check, mid, big = (fn.append_basic_block(x) for x in ("small", "check", "mid", "big"))
    b_.cbranch(b_.icmp_signed("<", n, i64(8)), small, check)

    def fold(start: Any, first: Any) -> Any:  # first + a[start] + ... + a[n - 1], in order
        b_.store(first, one)
        _counted(
            host,
            b_,
            start,
            n,
            1,
            lambda j: b_.store(b_.fadd(b_.load(one), b_.load(b_.gep(a, [j]))), one),
        )
        return b_.load(one)

    b_.position_at_end(small)
    b_.ret(fold(i64(0), f64(0.0)))
    b_.position_at_end(check)
    b_.cbranch(b_.icmp_signed("<=", n, i64(LEAF)), mid, big)
    b_.position_at_end(mid)
    b_.store(b_.load(b_.bitcast(a, vt.as_pointer()), align=1), acc)
    n8 = b_.and_(n, i64(-8))

    def block(j: Any) -> None:
        v = b_.load(b_.bitcast(b_.gep(a, [j]), vt.as_pointer()), align=1)
        b_.store(b_.fadd(b_.load(acc), v), acc)

    _counted(host, b_, i64(8), n8, 8, block)
    r = b_.load(acc)
    lane = [b_.extract_element(r, ir.IntType(32)(k)) for k in range(8)]
    res = b_.fadd(
        b_.fadd(b_.fadd(lane[0], lane[1]), b_.fadd(lane[2], lane[3])),
        b_.fadd(b_.fadd(lane[4], lane[5]), b_.fadd(lane[6], lane[7])),
    )
    b_.ret(fold(n8, res))
    b_.position_at_end(big)
    half = b_.and_(b_.lshr(n, i64(1)), i64(-8))
    left = b_.call(fn, [a, half])
    right = b_.call(fn, [b_.gep(a, [half]), b_.sub(n, half)])
    b_.ret(b_.fadd(left, right))
    probe = ir.Function(module, ir.FunctionType(f64, [fp, i64]), name=PROBE)
    pb = ir.IRBuilder(probe.append_basic_block("entry"))
    pb.ret(pb.fadd(f64(0.0), pb.call(fn, list(probe.args))))
    return fn


__all__ = ["PROBE", "MaskedOps", "masked_function", "pairwise_function"]
