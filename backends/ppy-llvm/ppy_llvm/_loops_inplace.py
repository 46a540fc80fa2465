"""Typed loops: `X op= s` over a float64 array or view, as NumPy's in-place ufunc.

Every element's value is the IEEE op NumPy computes; what differs between NumPy's
inner loops is only which NaN comes out of `x op s` when both are NaN. NumPy's SIMD
loops for + and * (taken for a call over more than 8 contiguous elements) return
the scalar's, its plain loops the element's, and its one-element `+` the scalar's;
- and / always the element's. NumPy's iterator makes one call per array when it
coalesces (contiguous, or rows that abut at any stride); a 2-D view it cannot
coalesce goes through its buffer, contiguous chunks of `BUFSIZE` elements in its
iteration order (the larger stride outer, negative strides reversed). The function
keeps that rule (`_vector`), the loader runs it only under NumPy's default buffer
size, and the runtime adapter proves it per build through the exported
`ppy_loops_probe_inplace_<op>` against NumPy itself; NumPy's warnings ("overflow
encountered in multiply") come from the element and the scalar whenever a result
is inf or NaN.
"""

from __future__ import annotations

from typing import Any

from ._loops_blas import QUIET_BIT

#: NumPy's SIMD loops take calls longer than this many contiguous float64s
SIMD_MIN = 8
LAYOUT = 5  # return code: an array NumPy's iterator would not coalesce: run Python
UFUNC = {"add": "ufunc_add", "sub": "ufunc_sub", "mul": "ufunc_mul", "truediv": "ufunc_truediv"}


class InplaceOps:
    """`loops.inplace`; mixed into Emitter."""

    b: Any
    i64: Any
    f64: Any
    flags: Any
    view_of: Any
    v: Any

    def op_inplace(self, op: Any) -> None:
        ptr, axes = self.view_of(op.operands[0], op.attributes["views"], iter(op.operands[2:]))
        if len(axes) > 2:
            from ._loops_scalar import _bad

            _bad("an in-place update over more than two axes")
        (n0, s0), (n1, s1) = axes if len(axes) == 2 else [(self.i64(1), self.i64(0)), axes[0]]
        fn = inplace_function(self, op.attributes["op"])
        self.b.call(fn, [ptr, n0, s0, n1, s1, self.v(op.operands[1]), self.flags])


def inplace_function(host: Any, name: str) -> Any:
    """`void ppy_loops_inplace_<op>(i8 *p, n0, s0, n1, s1, double s, i64 *flags)`
    (internal) and its exported probe: x op= s over the 2-D view (byte strides)."""
    module, ir = host.module, host.ir
    key = f"ppy_loops_inplace_{name}"
    fn = module.globals.get(key)
    if fn is not None:
        return fn
    i64, f64 = host.i64, host.f64
    i8p = ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [i8p, i64, i64, i64, i64, f64, i64.as_pointer()])
    fn = ir.Function(module, fnty, name=key)
    fn.linkage = "internal"
    outer_b, outer_flags = host.b, host.flags
    b_ = host.b = ir.IRBuilder(fn.append_basic_block("entry"))
    p, n0, s0, n1, s1, s, flags = fn.args
    host.flags = flags
    try:
        vector = _vector(host, b_, name, n0, s0, n1, s1)
        o_slot, i_slot = b_.alloca(i64), b_.alloca(i64)
        b_.store(i64(0), o_slot)
        o_head, o_body, i_head, i_body, o_next, done = (
            fn.append_basic_block(x)
            for x in ("o_cond", "o_body", "i_cond", "i_body", "o_inc", "end")
        )
        b_.branch(o_head)
        b_.position_at_end(o_head)
        o = b_.load(o_slot)
        b_.cbranch(b_.icmp_signed("<", o, n0), o_body, done)
        b_.position_at_end(o_body)
        b_.store(i64(0), i_slot)
        b_.branch(i_head)
        b_.position_at_end(i_head)
        i = b_.load(i_slot)
        b_.cbranch(b_.icmp_signed("<", i, n1), i_body, o_next)
        b_.position_at_end(i_body)
        offset = b_.add(b_.mul(o, s0), b_.mul(i, s1))
        at = b_.bitcast(b_.gep(p, [offset]), f64.as_pointer())
        x = b_.load(at, align=1)
        r = host.machine_op(name, x, s)
        special = b_.not_(
            b_.fcmp_ordered("<", host.call_f("llvm.fabs.f64", [r]), f64(float("inf")))
        )
        start = b_.block
        with b_.if_then(special, likely=False):
            fixed = _nan(host, b_, x, s, r, vector)
            from ._loops_scalar import FLAG_OPS

            host._flag_bits(name, FLAG_OPS.index(UFUNC[name]), x, s, fixed)
            end = b_.block
        out = b_.phi(f64)
        out.add_incoming(r, start)
        out.add_incoming(fixed, end)
        b_.store(out, at, align=1)
        b_.store(b_.add(i, i64(1)), i_slot)
        b_.branch(i_head)
        b_.position_at_end(o_next)
        b_.store(b_.add(o, i64(1)), o_slot)
        b_.branch(o_head)
        b_.position_at_end(done)
        b_.ret_void()
    finally:
        host.b, host.flags = outer_b, outer_flags
    probe = ir.Function(module, fnty, name=f"ppy_loops_probe_inplace_{name}")
    pb_ = ir.IRBuilder(probe.append_basic_block("entry"))
    pb_.call(fn, list(probe.args))
    pb_.ret_void()
    return fn


