"""float64 ``exp`` inline, in the steps of glibc's own ``exp`` (so with its bits).

On an x86 host with AVX2 + FMA, NumPy's float64 ``exp`` loop calls glibc's scalar
``exp`` per element (NumPy's own SIMD exp needs AVX-512F), and glibc (2.28 and later,
sysdeps/ieee754/dbl-64/e_exp.c, built with ``-mfma`` for the ``__exp_fma`` ifunc
variant) computes, for ``2^-54 <= |x| < 512``::

    kd0 = fma(x, InvLn2N, Shift)        ki = bits(kd0)        kd = kd0 - Shift
    r = fma(kd, NegLn2loN, fma(kd, NegLn2hiN, x))
    tail = T[2*(ki % 128)]              scale = T[2*(ki % 128) + 1] + (ki << 45)
    r2 = r*r
    tmp = fma(r2*r2, fma(r, C5, C4), fma(fma(r, C3, C2), r2, r + tail))
    exp(x) = fma(scale, tmp, scale)

(the contraction pattern read from the disassembly of glibc 2.36's ``__exp_fma``),
``1.0 + x`` for ``|x| < 2^-54``, and a special path for the rest (``|x| >= 512``,
inf, NaN). `lower_exp` emits those steps on VEC lanes; lanes needing the special path
run on a substitute input (0.0, which raises no flag), and if any lane of a vector
needs it the whole vector is recomputed by calling libm's scalar ``exp`` per lane, so
those lanes get glibc's value and raise glibc's flags. One lane (the scalar tail)
calls ``exp`` directly. The fast lanes run glibc's very operations on the very
values, so they raise its flags (only inexact). Whether all this gives NumPy's bits
here is a proof (`_proof`, candidate `INLINE_EXP`); without it ``exp`` stays a call
of NumPy's loop. The constants are glibc's (numbers, checked against a dump of
``__exp_data``); the table is computed (`table`).
"""

from __future__ import annotations

import functools
import struct
from dataclasses import replace
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import TYPE_CHECKING

from ._irtext import STRICT_ATTR, f64_literal
from ._spec import KernelSpec, Node

if TYPE_CHECKING:
    from ._lower import LowerCtx

#: the `unary` op name of the inline exp (NumPy's loop is ``exp``)
INLINE_EXP = "exp_inline"

TABLE_BITS = 7  # N = 128 table entries
INV_LN2_N = 0x40671547652B82FE  # N / ln 2
SHIFT = 0x4338000000000000  # 0x1.8p52: rounds z to an integer in the low bits
NEG_LN2_HI_N = 0xBF762E42FEFA0000  # -ln 2 / N, high part (trailing zero bits)
NEG_LN2_LO_N = 0xBD0CF79ABC9E3B3A  # -ln 2 / N, low part
C2, C3, C4, C5 = 0x3FDFFFFFFFFFFDBD, 0x3FC555555555543C, 0x3FA55555CF172B91, 0x3F81111167A4D017
#: |x| < 2^-54 (top 12 bits below this): exp(x) is 1.0 + x
TINY_TOP = 0x3C9
#: |x| >= 512 (top 12 bits from this), inf, NaN: glibc's special path
SPECIAL_TOP = 0x408


@functools.cache
def table() -> tuple[int, ...]:
    """glibc's ``__exp_data.tab``: per k < 128, the bits of ``tail`` and of
    ``H - (k << 45)`` where H is 2^(k/128) rounded to double and tail is
    (2^(k/128) - H) / H rounded (equal to glibc 2.36's table, all 256 words)."""
    out: list[int] = []
    with localcontext() as ctx:
        ctx.prec = 80
        for k in range(1 << TABLE_BITS):
            exact = Decimal(2) ** (Decimal(k) / Decimal(1 << TABLE_BITS))
            high = float(Fraction(exact))  # correctly rounded
            tail = float(Fraction((exact - Decimal(high)) / Decimal(high)))
            out += [_bits(tail), (_bits(high) - (k << (52 - TABLE_BITS))) % (1 << 64)]
    return tuple(out)


