"""Typed loops: `np.dot(u, v)` and `u @ v` of vector views, as NumPy computes them.

NumPy's dot of two float64 vectors calls its own BLAS's `ddot` (OpenBLAS in its
wheels); the bits of a sum depend on that routine's order, so the function calls
the same routine, whose address the runtime adapter writes into the library's
global `ppy_loops_blas_ddot` at load time (resolved from NumPy's loaded BLAS, and
proven per build against NumPy itself through the exported `ppy_loops_probe_dot` /
`ppy_loops_probe_matmul`, which run the very code the loops call). NumPy's paths,
kept exactly (numpy/_core/src/common/cblasfuncs.c, arraytypes `DOUBLE_dot`,
umath/matmul.c.src):

* np.dot: length 0 is 0.0; length 1 is the product u[0] * v[0] (the scalar path,
  no BLAS); longer is ``0.0 + ddot(n, u, su, v, sv)``, a view with a negative, zero
  or unaligned stride (or unaligned data) first copied contiguous, as NumPy does.
* `@` (the matmul ufunc): length 0 is 0.0; else ``0.0 + ddot`` when both strides
  are positive multiples of 8, otherwise NumPy's plain loop ``s = 0; s += u*v``
  (unaligned data is buffered contiguous first, as the ufunc machinery does).
* the FP flags NumPy checks after the call (its "overflow encountered in dot"):
  inf or NaN results only; the routine is rerun with the flags cleared and read.
* a copy that cannot be allocated (malloc's NULL) frees the other, sets NO_MEMORY_FLAG
  in the flags word and returns 0.0; the caller clears the bit and returns NumPy's
  MemoryError (`NO_MEMORY`, out[1] the length), as PyArray_NewCopy would raise.
"""

from __future__ import annotations

from typing import Any

SHAPE_ERROR = 4  # return code: NumPy's ValueError for lengths that differ
KINDS = ("dot", "matmul")
DDOT_GLOBAL = "ppy_loops_blas_ddot"
#: <fenv.h> on x86-64 glibc: the bits fetestexcept reports
FE_INVALID, FE_DIVBYZERO, FE_OVERFLOW, FE_ALL_EXCEPT = 0x01, 0x04, 0x08, 0x3D
QUIET_BIT = 0x0008000000000000
#: a bit of the flags word no NumPy event uses (events take bits below 3 * FLAG_STRIDE):
#: a copy could not be allocated; `memory_check` turns it into NO_MEMORY
NO_MEMORY_FLAG = 1 << 62


