"""Typed loops: `u @ x[idx]` (`loops.gather_dot`), as NumPy computes it.

NumPy's `x[idx]` (a 1-D array by a 1-D integer array) makes a new contiguous
array: each index wrapped if negative, the first out of range raising
"index 9 is out of bounds for axis 0 with size 3" before anything else of the
expression. Its `@` / `np.dot` then takes two vectors as `loops.dot` does, so the
same internal function (`_loops_blas.dot_function`: NumPy's own `ddot` or its
plain loop, with its flags) runs on the gathered copy, the operands in the order
written. The copy lives on the stack up to STACK elements, else in malloc'ed memory;
where none is to be had, NumPy's MemoryError (`NO_MEMORY`, out[1] the length) before
any index is checked, as NumPy allocates `x[idx]` before it fills it.
"""

from __future__ import annotations

from typing import Any

from ._loops_blas import KINDS, SHAPE_ERROR, _libc, dot_function
from ._loops_vector import NO_MEMORY

STACK = 64  # elements gathered into a stack buffer before malloc is worth its cost
#: bytes of an index element, and whether it is sign-extended
INDEX_KINDS = {"i32": (4, True), "u32": (4, False), "i64": (8, True)}


class GatherOps:
    """`loops.gather_dot`; mixed into Emitter."""

    b: Any
    ir: Any
    i32: Any
    i64: Any
    out: Any
    flags: Any
    arrays: dict[int, Any]
    contiguous: bool
    view_of: Any
    fail: Any
    memory_check: Any
    put: Any

    def op_gather_dot(self, op: Any) -> None:
        from ._loops_emit import INDEX_ERROR

        b_ = self.b
        view, index_view = op.attributes["views"]
        # the operands hold the vector's bounds, then the index view's (its last two)
        bounds = iter(op.operands[3:-2])
        index_bounds = iter(op.operands[-2:])
        side = op.attributes["side"]
        data, shape, strides = self.arrays[id(op.operands[1])]
        sx = b_.mul(strides[0], self.i64(8)) if self.contiguous else strides[0]
        # Python's order: the left operand's index checks before the right's
        pv = nv = sv = None
        if side == "right":
            pv, [(nv, sv)] = self.view_of(op.operands[0], view, bounds)
        pc, [(nc, sc)] = self.view_of(op.operands[2], index_view, index_bounds)
        if side == "left":
            pv, [(nv, sv)] = self.view_of(op.operands[0], view, bounds)
        kind = op.operands[2].type.element.kind
        helper = gather_function(self, op.attributes["kind"], side, kind)
        both = b_.call(helper, [pv, nv, sv, data, shape[0], sx, pc, nc, sc, self.flags, self.out])
        status = b_.extract_value(both, 1)
        self.fail(b_.icmp_signed("==", status, self.i32(INDEX_ERROR)), INDEX_ERROR, [])
        self.fail(b_.icmp_signed("==", status, self.i32(SHAPE_ERROR)), SHAPE_ERROR, [])
        self.fail(b_.icmp_signed("==", status, self.i32(NO_MEMORY)), NO_MEMORY, [])
        self.memory_check(nv)  # the dot's copy of a view BLAS cannot take
        self.put(op, b_.extract_value(both, 0))