def _bits(value: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", value))[0])


def _double(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


def table_global() -> str:
    """The module-level definition of the table (a declaration line of the module)."""
    words = ", ".join(f"i64 {w}" for w in table())
    return f"@ppy_exp_tab = private unnamed_addr constant [256 x i64] [{words}], align 16"


def host_has_fma() -> bool:
    """Whether the kernels' host has FMA (else llvm.fma would be a libm call)."""
    from ._host import host

    return "+fma" in host()[1].split(",")


def inline_exp(spec: KernelSpec, verdict: dict[str, str]) -> KernelSpec:
    """`spec` with NumPy's ``exp`` loop calls turned into `INLINE_EXP` nodes, where
    the proof `verdict` says the inline exp gives NumPy's bits (float64 only)."""
    if spec.dtype != "f64" or verdict.get(INLINE_EXP) != "ok":
        return spec
    nodes = tuple(
        Node(n.op, n.args, (("op", INLINE_EXP),))
        if n.op == "unary" and n.attr("op") == "exp"
        else n
        for n in spec.nodes
    )
    return spec if nodes == spec.nodes else replace(spec, nodes=nodes, _key=[])


def uses_exp(spec: KernelSpec) -> bool:
    """Whether `spec` calls NumPy's ``exp`` loop."""
    return any(n.op == "unary" and n.attr("op") == "exp" for n in spec.nodes)


class _Ops:
    """Exact float ops at one width: constrained (strict kernels) or plain (fastmath
    kernels, whose plain ops carry no contraction flag, so they stay exact too)."""

    def __init__(self, ctx: LowerCtx) -> None:
        self.ctx, self.em, self.w = ctx, ctx.em, ctx.width
        self.ft = ctx.ft
        self.it = "i64" if self.w == 1 else f"<{self.w} x i64>"
        self.bt = ctx.bt

    def splat(self, text: str, ty: str) -> str:
        return text if self.w == 1 else "<" + ", ".join([f"{ty} {text}"] * self.w) + ">"

    def f(self, bits: int) -> str:
        return self.splat(f64_literal(_double(bits)), "double")

    def i(self, value: int) -> str:
        return self.splat(str(value), "i64")

    def binop(self, kind: str, a: str, b: str) -> str:
        if not self.ctx.strict:
            return self.em.assign(f"{kind} {self.ft} {a}, {b}")
        name = f"llvm.experimental.constrained.{kind}.{self.ctx.sfx}"
        self.em.declare(f"declare {self.ft} @{name}({self.ft}, {self.ft}, metadata, metadata)")
        return self.em.assign(
            f'call {self.ft} @{name}({self.ft} {a}, {self.ft} {b}, metadata !"round.tonearest",'
            f' metadata !"fpexcept.strict") {STRICT_ATTR}'
        )

    def fma(self, a: str, b: str, c: str) -> str:
        """a*b + c, rounded once."""
        ft, sfx = self.ft, self.ctx.sfx
        if not self.ctx.strict:
            self.em.declare(f"declare {ft} @llvm.fma.{sfx}({ft}, {ft}, {ft})")
            return self.em.assign(f"call {ft} @llvm.fma.{sfx}({ft} {a}, {ft} {b}, {ft} {c})")
        name = f"llvm.experimental.constrained.fma.{sfx}"
        self.em.declare(f"declare {ft} @{name}({ft}, {ft}, {ft}, metadata, metadata)")
        return self.em.assign(
            f"call {ft} @{name}({ft} {a}, {ft} {b}, {ft} {c}, "
            f'metadata !"round.tonearest", metadata !"fpexcept.strict") {STRICT_ATTR}'
        )

    def int_op(self, op: str, a: str, b: str) -> str:
        return self.em.assign(f"{op} {self.it} {a}, {b}")

    def to_int(self, a: str) -> str:
        return self.em.assign(f"bitcast {self.ft} {a} to {self.it}")

    def to_float(self, a: str) -> str:
        return self.em.assign(f"bitcast {self.it} {a} to {self.ft}")

    def table_pairs(self, k: str) -> tuple[str, str]:
        """(tail bits, scale bits before the exponent) of table entry `k` per lane: one
        16-byte load per lane (the pair is adjacent), split into even and odd words."""
        w, em = self.w, self.em
        pairs = []
        for lane in range(w):
            at = em.assign(f"extractelement {self.it} {k}, i64 {lane}")
            p = em.assign(f"getelementptr <2 x i64>, ptr @ppy_exp_tab, i64 {at}")
            pairs.append((2, em.assign(f"load <2 x i64>, ptr {p}, align 16")))
        while len(pairs) > 1:  # concatenate pairwise: lane words in order
            (n, lo), (_, hi) = pairs[0], pairs[1]
            mask = ", ".join(f"i32 {j}" for j in range(2 * n))
            joined = em.assign(
                f"shufflevector <{n} x i64> {lo}, <{n} x i64> {hi}, <{2 * n} x i32> <{mask}>"
            )
            pairs = [*pairs[2:], (2 * n, joined)]
        words = pairs[0][1]

        def pick(first: int) -> str:
            mask = ", ".join(f"i32 {2 * j + first}" for j in range(w))
            return em.assign(
                f"shufflevector <{2 * w} x i64> {words}, <{2 * w} x i64> poison, "
                f"<{w} x i32> <{mask}>"
            )

        return pick(0), pick(1)


def _libm_exp(ctx: LowerCtx, x: str) -> str:
    """libm's scalar ``exp`` of one double (glibc's value and flags)."""
    ctx.em.declare("declare double @exp(double)")
    return ctx.em.assign(f"call double @exp(double {x}) {STRICT_ATTR}")


def lower_exp(ctx: LowerCtx, x: str) -> str:
    """exp(x) with glibc's bits and flags, at `ctx.width` lanes (see the module doc)."""
    if ctx.width == 1:
        return _libm_exp(ctx, x)
    ops = _Ops(ctx)
    ctx.em.declare(table_global())
    top = ops.int_op("and", ops.int_op("lshr", ops.to_int(x), ops.i(52)), ops.i(0x7FF))
    special = ctx.em.assign(f"icmp uge {ops.it} {top}, {ops.i(SPECIAL_TOP)}")
    tiny = ctx.em.assign(f"icmp ult {ops.it} {top}, {ops.i(TINY_TOP)}")
    odd = ctx.em.assign(f"or {ops.bt} {special}, {tiny}")
    zero = ops.f(0)
    xs = ctx.select(odd, zero, x)  # 0.0 raises no flag on the way below
    y = _main_path(ops, xs)
    one_plus = ops.binop("fadd", ops.f(_bits(1.0)), ctx.select(tiny, x, zero))
    fast = ctx.select(tiny, one_plus, y)
    return _special_lanes(ctx, x, special, fast)


def _main_path(ops: _Ops, x: str) -> str:
    """glibc's main path (2^-54 <= |x| < 512), operation for operation."""
    kd0 = ops.fma(x, ops.f(INV_LN2_N), ops.f(SHIFT))
    ki = ops.to_int(kd0)
    kd = ops.binop("fsub", kd0, ops.f(SHIFT))
    r = ops.fma(kd, ops.f(NEG_LN2_LO_N), ops.fma(kd, ops.f(NEG_LN2_HI_N), x))
    p23 = ops.fma(r, ops.f(C3), ops.f(C2))
    tail_bits, high = ops.table_pairs(ops.int_op("and", ki, ops.i((1 << TABLE_BITS) - 1)))
    tail = ops.to_float(tail_bits)
    sbits = ops.int_op("add", high, ops.int_op("shl", ki, ops.i(52 - TABLE_BITS)))
    tr = ops.binop("fadd", r, tail)
    r2 = ops.binop("fmul", r, r)
    p45 = ops.fma(r, ops.f(C5), ops.f(C4))
    t1 = ops.fma(p23, r2, tr)
    tmp = ops.fma(ops.binop("fmul", r2, r2), p45, t1)
    scale = ops.to_float(sbits)
    return ops.fma(scale, tmp, scale)


def _special_lanes(ctx: LowerCtx, x: str, special: str, fast: str) -> str:
    """`fast`, or where any lane is `special`, every lane by libm's scalar ``exp``."""
    em, w, ft = ctx.em, ctx.width, ctx.ft
    name = f"llvm.vector.reduce.or.v{w}i1"
    em.declare(f"declare i1 @{name}(<{w} x i1>)")
    anyone = em.assign(f"call i1 @{name}(<{w} x i1> {special})")
    em.declare("declare i1 @llvm.expect.i1(i1, i1)")
    rare = em.assign(f"call i1 @llvm.expect.i1(i1 {anyone}, i1 false)")
    slow, join = em.label("exp_slow"), em.label("exp_join")
    before = em.block
    em.emit(f"br i1 {rare}, label %{slow}, label %{join}")
    em.start_block(slow)
    acc = "poison"
    for lane in range(w):
        xi = em.assign(f"extractelement {ft} {x}, i64 {lane}")
        acc = em.assign(f"insertelement {ft} {acc}, double {_libm_exp(ctx, xi)}, i64 {lane}")
    after_slow = em.block
    em.emit(f"br label %{join}")
    em.start_block(join)
    return em.assign(f"phi {ft} [ {fast}, %{before} ], [ {acc}, %{after_slow} ]")
