"""Typed loops: `V op= s * np.flip(W)` (`loops.flip_update`), as NumPy computes it.

NumPy makes the temporary `t = s * np.flip(W)` in full (a new array, so W may be V
itself), then runs its in-place ufunc `V op= t`. Every element of each is one IEEE
operation; what NumPy's inner loops may choose differently is only which NaN comes
out when both operands are NaN, and with a lone NaN operand every x86 loop returns
that NaN quieted. So the function keeps a lone NaN's quieted bits, and two NaNs
whose quieted bits agree; where two different NaNs meet, the lengths differ
(NumPy would broadcast a length-1 W or raise), or the temporary cannot be allocated
(Python's run raises NumPy's MemoryError where memory is still short), it returns
RERUN and the call runs as Python from its start (the front end emits the op only in
functions that write no array but those they make up front, so nothing the caller
sees was changed).
NumPy's warnings ("overflow encountered in multiply" / "... in add") come from the
operands and the result of every inf or NaN element, as for the scalar updates.
"""

from __future__ import annotations

from typing import Any

from ._loops_blas import QUIET_BIT, _libc
from ._loops_inplace import UFUNC

RERUN = 6  # return code: run the call as Python (only arrays it made were written)


class FlipOps:
    """`loops.flip_update`; mixed into Emitter (which supplies view_of, fail, ...)."""

    b: Any
    i1: Any
    i64: Any
    flags: Any
    view_of: Any
    fail: Any
    v: Any

    def op_flip_update(self, op: Any) -> None:
        bounds = iter(op.operands[3:])
        target, source = op.attributes["views"]
        pv, [(nv, sv)] = self.view_of(op.operands[0], target, bounds)
        pw, [(nw, sw)] = self.view_of(op.operands[1], source, bounds)
        fn = flip_function(self, op.attributes["op"], op.attributes["form"])
        rerun = self.b.call(fn, [pv, nv, sv, pw, nw, sw, self.v(op.operands[2]), self.flags])
        self.fail(rerun, RERUN, [])


def flip_function(host: Any, name: str, form: str) -> Any:
    """`i1 ppy_loops_flip_<op>_<form>(i8 *v, nv, sv, i8 *w, nw, sw, double s, i64 *flags)`
    (internal; byte strides, w already at np.flip's first element): true for RERUN."""
    module, ir = host.module, host.ir
    key = f"ppy_loops_flip_{name}_{form}"
    fn = module.globals.get(key)
    if fn is not None:
        return fn
    i64, f64, i1 = host.i64, host.f64, host.i1
    i8p = ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(i1, [i8p, i64, i64, i8p, i64, i64, f64, i64.as_pointer()])
    fn = ir.Function(module, fnty, name=key)
    fn.linkage = "internal"
    outer_b, outer_flags = host.b, host.flags
    b_ = host.b = ir.IRBuilder(fn.append_basic_block("entry"))
    pv, nv, sv, pw, nw, sw, s, flags = fn.args
    host.flags = flags
    try:
        with b_.if_then(b_.icmp_signed("!=", nv, nw), likely=False):
            b_.ret(i1(1))  # NumPy broadcasts or raises: Python says which
        with b_.if_then(b_.icmp_signed("==", nv, i64(0)), likely=False):
            b_.ret(i1(0))
        conflict = b_.alloca(i1)
        b_.store(i1(0), conflict)
        buffer = b_.call(_libc(module, "malloc"), [b_.mul(nv, i64(8))])
        with b_.if_then(b_.icmp_unsigned("==", b_.ptrtoint(buffer, i64), i64(0)), likely=False):
            b_.ret(i1(1))  # no temporary to be had: Python's run says what NumPy does
        temp = b_.bitcast(buffer, f64.as_pointer())

        def make(k: Any) -> None:  # t[k] = s * np.flip(W)[k]
            w = b_.load(b_.bitcast(b_.gep(pw, [b_.mul(k, sw)]), f64.as_pointer()), align=1)
            if form == "left":
                w = _exact(host, "mul", s, w, conflict)
            elif form == "right":
                w = _exact(host, "mul", w, s, conflict)
            b_.store(w, b_.gep(temp, [k]))

        def update(k: Any) -> None:  # V[k] op= t[k]
            at = b_.bitcast(b_.gep(pv, [b_.mul(k, sv)]), f64.as_pointer())
            x = b_.load(at, align=1)
            b_.store(_exact(host, name, x, b_.load(b_.gep(temp, [k])), conflict), at, align=1)

        _count(host, nv, make)
        _count(host, nv, update)
        b_.call(_libc(module, "free"), [buffer])
        b_.ret(b_.load(conflict))
    finally:
        host.b, host.flags = outer_b, outer_flags
    return fn


def _count(host: Any, n: Any, body: Any) -> None:
    """for k in range(n): body(k)."""
    b_, i64 = host.b, host.i64
    fn = b_.function
    head, inner, done = (fn.append_basic_block(x) for x in ("k_cond", "k_body", "k_end"))
    k_slot = b_.alloca(i64)
    b_.store(i64(0), k_slot)
    b_.branch(head)
    b_.position_at_end(head)
    k = b_.load(k_slot)
    b_.cbranch(b_.icmp_signed("<", k, n), inner, done)
    b_.position_at_end(inner)
    body(k)
    b_.store(b_.add(k, i64(1)), k_slot)
    b_.branch(head)
    b_.position_at_end(done)


def _exact(host: Any, name: str, a: Any, b: Any, conflict: Any) -> Any:
    """`a op b` with NumPy's bits: a lone NaN operand's quieted, two NaNs' quieted
    bits where they agree (else `conflict` is set); NumPy's flags for an inf/NaN."""
    from ._loops_scalar import FLAG_OPS

    b_, i64, f64 = host.b, host.i64, host.f64
    r = host.machine_op(name, a, b)
    special = b_.not_(b_.fcmp_ordered("<", host.call_f("llvm.fabs.f64", [r]), f64(float("inf"))))
    start = b_.block
    with b_.if_then(special, likely=False):

        def isnan(x: Any) -> Any:
            return b_.fcmp_unordered("uno", x, x)

        def quiet(x: Any) -> Any:
            return b_.or_(b_.bitcast(x, i64), i64(QUIET_BIT))

        both = b_.and_(isnan(a), isnan(b))
        differ = b_.and_(both, b_.icmp_unsigned("!=", quiet(a), quiet(b)))
        b_.store(b_.or_(b_.load(conflict), differ), conflict)
        lone = b_.select(isnan(a), quiet(a), b_.select(isnan(b), quiet(b), b_.bitcast(r, i64)))
        fixed = b_.bitcast(lone, f64)
        host._flag_bits(name, FLAG_OPS.index(UFUNC[name]), a, b, fixed)
        end = b_.block
    out = b_.phi(f64)
    out.add_incoming(r, start)
    out.add_incoming(fixed, end)
    return out


__all__ = ["RERUN", "FlipOps", "flip_function"]