def gather_function(host: Any, kind: str, side: str, index_kind: str) -> Any:
    """`{double, i32} ppy_loops_gather_<kind>_<side>_<index>(i8 *u, nu, su, i8 *x, nx,
    sx, i8 *idx, n, si, i64 *flags, i64 *out)` (internal): the dot and 0, or an
    error's return code with its details in out[1..3] (the ABI's words)."""
    from ._loops_emit import INDEX_ERROR

    module, ir = host.module, host.ir
    key = f"ppy_loops_gather_{kind}_{side}_{index_kind}"
    fn = module.globals.get(key)
    if fn is not None:
        return fn
    i64, i32, f64 = host.i64, host.i32, host.f64
    i8p, fp = ir.IntType(8).as_pointer(), f64.as_pointer()
    pair = ir.LiteralStructType([f64, i32])
    args = [i8p, i64, i64, i8p, i64, i64, i8p, i64, i64, i64.as_pointer(), i64.as_pointer()]
    fn = ir.Function(module, ir.FunctionType(pair, args), name=key)
    fn.linkage = "internal"
    b_ = ir.IRBuilder(fn.append_basic_block("entry"))
    pu, nu, su, px, nx, sx, pi, n, si, flags, out = fn.args
    stack = b_.bitcast(b_.alloca(ir.ArrayType(f64, STACK)), fp)
    big = b_.icmp_signed(">", n, i64(STACK))
    start = b_.block
    with b_.if_then(big, likely=False):
        raw = b_.call(_libc(module, "malloc"), [b_.mul(n, i64(8))])
        with b_.if_then(b_.icmp_unsigned("==", b_.ptrtoint(raw, i64), i64(0)), likely=False):
            for k, word in enumerate((n, i64(0), i64(0))):  # NO_MEMORY's: 1-D, float64
                b_.store(word, b_.gep(out, [i64(1 + k)]))
            b_.ret(b_.insert_value(ir.Constant(pair, ir.Undefined), i32(NO_MEMORY), 1))
        heap = b_.bitcast(raw, fp)
        inside = b_.block
    buffer = b_.phi(fp)
    buffer.add_incoming(stack, start)
    buffer.add_incoming(heap, inside)

    def leave(value: Any, code: int) -> None:
        with b_.if_then(big, likely=False):
            b_.call(_libc(module, "free"), [b_.bitcast(buffer, i8p)])
        result = b_.insert_value(ir.Constant(pair, ir.Undefined), value, 0)
        b_.ret(b_.insert_value(result, i32(code), 1))

    def put(k: int, v: Any) -> None:
        b_.store(v, b_.gep(out, [i64(k)]))

    size, signed = INDEX_KINDS[index_kind]
    element = ir.IntType(8 * size).as_pointer()
    loop, body, done = (fn.append_basic_block(x) for x in ("g_cond", "g_body", "g_end"))
    entry = b_.block
    b_.branch(loop)
    b_.position_at_end(loop)
    k = b_.phi(i64)
    k.add_incoming(i64(0), entry)
    b_.cbranch(b_.icmp_signed("<", k, n), body, done)
    b_.position_at_end(body)
    raw = b_.load(b_.bitcast(b_.gep(pi, [b_.mul(k, si)]), element), align=1)
    if size < 8:
        raw = b_.sext(raw, i64) if signed else b_.zext(raw, i64)
    j = b_.select(b_.icmp_signed("<", raw, i64(0)), b_.add(raw, nx), raw)
    with b_.if_then(b_.icmp_unsigned(">=", j, nx), likely=False):  # NumPy's IndexError
        put(1, raw)
        put(2, i64(0))
        put(3, nx)
        leave(f64(0.0), INDEX_ERROR)
    value = b_.load(b_.bitcast(b_.gep(px, [b_.mul(j, sx)]), fp), align=1)
    b_.store(value, b_.gep(buffer, [k]))
    k.add_incoming(b_.add(k, i64(1)), b_.block)
    b_.branch(loop)
    b_.position_at_end(done)
    with b_.if_then(b_.icmp_signed("!=", nu, n), likely=False):  # NumPy's ValueError
        put(1, i64(KINDS.index(kind)))
        put(2, n if side == "left" else nu)
        put(3, nu if side == "left" else n)
        leave(f64(0.0), SHAPE_ERROR)
    gathered = b_.bitcast(buffer, i8p)
    operands = [gathered, i64(8), pu, su] if side == "left" else [pu, su, gathered, i64(8)]
    leave(b_.call(dot_function(host, kind), [n, *operands, flags]), 0)
    return fn


__all__ = ["STACK", "GatherOps", "gather_function"]
