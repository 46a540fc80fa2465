"""float32 ``exp`` inline, in the steps of NumPy's own AVX-512F loop (so with its bits).

On an x86 host with AVX-512F (or AVX2 + FMA3), NumPy's float32 ``exp`` is its own
SIMD loop, ``simd_exp_FLOAT`` (numpy/_core/src/umath/loops_exponent_log.dispatch.c.src),
used for every element (the scalar and strided cases call it on one lane, so that all
elements agree). Per lane it computes::

    nan = x != x;  x = nan ? 0 : x
    big = x >= XMAX;  small = x <= XMIN;  x = (nan | big | small) ? 0 : x
    q = (x * LOG2E + MAGIC) - MAGIC                     (round to nearest integer)
    r = fma(q, 0, fma(q, C2, fma(q, C1, x)))            (Cody-Waite, three steps)
    p = fma(fma(fma(fma(fma(P5, r, P4), r, P3), r, P2), r, P1), r, P0)
    d = fma(fma(Q2, r, Q1), r, Q0)
    y = scalef(p / d, q)                                (p/d * 2^q, rounded once)
    exp(x) = nan ? NaN : big ? inf : small ? 0 : y

and raises overflow where a lane was ``big`` but not inf, underflow where one was
``small`` but not -inf (`npy_set_floatstatus_*`), besides the flags of its own
instructions (underflow of a subnormal result, invalid of a signalling NaN's compare).
`lower_exp32` emits exactly those operations at ``ctx.width`` lanes. ``scalef`` is an
exponent add where every lane's result is a normal float32; a vector with a lane whose
result is subnormal or past a cut-off (rare) widens the quotient to double, multiplies
by ``2^q`` there (exact) and rounds back to float32 once, which is ``scalef``'s single
rounding (and its flags), and raises NumPy's own flags.
Every operation is lane-wise, so the kernel's vector body, its scalar tail and
NumPy's masked tail give the same bits. Whether that is NumPy's ``exp`` on this build
and CPU is a proof (`_proof.inline32_verdicts`, against NumPy itself on the float32
sample of the adapter); matched on all 2^32 float32 inputs on NumPy 2.4 (AVX-512F).
Without the proof a float32 ``exp`` is refused (E2048) and NumPy runs it.
"""

from __future__ import annotations

import struct
from dataclasses import replace
from typing import TYPE_CHECKING

from ._irtext import STRICT_ATTR, f64_literal
from ._spec import KernelSpec, Node

if TYPE_CHECKING:
    from ._lower import LowerCtx

#: the `unary` op name of the inline float32 exp (NumPy's loop is ``exp``)
INLINE_EXP32 = "exp_f32_inline"

# NumPy's constants (npy_simd_data.h, npy_math.h), rounded to float32 as its C does
XMAX = 88.72283935546875
XMIN = -103.97208404541015625
LOG2E = 1.442695040888963407359924681001892137
MAGIC = float.fromhex("0x1.8p23")  # NPY_RINT_CVT_MAGICf: rounds to an integer
C1, C2 = -6.93145752e-1, -1.42860677e-6  # NPY_CODY_WAITE_LOGE_2_HIGHf / _LOWf
P = (
    9.999999999980870924916e-01,
    7.257664613233124478488e-01,
    2.473615434895520810817e-01,
    5.114512081637298353406e-02,
    6.757896990527504603057e-03,
    5.082762527590693718096e-04,
)
Q = (1.0, -2.742335390411667452936e-01, 2.159509375685829852307e-02)
#: float32 values whose square overflows / underflows (raising the flag NumPy sets)
_HUGE, _TINY = 2.0**100, 2.0**-100
_QUIET_NAN = 0x7FF8000000000000  # NPY_NANF (0x7FC00000), as LLVM writes a float


def inline_exp32(spec: KernelSpec, verdict: dict[str, str]) -> KernelSpec:
    """`spec` (float32) with NumPy's ``exp`` loop calls turned into `INLINE_EXP32`
    nodes, where the proof `verdict` says the inline exp gives NumPy's bits."""
    if spec.dtype != "f32" or verdict.get(INLINE_EXP32) != "ok":
        return spec
    nodes = tuple(
        Node(n.op, n.args, (("op", INLINE_EXP32),))
        if n.op == "unary" and n.attr("op") == "exp"
        else n
        for n in spec.nodes
    )
    return spec if nodes == spec.nodes else replace(spec, nodes=nodes, _key=[])


