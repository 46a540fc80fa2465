"""Per-element lowerings of tensor ops, keyed by op name, at one vector width.

Every lowering is lane-wise and IEEE-exact, so a vector of W lanes gives the
bits the scalar code (and NumPy's SIMD loops) give. Outside `@ppy.fastmath`
all arithmetic is LLVM's constrained intrinsics with ``fpexcept.strict``:
no contraction, no reassociation, quiet compares, and the FP exception flags
the dispatcher reads are the flags NumPy's separate passes would raise.
"""

from __future__ import annotations

import functools
import platform
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ._exp import INLINE_EXP, lower_exp
from ._exp32 import INLINE_EXP32, lower_exp32
from ._irtext import STRICT_ATTR, Emitter, f64_literal
from ._spec import POW_FAST, KernelSpec, Node, const_value

_RM = 'metadata !"round.tonearest"'
_EX = 'metadata !"fpexcept.strict"'


@dataclass(slots=True)
class LowerCtx:
    """What a lowering sees: the emitter, the vector width, strictness, the spec."""

    em: Emitter
    width: int
    strict: bool
    spec: KernelSpec
    big: bool = False  # this code runs only where NumPy's call covers > 8 elements
    #: arithmetic nodes whose operands are never both NaN with different bits
    #: (`_nan_order.unordered_nodes`): they need no first-NaN select
    unordered: frozenset[Node] = frozenset()
    #: i64 SSA, or "": bit j set where NumPy's temporary elision swaps the j-th of
    #: `swap` (`_nan_order.swap_nodes`) in this call
    elide: str = ""
    swap: Mapping[Node, tuple[int, int]] = field(default_factory=dict)

    def swapped(self, node: Node) -> str:
        """i1: NumPy runs `node` (a swap node) as ``np.add(r, l, out=r)`` here."""
        j = list(self.swap).index(node)
        seen = self.em.assign(f"and i64 {self.elide}, {1 << j}")
        return self.em.assign(f"icmp ne i64 {seen}, 0")

    def scalar_like(self, vid: int) -> bool:
        """Whether NumPy sees value `vid` as a broadcast scalar (stride 0)."""
        if vid < len(self.spec.leaves):
            return self.spec.leaves[vid] == "scalar"
        return self.spec.nodes[vid - len(self.spec.leaves)].op == "const"

    @property
    def et(self) -> str:
        """The element float type: ``double``, or ``float`` in a float32 kernel."""
        return {"f32": "float", "i64": "i64", "i32": "i32"}.get(self.spec.dtype, "double")

    @property
    def ft(self) -> str:
        """The float type at this width."""
        return self.et if self.width == 1 else f"<{self.width} x {self.et}>"

    @property
    def bt(self) -> str:
        """The bool type at this width."""
        return "i1" if self.width == 1 else f"<{self.width} x i1>"

    @property
    def sfx(self) -> str:
        """Intrinsic type suffix."""
        kind = self.spec.dtype
        return kind if self.width == 1 else f"v{self.width}{kind}"

    def splat(self, value: float) -> str:
        """A constant at this width."""
        lit = float_literal(value, self.spec.dtype)
        if self.width == 1:
            return lit
        return "<" + ", ".join([f"{self.et} {lit}"] * self.width) + ">"

    def binop(
        self, kind: str, a: str, b: str, ordered: bool = True, first: str | None = None
    ) -> str:
        """fadd/fsub/fmul/fdiv, strict or fast. Strict x86 code pins the instruction
        and its operand order (`pinned_binop`); `ordered` False: `a` and `b` are never
        both NaN with different bits, so which one x86 takes first does not matter;
        `first`: the operand whose NaN wins (default `a`)."""
        if not self.strict:
            return self.em.assign(f"{kind} fast {self.ft} {a}, {b}")
        if x86_isa() and self.spec.dtype == "f64":  # float32 NaN results go to NumPy
            result = pinned_binop(self, kind, a, b)
            return self.first_nan_wins(first or a, result) if ordered else result
        name = f"llvm.experimental.constrained.{kind}.{self.sfx}"
        self.em.declare(f"declare {self.ft} @{name}({self.ft}, {self.ft}, metadata, metadata)")
        return self.em.assign(
            f"call {self.ft} @{name}({self.ft} {a}, {self.ft} {b}, {_RM}, {_EX}) {STRICT_ATTR}"
        )

    def first_nan_wins(self, a: str, result: str) -> str:
        """x86's rule made explicit: a NaN first source is the result, quieted.

        The pinned instruction alone should compute this, but on an AVX2 host the
        emitted code for `2a + 3b - a/b` took the second NaN where both were NaN (its
        inputs appeared swapped after register allocation). The select costs a compare
        and a blend per vector and makes the answer independent of operand placement."""
        it = "i64" if self.width == 1 else f"<{self.width} x i64>"
        quiet_bit = "2251799813685248"  # bit 51: x86 quiets a signalling NaN this way
        quiet = (
            quiet_bit
            if self.width == 1
            else "<" + ", ".join([f"i64 {quiet_bit}"] * self.width) + ">"
        )
        bits = self.em.assign(f"bitcast {self.ft} {a} to {it}")
        quieted = self.em.assign(f"or {it} {bits}, {quiet}")
        a_quiet = self.em.assign(f"bitcast {it} {quieted} to {self.ft}")
        return self.select(self.fcmp("uno", a, a), a_quiet, result)

    def fcmp(self, pred: str, a: str, b: str) -> str:
        """A quiet comparison (no invalid flag for quiet NaNs)."""
        if not self.strict:
            return self.em.assign(f"fcmp fast {pred} {self.ft} {a}, {b}")
        name = f"llvm.experimental.constrained.fcmp.{self.sfx}"
        self.em.declare(f"declare {self.bt} @{name}({self.ft}, {self.ft}, metadata, metadata)")
        return self.em.assign(
            f"call {self.bt} @{name}({self.ft} {a}, {self.ft} {b}, "
            f'metadata !"{pred}", {_EX}) {STRICT_ATTR}'
        )

    def rounding(self, kind: str, a: str) -> str:
        """sqrt (rounded) or floor/ceil/trunc (exact)."""
        if not self.strict:
            name = f"llvm.{kind}.{self.sfx}"
            self.em.declare(f"declare {self.ft} @{name}({self.ft})")
            return self.em.assign(f"call fast {self.ft} @{name}({self.ft} {a})")
        name = f"llvm.experimental.constrained.{kind}.{self.sfx}"
        meta = f"{_RM}, {_EX}" if kind == "sqrt" else _EX
        params = "metadata, metadata" if kind == "sqrt" else "metadata"
        self.em.declare(f"declare {self.ft} @{name}({self.ft}, {params})")
        return self.em.assign(f"call {self.ft} @{name}({self.ft} {a}, {meta}) {STRICT_ATTR}")

    def select(self, cond: str, a: str, b: str) -> str:
        """Lane-wise select."""
        return self.em.assign(f"select {self.bt} {cond}, {self.ft} {a}, {self.ft} {b}")


