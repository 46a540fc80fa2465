"""Typed loops: `X[:] = np.minimum(X, np.add.outer(u, v))` (`loops.outer_update`).

NumPy computes `t = np.add.outer(u, v)` (t[i, j] = u[i] + v[j], integers wrapping
without a warning), then `m = np.minimum(X, t)`, then copies m into X. One pass
does the same: u and v copied first (they may be a column and a row of X, which
the pass changes), then each X[i, j] read once and written once, as
`x < t ? x : t` (NumPy's integer minimum; `>` for maximum; equal ints are equal
either way). On entry, before anything runs, a u or v whose length is not X's
(NumPy broadcasts or raises) makes the call run as Python (`LAYOUT`, the code of a
call returned before it ran).
"""

from __future__ import annotations

from typing import Any

from ._loops_blas import _libc
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
        data, shape, strides = self.arrays[id(op.operands[0])]
        size = self.i64(_size(op.operands[0]))
        s0, s1 = (b_.mul(s, size) if self.contiguous else s for s in strides)
        fn = outer_function(self, op.attributes["fn"], op.operands[0].type.element.kind)
        b_.call(fn, [data, shape[0], s0, shape[1], s1, pu, su, pv, sv])


def entry_checks(host: Any) -> None:
    """LAYOUT (run as Python, returned before anything ran) where a u or v is not as
    long as X's axis: NumPy broadcasts it or raises."""
    b_ = host.b
    for op in host.func.walk():
        if op.name != "loops.outer_update":
            continue
        rows, cols = host.arrays[id(op.operands[0])][1]
        for k, want in ((1, rows), (2, cols)):
            shape = host.arrays[id(op.operands[k])][1]
            n = shape[op.attributes["views"][k - 1].index("s")]
            with b_.if_then(b_.icmp_signed("!=", n, want), likely=False):
                host.finish(LAYOUT)


def _size(array: Any) -> int:
    return 4 if array.type.element.kind == "i32" else 8


def outer_function(host: Any, fn_name: str, kind: str) -> Any:
    """`void ppy_loops_outer_<fn>_<kind>(i8 *X, n0, s0, n1, s1, i8 *u, su, i8 *v, sv)`
    (internal; byte strides)."""
    module, ir = host.module, host.ir
    key = f"ppy_loops_outer_{fn_name}_{kind}"
    fn = module.globals.get(key)
    if fn is not None:
        return fn
    i64 = host.i64
    size = 4 if kind == "i32" else 8
    elem = ir.IntType(8 * size)
    ep, i8p = elem.as_pointer(), ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [i8p, i64, i64, i64, i64, i8p, i64, i8p, i64])
    fn = ir.Function(module, fnty, name=key)
    fn.linkage = "internal"
    b_ = ir.IRBuilder(fn.append_basic_block("entry"))
    x, n0, s0, n1, s1, pu, su, pv, sv = fn.args
    empty = b_.or_(b_.icmp_signed("==", n0, i64(0)), b_.icmp_signed("==", n1, i64(0)))
    with b_.if_then(empty, likely=False):
        b_.ret_void()
    malloc, free = _libc(module, "malloc"), _libc(module, "free")
    ub = b_.bitcast(b_.call(malloc, [b_.mul(n0, i64(size))]), ep)
    vb = b_.bitcast(b_.call(malloc, [b_.mul(n1, i64(size))]), ep)
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
            t = b_.add(a, b_.load(b_.gep(vb, [j])))  # wraps, as NumPy's
            old = b_.load(at, align=1 if not unit else size)
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
    b_.ret_void()
    return fn


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