class _Ops:
    """The few operations beyond `LowerCtx`'s: fma, conversions, integer vectors."""

    def __init__(self, ctx: LowerCtx) -> None:
        self.ctx, self.em, self.w = ctx, ctx.em, ctx.width

    def vec(self, scalar: str) -> str:
        return scalar if self.w == 1 else f"<{self.w} x {scalar}>"

    def sfx(self, scalar: str) -> str:
        return scalar if self.w == 1 else f"v{self.w}{scalar}"

    def splat(self, text: str, scalar: str) -> str:
        return text if self.w == 1 else "<" + ", ".join([f"{scalar} {text}"] * self.w) + ">"

    def fma(self, a: str, b: str, c: str) -> str:
        """a*b + c, rounded once (float32)."""
        ft = self.ctx.ft
        if not self.ctx.strict:
            name = f"llvm.fma.{self.sfx('f32')}"
            self.em.declare(f"declare {ft} @{name}({ft}, {ft}, {ft})")
            return self.em.assign(f"call {ft} @{name}({ft} {a}, {ft} {b}, {ft} {c})")
        name = f"llvm.experimental.constrained.fma.{self.sfx('f32')}"
        self.em.declare(f"declare {ft} @{name}({ft}, {ft}, {ft}, metadata, metadata)")
        return self.em.assign(
            f"call {ft} @{name}({ft} {a}, {ft} {b}, {ft} {c}, "
            f'metadata !"round.tonearest", metadata !"fpexcept.strict") {STRICT_ATTR}'
        )

    def convert(self, kind: str, x: str, src: str, dst: str, rounded: bool) -> str:
        """fptosi / fpext / fptrunc of `x` from scalar type `src` to `dst`."""
        s, d = self.vec(src), self.vec(dst)
        if not self.ctx.strict:
            return self.em.assign(f"{kind} {s} {x} to {d}")
        short = {"float": "f32", "double": "f64", "i32": "i32"}
        name = f"llvm.experimental.constrained.{kind}.{self.sfx(short[dst])}.{self.sfx(short[src])}"
        meta = 'metadata !"round.tonearest", ' if rounded else ""
        params = "metadata, metadata" if rounded else "metadata"
        self.em.declare(f"declare {d} @{name}({s}, {params})")
        return self.em.assign(
            f'call {d} @{name}({s} {x}, {meta}metadata !"fpexcept.strict") {STRICT_ATTR}'
        )

    def binop(self, kind: str, a: str, b: str, scalar: str = "float") -> str:
        """fadd/fsub/fmul/fdiv: constrained, or plain (no fast-math flags: a fastmath
        kernel's `fast` would fold ``(q + MAGIC) - MAGIC`` into ``q``)."""
        t = self.vec(scalar)
        if not self.ctx.strict:
            return self.em.assign(f"{kind} {t} {a}, {b}")
        short = "f32" if scalar == "float" else "f64"
        name = f"llvm.experimental.constrained.{kind}.{self.sfx(short)}"
        self.em.declare(f"declare {t} @{name}({t}, {t}, metadata, metadata)")
        return self.em.assign(
            f"call {t} @{name}({t} {a}, {t} {b}, "
            f'metadata !"round.tonearest", metadata !"fpexcept.strict") {STRICT_ATTR}'
        )

    def fcmp(self, pred: str, a: str, b: str) -> str:
        """A quiet comparison (plain where not strict: `fast` would assume no NaN)."""
        if not self.ctx.strict:
            return self.em.assign(f"fcmp {pred} {self.ctx.ft} {a}, {b}")
        return self.ctx.fcmp(pred, a, b)


def lower_exp32(ctx: LowerCtx, x: str) -> str:
    """NumPy's float32 exp(x), bits and flags, at `ctx.width` lanes (the module doc)."""
    ops, em = _Ops(ctx), ctx.em
    zero = ctx.splat(0.0)
    nan = ops.fcmp("uno", x, x)
    x1 = ctx.select(nan, zero, x)
    big = ops.fcmp("oge", x1, ctx.splat(XMAX))
    small = ops.fcmp("ole", x1, ctx.splat(XMIN))
    odd = em.assign(f"or {ctx.bt} {em.assign(f'or {ctx.bt} {nan}, {small}')}, {big}")
    xs = ctx.select(odd, zero, x1)
    magic = ctx.splat(MAGIC)
    q = ops.binop("fsub", ops.binop("fadd", ops.binop("fmul", xs, ctx.splat(LOG2E)), magic), magic)
    r = ops.fma(q, ctx.splat(C1), xs)
    r = ops.fma(q, ctx.splat(C2), r)
    r = ops.fma(q, zero, r)
    num = ops.fma(ctx.splat(P[5]), r, ctx.splat(P[4]))
    for c in (P[3], P[2], P[1], P[0]):
        num = ops.fma(num, r, ctx.splat(c))
    den = ops.fma(ctx.splat(Q[2]), r, ctx.splat(Q[1]))
    den = ops.fma(den, r, ctx.splat(Q[0]))
    poly = ops.binop("fdiv", num, den)
    k = ops.convert("fptosi", q, "float", "i32", rounded=False)
    y = _scaled(ops, poly, k, x1, big, small)
    y = ctx.select(nan, ops.splat(f64_literal(_double(_QUIET_NAN)), "float"), y)
    y = ctx.select(big, ctx.splat(float("inf")), y)
    return ctx.select(small, zero, y)


