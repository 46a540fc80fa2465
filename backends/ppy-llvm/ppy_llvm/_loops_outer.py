"""Typed loops: `X[:] = np.minimum(X, np.add.outer(u, v))` (`loops.outer_update`).

NumPy computes `t = np.add.outer(u, v)` (t[i, j] = u[i] + v[j], integers wrapping
without a warning), then `m = np.minimum(X, t)`, then copies m into X. One pass
does the same: u and v copied first (they may be a column and a row of X, which
the pass changes), then each X[i, j] read once and written once, as
`x < t ? x : t` (NumPy's integer minimum; `>` for maximum; equal ints are equal
either way). On entry, before anything runs, a u or v whose length is not X's
(NumPy broadcasts or raises) makes the call run as Python (`LAYOUT`, the code of a
call returned before it ran).

float64: the same pass is exact wherever NumPy's loops cannot differ, and X (the
only array such a function writes) is copied on entry. Where NumPy's answer would
depend on its inner loop (a NaN met, which NaN it keeps; x and t equal with
different bits, 0.0 and -0.0) or a warning is due (a sum overflowing to inf), X
is restored from that copy and the call runs as Python from its start (`LAYOUT`):
the caller never sees the pass's writes.

Memory (malloc's NULL): no copy of X on entry is `LAYOUT` before anything ran; no copy
of u or v in the pass is, for float64, X restored and `LAYOUT`, and for integers
NumPy's MemoryError (`NO_MEMORY`, out[1..2] X's shape, out[3] its dtype), which
`np.add.outer`'s larger temporary would raise there. Python's run raises NumPy's own
where memory is short.
"""

from __future__ import annotations

from typing import Any

from ._loops_blas import _fabs, _libc
from ._loops_inplace import LAYOUT


class OuterOps:
    """`loops.outer_update`; mixed into Emitter."""

    b: Any
    i64: Any
    arrays: dict[int, Any]
    contiguous: bool
    view_of: Any
    element: Any

    def op_outer_update(self, op: Any) -> None:
        b_ = self.b
        bounds = iter(op.operands[3:])
        pu, [(_, su)] = self.view_of(op.operands[1], op.attributes["views"][0], bounds)
        pv, [(_, sv)] = self.view_of(op.operands[2], op.attributes["views"][1], bounds)
        data, shape, s0, s1 = _layout(self, op.operands[0])
        kind = op.operands[0].type.element.kind
        fn = outer_function(self, op.attributes["fn"], kind)
        special = b_.call(fn, [data, shape[0], s0, shape[1], s1, pu, su, pv, sv])
        if kind == "f64":  # NumPy's loop would decide (or no memory): X as it was, and Python
            with b_.if_then(special, likely=False):
                buffer = self.outer_copies[id(op.operands[0])]
                b_.call(copy_function(self), [data, shape[0], s0, shape[1], s1, buffer, self.i1(1)])
                self.finish(LAYOUT)
        else:  # integers: `special` is only no memory for u and v; np.add.outer's
            from ._loops_vector import NO_MEMORY  # (n0, n1) temporary would be none either

            dtype = self.i64(2 if kind == "i32" else 1)  # out[3]: int32 2, int64 1
            self.fail(special, NO_MEMORY, [shape[0], shape[1], dtype])


def _layout(host: Any, array: Any) -> tuple[Any, Any, Any, Any]:
    """(data, shape, byte stride 0, byte stride 1) of a 2-D array."""
    data, shape, strides = host.arrays[id(array)]
    size = host.i64(_size(array))
    s0, s1 = (host.b.mul(s, size) if host.contiguous else s for s in strides)
    return data, shape, s0, s1