Lowering = Callable[[LowerCtx, Node, list[str]], str]


def float_literal(value: float, dtype: str = "f64") -> str:
    """An exact LLVM literal of `value` as a double, or rounded to float32 (to nearest,
    as NumPy casts a Python float to float32; LLVM writes a float's literal as the
    double of the same value)."""
    if dtype == "f32":
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    return f64_literal(value)


_ARITH = {"add": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv"}
_FCMP = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}


def lower_arith(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """a op b. x86 returns the first operand's NaN when both are NaN; NumPy's
    add/multiply loops (measured, `tests/test_elementwise.py`) put the *second*
    operand first in their scalar tail (the last n % 8 elements, n > 8), and a
    broadcast scalar operand first whenever n > 8. We order operands the same way, and
    flip a swap node's where NumPy elides its right operand's temporary (`ctx.elide`)."""
    a, b = args
    if node.op in ("add", "mul"):
        sa, sb = (ctx.scalar_like(v) for v in node.args)
        if ctx.big and ((sb and not sa) or (not sa and not sb and ctx.width == 1)):
            a, b = b, a
    ordered = node not in ctx.unordered
    if ordered and ctx.elide and node in ctx.swap:  # NumPy runs np.add(r, l, out=r)
        first = ctx.em.assign(f"select i1 {ctx.swapped(node)}, {ctx.ft} {b}, {ctx.ft} {a}")
        return ctx.binop(_ARITH[node.op], a, b, first=first)
    return ctx.binop(_ARITH[node.op], a, b, ordered)


@functools.cache
def x86_isa() -> str:
    """``avx512`` / ``avx`` / ``sse2`` for the x86 host the kernels are built for, or ``""``."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return ""
    from ._host import host

    features = set(host()[1].split(","))
    return "avx512" if "+avx512f" in features else "avx" if "+avx" in features else "sse2"


_X86_OP = {"fadd": "add", "fsub": "sub", "fmul": "mul", "fdiv": "div"}


def pinned_binop(ctx: LowerCtx, kind: str, a: str, b: str) -> str:
    """``a op b`` as one x86 instruction in inline asm, `a` its first source.

    LLVM gives no guarantee on NaN bits: it commutes fadd/fmul to fold a load and its
    instruction selection rewrites ``(-x) + y`` into ``y - x`` even for constrained
    (strictfp) operations. x86 returns the first source's NaN when both are NaN and
    keeps a NaN operand's sign, so only a pinned instruction gives NumPy's NaN bits.
    The lanes of a vector are split into the host's register width."""
    op, em = _X86_OP[kind], ctx.em
    isa = x86_isa()
    lanes = {"avx512": 8, "avx": 4, "sse2": 2}[isa] if ctx.width > 1 else 1
    suffix = "sd" if lanes == 1 else "pd"
    if isa == "sse2":
        asm, cons = f"{op}{suffix} $2, $0", "=x,0,x"
    else:
        asm, cons = f"v{op}{suffix} $2, $1, $0", "=v,v,v" if lanes == 8 else "=x,x,x"

    def one(t: str, x: str, y: str) -> str:
        return em.assign(f'call {t} asm "{asm}", "{cons}"({t} {x}, {t} {y}) {STRICT_ATTR}')

    if ctx.width == 1 or lanes == ctx.width:
        return one(ctx.ft, a, b)
    part = f"<{lanes} x double>"
    pieces = []
    for k in range(0, ctx.width, lanes):
        mask = "<" + ", ".join(f"i32 {k + j}" for j in range(lanes)) + ">"
        xa = em.assign(f"shufflevector {ctx.ft} {a}, {ctx.ft} poison, <{lanes} x i32> {mask}")
        xb = em.assign(f"shufflevector {ctx.ft} {b}, {ctx.ft} poison, <{lanes} x i32> {mask}")
        pieces.append((lanes, one(part, xa, xb)))
    while len(pieces) > 1:  # concatenate pairwise back to the full width
        (n, lo), (_, hi) = pieces[0], pieces[1]
        mask = "<" + ", ".join(f"i32 {j}" for j in range(2 * n)) + ">"
        joined = em.assign(
            f"shufflevector <{n} x double> {lo}, <{n} x double> {hi}, <{2 * n} x i32> {mask}"
        )
        pieces = [*pieces[2:], (2 * n, joined)]
    return pieces[0][1]


def lower_extremum(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """np.maximum/np.minimum as NumPy's SIMD loops: a if a is NaN, else x86
    ``maxpd(a, b)`` = ``a > b ? a : b`` (so b when b is NaN or a == b == +-0)."""
    a, b = args
    nan_a = ctx.fcmp("uno", a, a)
    better = ctx.fcmp("ogt" if node.op == "maximum" else "olt", a, b)
    pick = ctx.select(better, a, b)
    return ctx.select(nan_a, a, pick)


def lower_neg(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """Sign flip (also of NaN)."""
    return ctx.em.assign(f"fneg {ctx.ft} {args[0]}")


def lower_abs(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """Sign clear (also of NaN)."""
    name = f"llvm.fabs.{ctx.sfx}"
    ctx.em.declare(f"declare {ctx.ft} @{name}({ctx.ft})")
    return ctx.em.assign(f"call {ctx.ft} @{name}({ctx.ft} {args[0]})")


def lower_unary(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """The IEEE-exact unary functions (transcendentals are loop calls, but for a
    proven `INLINE_EXP`: glibc's exp, and `INLINE_EXP32`: NumPy's float32 exp, inline)."""
    op = str(node.attr("op"))
    if op == INLINE_EXP:
        return lower_exp(ctx, args[0])
    if op == INLINE_EXP32:
        return lower_exp32(ctx, args[0])
    if op in ("sqrt", "floor", "ceil", "trunc"):
        return ctx.rounding(op, args[0])
    if op == "square":
        return ctx.binop("fmul", args[0], args[0], ordered=False)  # one NaN, twice
    if op == "reciprocal":
        return ctx.binop("fdiv", ctx.splat(1.0), args[0], ordered=False)
    if op in ("neg", "abs"):
        return LOWERINGS[op](ctx, node, args)
    raise KeyError(f"unary {op}")


def lower_pow_fast(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """``array ** scalar`` fast paths of NumPy (fast_scalar_power)."""
    exponent = const_value(ctx.spec, node.args[1])
    kind = POW_FAST[exponent]  # type: ignore[index]
    return lower_unary(ctx, Node("unary", node.args[:1], (("op", kind),)), args[:1])


def lower_compare(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """Ordered quiet compares; ``ne`` is unordered-or-not-equal (NaN != x)."""
    return ctx.fcmp(_FCMP[str(node.attr("pred"))], args[0], args[1])


def lower_logical(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """`&`, `|`, `^`, `~` of i1 values (NumPy's bool arrays): exact, no flags."""
    op = str(node.attr("op"))
    if op == "not":
        true = "true" if ctx.width == 1 else "<" + ", ".join(["i1 true"] * ctx.width) + ">"
        return ctx.em.assign(f"xor {ctx.bt} {args[0]}, {true}")
    return ctx.em.assign(f"{op} {ctx.bt} {args[0]}, {args[1]}")


def lower_select(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """np.where(cond, a, b): a bit copy."""
    return ctx.select(args[0], args[1], args[2])


def lower_const(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """A splatted literal."""
    return ctx.splat(float(node.attr("value")))  # type: ignore[arg-type]


LOWERINGS: Mapping[str, Lowering] = {
    "add": lower_arith,
    "sub": lower_arith,
    "mul": lower_arith,
    "div": lower_arith,
    "maximum": lower_extremum,
    "minimum": lower_extremum,
    "neg": lower_neg,
    "abs": lower_abs,
    "unary": lower_unary,
    "pow": lower_pow_fast,
    "compare": lower_compare,
    "logical": lower_logical,
    "select": lower_select,
    "const": lower_const,
}


def default_lowerings() -> dict[str, Lowering]:
    """A fresh copy of the lowering registry (callers may extend it)."""
    return dict(LOWERINGS)