def _vector(host: Any, b_: Any, name: str, n0: Any, s0: Any, n1: Any, s1: Any) -> Any:
    """i1: whether NumPy's one call over this (coalescing) view takes its SIMD loop."""
    i64 = host.i64
    if name in ("sub", "truediv"):
        return host.i1(0)
    _, n_call, s_call = _coalesced(host, b_, n0, s0, n1, s1)
    out = b_.and_(b_.icmp_signed(">", n_call, i64(SIMD_MIN)), b_.icmp_signed("==", s_call, i64(8)))
    if name == "add":  # NumPy's one-element + returns the scalar's NaN too
        out = b_.or_(out, b_.icmp_signed("==", n_call, i64(1)))
    return out


def _coalesced(host: Any, b_: Any, n0: Any, s0: Any, n1: Any, s1: Any) -> tuple[Any, Any, Any]:
    """(i1: NumPy's iterator makes one call over the 2-D view, its length, its
    |byte stride|): an axis of length 1 leaves the other; rows that abut coalesce."""
    i64 = host.i64

    def mag(x: Any) -> Any:
        return b_.select(b_.icmp_signed("<", x, i64(0)), b_.sub(i64(0), x), x)

    a0, a1 = mag(s0), mag(s1)
    one0 = b_.icmp_signed("==", n0, i64(1))
    flat = b_.or_(one0, b_.icmp_signed("==", n1, i64(1)))
    outer0 = b_.icmp_signed(">=", a0, a1)  # the larger stride outer
    n_in = b_.select(outer0, n1, n0)
    s_in = b_.select(outer0, a1, a0)
    s_out = b_.select(outer0, a0, a1)
    abut = b_.icmp_signed("==", s_out, b_.mul(s_in, n_in))
    n_call = b_.select(flat, b_.select(one0, n1, n0), b_.mul(n0, n1))
    s_call = b_.select(flat, b_.select(one0, a1, a0), s_in)
    empty = b_.icmp_signed("==", b_.mul(n0, n1), i64(0))
    return b_.or_(empty, b_.or_(flat, abut)), n_call, s_call


def entry_checks(host: Any) -> None:
    """Before anything else: LAYOUT unless every whole 2-D array the function
    updates in place is one NumPy's iterator coalesces (`_coalesced`)."""
    seen = set()
    for op in host.func.walk():
        if op.name != "loops.inplace" or op.attributes["views"] != "ss":
            continue
        array = op.operands[0]
        if id(array) in seen:
            continue
        seen.add(id(array))
        _, shape, strides = host.arrays[id(array)]
        b_ = host.b
        s0, s1 = strides
        if host.contiguous:  # strides in elements there
            s0, s1 = b_.mul(s0, host.i64(8)), b_.mul(s1, host.i64(8))
        one_call, _, _ = _coalesced(host, b_, shape[0], s0, shape[1], s1)
        with b_.if_then(b_.not_(one_call), likely=False):
            host.finish(LAYOUT)


def _nan(host: Any, b_: Any, x: Any, s: Any, r: Any, vector: Any) -> Any:
    """The NaN NumPy's loop returns: a lone NaN operand's, quieted; with both NaN,
    the scalar's where the call is `vector`, else the element's."""
    i64, f64 = host.i64, host.f64

    def isnan(v: Any) -> Any:
        return b_.fcmp_unordered("uno", v, v)

    def quiet(v: Any) -> Any:
        return b_.bitcast(b_.or_(b_.bitcast(v, i64), i64(QUIET_BIT)), f64)

    both = b_.and_(isnan(x), isnan(s))
    lone = b_.select(isnan(x), quiet(x), b_.select(isnan(s), quiet(s), r))
    return b_.select(both, b_.select(vector, quiet(s), quiet(x)), lone)


__all__ = ["LAYOUT", "SIMD_MIN", "UFUNC", "InplaceOps", "entry_checks", "inplace_function"]