def entry_checks(host: Any) -> None:
    """LAYOUT (run as Python, returned before anything ran) where a u or v is not as
    long as X's axis: NumPy broadcasts it or raises. Then a copy of each float64 X,
    which every exit frees (`release`)."""
    b_ = host.b
    ops = [op for op in host.func.walk() if op.name == "loops.outer_update"]
    for op in ops:
        rows, cols = host.arrays[id(op.operands[0])][1]
        for k, want in ((1, rows), (2, cols)):
            shape = host.arrays[id(op.operands[k])][1]
            n = shape[op.attributes["views"][k - 1].index("s")]
            with b_.if_then(b_.icmp_signed("!=", n, want), likely=False):
                host.finish(LAYOUT)
    host.outer_copies = {}
    for op in ops:
        target = op.operands[0]
        if target.type.element.kind != "f64" or id(target) in host.outer_copies:
            continue
        data, shape, s0, s1 = _layout(host, target)
        count = b_.mul(shape[0], shape[1])
        size = b_.mul(b_.add(count, host.i64(1)), host.i64(8))  # malloc(0) may be NULL
        raw = b_.call(_libc(host.module, "malloc"), [size])
        with b_.if_then(b_.icmp_unsigned("==", b_.ptrtoint(raw, host.i64), host.i64(0)), False):
            host.finish(LAYOUT)  # no copy to be had: Python runs it (the copies before, freed)
        buffer = b_.bitcast(raw, host.f64.as_pointer())
        b_.call(copy_function(host), [data, shape[0], s0, shape[1], s1, buffer, host.i1(0)])
        host.outer_copies[id(target)] = buffer
        host.snapshots.append(buffer)


def release(host: Any) -> None:
    """Free the copies taken on entry (called by every exit after them)."""
    i8p = host.ir.IntType(8).as_pointer()
    for buffer in host.snapshots:
        host.b.call(_libc(host.module, "free"), [host.b.bitcast(buffer, i8p)])


def copy_function(host: Any) -> Any:
    """`void ppy_loops_outer_copy(i8 *X, n0, s0, n1, s1, double *buffer, i1 back)`:
    X into the buffer (row-major), or back."""
    module, ir = host.module, host.ir
    key = "ppy_loops_outer_copy"
    fn = module.globals.get(key)
    if fn is not None:
        return fn
    i64, f64 = host.i64, host.f64
    i8p, fp = ir.IntType(8).as_pointer(), f64.as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [i8p, i64, i64, i64, i64, fp, host.i1])
    fn = ir.Function(module, fnty, name=key)
    fn.linkage = "internal"
    b_ = ir.IRBuilder(fn.append_basic_block("entry"))
    x, n0, s0, n1, s1, buffer, back = fn.args

    def row(i: Any) -> None:
        def element(j: Any) -> None:
            at = b_.bitcast(b_.gep(x, [b_.add(b_.mul(i, s0), b_.mul(j, s1))]), fp)
            kept = b_.gep(buffer, [b_.add(b_.mul(i, n1), j)])
            with b_.if_else(back) as (restore, take):
                with restore:
                    b_.store(b_.load(kept), at, align=1)
                with take:
                    b_.store(b_.load(at, align=1), kept)

        _count(b_, i64, n1, element)

    _count(b_, i64, n0, row)
    b_.ret_void()
    return fn


def _size(array: Any) -> int:
    return 4 if array.type.element.kind == "i32" else 8