def _scaled(ops: _Ops, poly: str, k: str, x: str, big: str, small: str) -> str:
    """scalef(poly, k): poly (in [0.7, 1.42]) times 2^k. Where every lane's result is a
    normal float32 (-125 <= k <= 127) that is an exact exponent add; a vector with any
    other lane (a subnormal or overflowing result, or a lane past a cut-off) takes the
    rare branch: `_scalef_once` for every lane, and NumPy's own flags (`_raise_flags`)."""
    ctx, em, i32 = ops.ctx, ops.em, ops.vec("i32")
    low = em.assign(f"icmp slt {i32} {k}, {ops.splat('-125', 'i32')}")
    high = em.assign(f"icmp sgt {i32} {k}, {ops.splat('127', 'i32')}")
    rare = em.assign(f"or {ctx.bt} {em.assign(f'or {ctx.bt} {low}, {high}')}, {big}")
    rare = em.assign(f"or {ctx.bt} {rare}, {small}")
    if ops.w > 1:
        name = f"llvm.vector.reduce.or.v{ops.w}i1"
        em.declare(f"declare i1 @{name}({ctx.bt})")
        rare = em.assign(f"call i1 @{name}({ctx.bt} {rare})")
    em.declare("declare i1 @llvm.expect.i1(i1, i1)")
    rare = em.assign(f"call i1 @llvm.expect.i1(i1 {rare}, i1 false)")
    shifted = em.assign(f"shl {i32} {k}, {ops.splat('23', 'i32')}")
    bits = em.assign(f"add {i32} {em.assign(f'bitcast {ctx.ft} {poly} to {i32}')}, {shifted}")
    fast = em.assign(f"bitcast {i32} {bits} to {ctx.ft}")
    slow, join = em.label("exp32_rare"), em.label("exp32_join")
    before = em.block
    em.emit(f"br i1 {rare}, label %{slow}, label %{join}")
    em.start_block(slow)
    _raise_flags(ops, x, big, small)
    once = _scalef_once(ops, poly, k)
    after = em.block
    em.emit(f"br label %{join}")
    em.start_block(join)
    return em.assign(f"phi {ctx.ft} [ {fast}, %{before} ], [ {once}, %{after} ]")


def _scalef_once(ops: _Ops, poly: str, k: str) -> str:
    """poly * 2^k rounded once to float32 (k an integer in [-150, 128]): in double the
    product is exact, and its rounding to float32 is scalef's (value and flags)."""
    em, i32, i64 = ops.em, ops.vec("i32"), ops.vec("i64")
    wide = em.assign(f"sext {i32} {k} to {i64}")
    biased = em.assign(f"add {i64} {wide}, {ops.splat('1023', 'i64')}")
    bits = em.assign(f"shl {i64} {biased}, {ops.splat('52', 'i64')}")
    two_k = em.assign(f"bitcast {i64} {bits} to {ops.vec('double')}")
    wide_poly = ops.convert("fpext", poly, "float", "double", rounded=False)
    product = ops.binop("fmul", wide_poly, two_k, "double")
    return ops.convert("fptrunc", product, "double", "float", rounded=True)


def _raise_flags(ops: _Ops, x: str, big: str, small: str) -> None:
    """NumPy's explicit flags: overflow for a lane >= XMAX but not inf, underflow for
    one <= XMIN but not -inf (a square that overflows / underflows on those lanes).
    Only strict kernels keep flags; a fastmath kernel's plain squares would be dropped."""
    ctx = ops.ctx
    if not ctx.strict:
        return
    em, bt, one = ctx.em, ctx.bt, ctx.splat(1.0)
    finite_big = em.assign(f"and {bt} {big}, {ops.fcmp('one', x, ctx.splat(float('inf')))}")
    finite_small = em.assign(f"and {bt} {small}, {ops.fcmp('one', x, ctx.splat(float('-inf')))}")
    huge = ctx.select(finite_big, ctx.splat(_HUGE), one)
    ops.binop("fmul", huge, huge)
    tiny = ctx.select(finite_small, ctx.splat(_TINY), one)
    ops.binop("fmul", tiny, tiny)


def _double(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])