class BlasOps:
    """`loops.dot`; mixed into Emitter (which supplies b, arrays, fail, flags, ...)."""

    b: Any
    ir: Any
    i1: Any
    i64: Any
    f64: Any
    module: Any
    flags: Any
    arrays: dict[int, Any]
    contiguous: bool
    fail: Any
    v: Any
    put: Any

    def view_of(self, array: Any, view: str, bounds: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        """(i8* of the view's first element, (length, byte stride) per slice axis):
        its indices checked as NumPy does (negative ones wrap), its slices clamped;
        an "r" slice (`np.flip`) starts at its last element, its stride negated."""
        from ._loops_emit import INDEX_ERROR

        b_ = self.b
        data, shape, strides = self.arrays[id(array)]
        offset, axes = self.i64(0), []
        size = self.i64(4 if array.type.element.kind in ("i32", "u32") else 8)  # elements
        for axis, how in enumerate(view):
            n = shape[axis]
            stride = b_.mul(strides[axis], size) if self.contiguous else strides[axis]
            if how == "i":
                index = self.v(next(bounds))
                i = b_.select(b_.icmp_signed("<", index, self.i64(0)), b_.add(index, n), index)
                self.fail(b_.icmp_unsigned(">=", i, n), INDEX_ERROR, [index, self.i64(axis), n])
                offset = b_.add(offset, b_.mul(i, stride))
                continue
            lo = self._clamp(self.v(next(bounds)), n)
            hi = self._clamp(self.v(next(bounds)), n)
            length = b_.select(b_.icmp_signed(">", hi, lo), b_.sub(hi, lo), self.i64(0))
            offset = b_.add(offset, b_.mul(lo, stride))
            if how == "r":  # np.flip of the slice: from its last element back
                last = b_.select(b_.icmp_signed(">", length, self.i64(0)), length, self.i64(1))
                offset = b_.add(offset, b_.mul(b_.sub(last, self.i64(1)), stride))
                stride = b_.sub(self.i64(0), stride)
            axes.append((length, stride))
        return b_.gep(data, [offset]), axes

    def op_dot(self, op: Any) -> None:
        b_, i8p = self.b, self.ir.IntType(8).as_pointer()
        bounds = iter(op.operands[2:])
        views = []
        for k, view in enumerate(op.attributes["views"]):
            ptr, [(length, stride)] = self.view_of(op.operands[k], view, bounds)
            views.append((ptr, length, stride))
        (pa, na, sa), (pb, nb, sb) = views
        kind = op.attributes["kind"]
        which = self.i64(KINDS.index(kind))
        self.fail(b_.icmp_signed("!=", na, nb), SHAPE_ERROR, [which, na, nb])
        helper = dot_function(self, kind)
        args = [na, b_.bitcast(pa, i8p), sa, b_.bitcast(pb, i8p), sb, self.flags]
        value = b_.call(helper, args)
        self.memory_check(na)
        self.put(op, value)

    def memory_check(self, length: Any) -> None:
        """After a dot: NumPy's MemoryError (`NO_MEMORY`, out[1] the length) where a
        copy could not be allocated; the bit is cleared first, so out[4] keeps events only."""
        from ._loops_vector import NO_MEMORY

        b_ = self.b
        word = b_.load(self.flags)
        b_.store(b_.and_(word, self.i64(~NO_MEMORY_FLAG)), self.flags)
        short = b_.icmp_unsigned("!=", b_.and_(word, self.i64(NO_MEMORY_FLAG)), self.i64(0))
        self.fail(short, NO_MEMORY, [length, self.i64(0), self.i64(0)])  # 1-D, float64

    def _clamp(self, x: Any, n: Any) -> Any:
        """A slice bound as `slice.indices` makes it for step 1: within [0, n]."""
        b_, zero = self.b, self.i64(0)
        x = b_.select(b_.icmp_signed("<", x, zero), b_.add(x, n), x)
        x = b_.select(b_.icmp_signed("<", x, zero), zero, x)
        return b_.select(b_.icmp_signed(">", x, n), n, x)


def dot_function(host: Any, kind: str) -> Any:
    """`double ppy_loops_vdot_<kind>(n, u, su, v, sv, i64 *flags)` (internal): NumPy's
    value and its flags; and once per module the exported probe calling it."""
    module, ir = host.module, host.ir
    name = f"ppy_loops_vdot_{kind}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    f64, i64, i8p = host.f64, host.i64, ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(f64, [i64, i8p, i64, i8p, i64, i64.as_pointer()])
    value = _value_function(host, kind)
    fn = ir.Function(module, fnty, name=name)
    fn.linkage = "internal"
    b_ = ir.IRBuilder(fn.append_basic_block("entry"))
    n, pa, sa, pb, sb, flags = fn.args
    r = b_.call(value, [n, pa, sa, pb, sb, flags])
    special = b_.not_(b_.fcmp_ordered("<", _fabs(module, b_, r), f64(float("inf"))))
    with b_.if_then(special, likely=False):  # rerun with the flags cleared, and read them
        clear = _libc(module, "feclearexcept")
        test = _libc(module, "fetestexcept")
        b_.call(clear, [ir.IntType(32)(FE_ALL_EXCEPT)])
        b_.call(value, [n, pa, sa, pb, sb, flags])
        raised = b_.call(test, [ir.IntType(32)(FE_ALL_EXCEPT)])
        from ._loops_scalar import FLAG_OPS, FLAG_STRIDE

        k = FLAG_OPS.index(kind)
        bits = i64(0)
        for event, fe in enumerate((FE_DIVBYZERO, FE_OVERFLOW, FE_INVALID)):
            hit = b_.icmp_unsigned("!=", b_.and_(raised, ir.IntType(32)(fe)), ir.IntType(32)(0))
            bits = b_.or_(bits, b_.select(hit, i64(1 << (event * FLAG_STRIDE + k)), i64(0)))
        b_.store(b_.or_(b_.load(flags), bits), flags)
    b_.ret(r)
    probe = ir.Function(module, fnty, name=f"ppy_loops_probe_{kind}")  # the proof's entry
    pb_ = ir.IRBuilder(probe.append_basic_block("entry"))
    pb_.ret(pb_.call(fn, list(probe.args)))
    return fn


def _value_function(host: Any, kind: str) -> Any:
    """`double value(n, u, su, v, sv, i64 *flags)`: NumPy's result, noinline so that its
    FP ops stay between the caller's feclearexcept and fetestexcept (`flags`: where a
    copy that could not be allocated sets NO_MEMORY_FLAG)."""
    module, ir = host.module, host.ir
    f64, i64, i8p = host.f64, host.i64, ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(f64, [i64, i8p, i64, i8p, i64, i64.as_pointer()])
    fn = ir.Function(module, fnty, name=f"ppy_loops_vdot_{kind}_value")
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    b_ = ir.IRBuilder(fn.append_basic_block("entry"))
    n, pa, sa, pb, sb, flags = fn.args
    zero = i64(0)
    with b_.if_then(b_.icmp_signed("==", n, zero), likely=False):
        b_.ret(f64(0.0))
    if kind == "dot":
        with b_.if_then(b_.icmp_signed("==", n, i64(1)), likely=False):
            a0 = b_.load(b_.bitcast(pa, f64.as_pointer()), align=1)
            b0 = b_.load(b_.bitcast(pb, f64.as_pointer()), align=1)
            b_.ret(_mul(host, b_, a0, b0))
    # a view BLAS cannot take is copied contiguous (np.dot: any bad stride or
    # alignment; the matmul ufunc: unaligned data only)
    copies = []
    views = []
    for p, s in ((pa, sa), (pb, sb)):
        bad = b_.icmp_unsigned("!=", b_.and_(b_.ptrtoint(p, i64), i64(7)), zero)
        if kind == "dot":
            bad = b_.or_(bad, b_.icmp_signed("<=", s, zero))
            bad = b_.or_(bad, b_.icmp_unsigned("!=", b_.and_(s, i64(7)), zero))
        start = b_.block
        with b_.if_then(bad, likely=False):
            buffer = _copy(host, b_, n, p, s, copies, flags)
            inside = b_.block
        p2 = b_.phi(i8p)
        p2.add_incoming(p, start)
        p2.add_incoming(buffer, inside)
        s2 = b_.phi(i64)
        s2.add_incoming(s, start)
        s2.add_incoming(i64(8), inside)
        copied = b_.phi(host.i1)
        copied.add_incoming(host.i1(0), start)
        copied.add_incoming(host.i1(1), inside)
        copies.append((copied, p2))
        views.append((p2, s2))
    (qa, ta), (qb, tb) = views
    blasable = b_.and_(
        b_.and_(b_.icmp_signed(">", ta, zero), b_.icmp_unsigned("==", b_.and_(ta, i64(7)), zero)),
        b_.and_(b_.icmp_signed(">", tb, zero), b_.icmp_unsigned("==", b_.and_(tb, i64(7)), zero)),
    )
    result = b_.alloca(f64)
    with b_.if_else(blasable) as (blas, plain):
        with blas:
            ddot = _ddot(host, b_)
            dp = f64.as_pointer()
            r = b_.call(
                ddot,
                [
                    n,
                    b_.bitcast(qa, dp),
                    b_.sdiv(ta, i64(8)),
                    b_.bitcast(qb, dp),
                    b_.sdiv(tb, i64(8)),
                ],
            )
            b_.store(_add(host, b_, f64(0.0), r), result)
        with plain:  # NumPy's loop: s = 0; s += u[k] * v[k], in order
            b_.store(_plain_sum(host, b_, n, qa, ta, qb, tb), result)
    r = b_.load(result)
    free = _libc(module, "free")
    for copied, p in copies:
        with b_.if_then(copied, likely=False):
            b_.call(free, [p])
    b_.ret(r)
    return fn


def _plain_sum(host: Any, b_: Any, n: Any, pa: Any, sa: Any, pb: Any, sb: Any) -> Any:
    f64, i64 = host.f64, host.i64
    fn = b_.function
    head, body, done = (fn.append_basic_block(x) for x in ("sum_cond", "sum_body", "sum_end"))
    k_slot, s_slot = b_.alloca(i64), b_.alloca(f64)
    b_.store(i64(0), k_slot)
    b_.store(f64(0.0), s_slot)
    b_.branch(head)
    b_.position_at_end(head)
    k = b_.load(k_slot)
    b_.cbranch(b_.icmp_signed("<", k, n), body, done)
    b_.position_at_end(body)
    x = b_.load(b_.bitcast(b_.gep(pa, [b_.mul(k, sa)]), f64.as_pointer()), align=1)
    y = b_.load(b_.bitcast(b_.gep(pb, [b_.mul(k, sb)]), f64.as_pointer()), align=1)
    b_.store(_add(host, b_, b_.load(s_slot), _mul(host, b_, x, y)), s_slot)
    b_.store(b_.add(k, i64(1)), k_slot)
    b_.branch(head)
    b_.position_at_end(done)
    return b_.load(s_slot)


def _copy(host: Any, b_: Any, n: Any, p: Any, s: Any, copies: list, flags: Any) -> Any:
    """A malloc'ed contiguous copy of the view (NumPy's PyArray_NewCopy). None to be
    had: the `copies` made before it freed, NO_MEMORY_FLAG set in `flags`, 0.0 returned."""
    f64, i64 = host.f64, host.i64
    buffer = b_.call(_libc(host.module, "malloc"), [b_.mul(n, i64(8))])
    null = b_.icmp_unsigned("==", b_.ptrtoint(buffer, i64), i64(0))
    with b_.if_then(null, likely=False):
        for copied, q in copies:
            with b_.if_then(copied, likely=False):
                b_.call(_libc(host.module, "free"), [q])
        b_.store(b_.or_(b_.load(flags), i64(NO_MEMORY_FLAG)), flags)
        b_.ret(f64(0.0))
    fn = b_.function
    head, body, done = (fn.append_basic_block(x) for x in ("copy_cond", "copy_body", "copy_end"))
    k_slot = b_.alloca(i64)
    b_.store(i64(0), k_slot)
    b_.branch(head)
    b_.position_at_end(head)
    k = b_.load(k_slot)
    b_.cbranch(b_.icmp_signed("<", k, n), body, done)
    b_.position_at_end(body)
    x = b_.load(b_.bitcast(b_.gep(p, [b_.mul(k, s)]), f64.as_pointer()), align=1)
    b_.store(x, b_.gep(b_.bitcast(buffer, f64.as_pointer()), [k]))
    b_.store(b_.add(k, i64(1)), k_slot)
    b_.branch(head)
    b_.position_at_end(done)
    return buffer


def _nan_pick(host: Any, b_: Any, first: Any, second: Any, r: Any) -> Any:
    """x86's NaN rule for a compiled C `first op second`: the first operand's NaN if
    it is one, else the second's, quieted; LLVM may commute, so it is made explicit."""
    i64 = host.i64

    def isnan(x: Any) -> Any:
        return b_.fcmp_unordered("uno", x, x)

    pick = b_.select(isnan(first), first, second)
    quiet = b_.bitcast(b_.or_(b_.bitcast(pick, i64), i64(QUIET_BIT)), host.f64)
    return b_.select(b_.or_(isnan(first), isnan(second)), quiet, r)


def _mul(host: Any, b_: Any, a: Any, b: Any) -> Any:
    return _nan_pick(host, b_, a, b, b_.fmul(a, b))


def _add(host: Any, b_: Any, a: Any, b: Any) -> Any:
    return _nan_pick(host, b_, a, b, b_.fadd(a, b))


def _fabs(module: Any, b_: Any, x: Any) -> Any:
    fn = module.globals.get("llvm.fabs.f64")
    if fn is None:
        import llvmlite.ir as ir

        fn = ir.Function(module, ir.FunctionType(x.type, [x.type]), "llvm.fabs.f64")
    return b_.call(fn, [x])


def _libc(module: Any, name: str) -> Any:
    import llvmlite.ir as ir

    fn = module.globals.get(name)
    if fn is not None:
        return fn
    i32, i64, i8p = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()
    types = {
        "feclearexcept": ir.FunctionType(i32, [i32]),
        "fetestexcept": ir.FunctionType(i32, [i32]),
        "malloc": ir.FunctionType(i8p, [i64]),
        "free": ir.FunctionType(ir.VoidType(), [i8p]),
    }
    return ir.Function(module, types[name], name)


def _ddot(host: Any, b_: Any) -> Any:
    """The routine the adapter resolved (NumPy's own `cblas_ddot`), through the
    library's global pointer: `double ddot(i64 n, double *x, i64 incx, double *y, i64 incy)`."""
    ir, module = host.ir, host.module
    f64, i64 = host.f64, host.i64
    fnty = ir.FunctionType(f64, [i64, f64.as_pointer(), i64, f64.as_pointer(), i64])
    slot = module.globals.get(DDOT_GLOBAL)
    if slot is None:
        slot = ir.GlobalVariable(module, fnty.as_pointer(), DDOT_GLOBAL)
        slot.initializer = ir.Constant(fnty.as_pointer(), None)
    return b_.load(slot)


__all__ = ["DDOT_GLOBAL", "KINDS", "NO_MEMORY_FLAG", "SHAPE_ERROR", "BlasOps", "dot_function"]