def outer_function(host: Any, fn_name: str, kind: str) -> Any:
    """`i1 ppy_loops_outer_<fn>_<kind>(i8 *X, n0, s0, n1, s1, i8 *u, su, i8 *v, sv)`
    (internal; byte strides): for float64, whether an element was one NumPy's loop
    decides (`_undecided`: the caller restores X and runs Python); true too, X not
    written, where the copies of u and v could not be allocated."""
    module, ir = host.module, host.ir
    key = f"ppy_loops_outer_{fn_name}_{kind}"
    fn = module.globals.get(key)
    if fn is not None:
        return fn
    i64, f64 = host.i64, host.f64
    size = 4 if kind == "i32" else 8
    elem = f64 if kind == "f64" else ir.IntType(8 * size)
    ep, i8p = elem.as_pointer(), ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(host.i1, [i8p, i64, i64, i64, i64, i8p, i64, i8p, i64])
    fn = ir.Function(module, fnty, name=key)
    fn.linkage = "internal"
    b_ = ir.IRBuilder(fn.append_basic_block("entry"))
    x, n0, s0, n1, s1, pu, su, pv, sv = fn.args
    special = b_.alloca(host.i1)  # float64: a case NumPy's loop decides (module docstring)
    b_.store(host.i1(0), special)
    empty = b_.or_(b_.icmp_signed("==", n0, i64(0)), b_.icmp_signed("==", n1, i64(0)))
    with b_.if_then(empty, likely=False):
        b_.ret(host.i1(0))
    malloc, free = _libc(module, "malloc"), _libc(module, "free")
    ur, vr = b_.call(malloc, [b_.mul(n0, i64(size))]), b_.call(malloc, [b_.mul(n1, i64(size))])
    null = ir.Constant(i8p, None)
    short = b_.or_(b_.icmp_unsigned("==", ur, null), b_.icmp_unsigned("==", vr, null))
    with b_.if_then(short, likely=False):  # free(NULL) does nothing
        b_.call(free, [ur])
        b_.call(free, [vr])
        b_.ret(host.i1(1))
    ub, vb = b_.bitcast(ur, ep), b_.bitcast(vr, ep)
    for buffer, p, s, n in ((ub, pu, su, n0), (vb, pv, sv, n1)):  # u and v as they were

        def copy(k: Any, buffer: Any = buffer, p: Any = p, s: Any = s) -> None:
            value = b_.load(b_.bitcast(b_.gep(p, [b_.mul(k, s)]), ep), align=1)
            b_.store(value, b_.gep(buffer, [k]))

        _count(b_, i64, n, copy)
    pick = "<" if fn_name == "minimum" else ">"

    def row(i: Any) -> None:
        a = b_.load(b_.gep(ub, [i]))
        base = b_.gep(x, [b_.mul(i, s0)])

        def element(j: Any, unit: bool) -> None:
            at = (
                b_.gep(b_.bitcast(base, ep), [j])
                if unit
                else b_.bitcast(b_.gep(base, [b_.mul(j, s1)]), ep)
            )
            w = b_.load(b_.gep(vb, [j]))
            old = b_.load(at, align=1 if not unit else size)
            if kind == "f64":
                t = b_.fadd(a, w)
                keep = b_.fcmp_ordered(pick, old, t)
                b_.store(b_.or_(b_.load(special), _undecided(host, b_, a, w, t, old)), special)
            else:
                t = b_.add(a, w)  # wraps, as NumPy's
                keep = b_.icmp_signed(pick, old, t)
            b_.store(b_.select(keep, old, t), at, align=1 if not unit else size)

        unit = b_.icmp_signed("==", s1, i64(size))
        with b_.if_else(unit) as (contiguous, strided):
            with contiguous:  # constant stride: LLVM vectorizes this loop
                _count(b_, i64, n1, lambda j: element(j, True))
            with strided:
                _count(b_, i64, n1, lambda j: element(j, False))

    _count(b_, i64, n0, row)
    b_.call(free, [b_.bitcast(ub, i8p)])
    b_.call(free, [b_.bitcast(vb, i8p)])
    b_.ret(b_.load(special))
    return fn


def _undecided(host: Any, b_: Any, a: Any, w: Any, t: Any, old: Any) -> Any:
    """i1: NumPy's answer for this element depends on its loop, or warns: a NaN met
    (its pick), old and t equal with other bits (0.0 and -0.0), a + w overflowing."""
    i64, f64 = host.i64, host.f64

    def isnan(v: Any) -> Any:
        return b_.fcmp_unordered("uno", v, v)

    def finite(v: Any) -> Any:
        return b_.fcmp_ordered("<", _fabs(host.module, b_, v), f64(float("inf")))

    nan = b_.or_(isnan(t), isnan(old))
    bits = b_.icmp_unsigned("!=", b_.bitcast(old, i64), b_.bitcast(t, i64))
    zeros = b_.and_(b_.fcmp_ordered("==", old, t), bits)
    overflow = b_.and_(b_.not_(finite(t)), b_.and_(finite(a), finite(w)))
    return b_.or_(nan, b_.or_(zeros, overflow))


def _count(b_: Any, i64: Any, n: Any, body: Any) -> None:
    """for k in range(n): body(k)  (the counter a phi, so nested loops need no slots)."""
    start = b_.block
    fn = b_.function
    head, inner, done = (fn.append_basic_block(x) for x in ("n_cond", "n_body", "n_end"))
    b_.branch(head)
    b_.position_at_end(head)
    k = b_.phi(i64)
    k.add_incoming(i64(0), start)
    b_.cbranch(b_.icmp_signed("<", k, n), inner, done)
    b_.position_at_end(inner)
    body(k)
    k.add_incoming(b_.add(k, i64(1), flags=["nsw"]), b_.block)
    b_.branch(head)
    b_.position_at_end(done)


__all__ = ["OuterOps", "entry_checks", "outer_function"]
