"""complex128 arrays in a float64 kernel: ``abs(z)`` as NumPy's SIMD loop computes it.

A ``complex`` leaf is a complex128 array (pairs of float64, 16 bytes an element) that
enters the kernel only through a ``cabs`` node, whose value is a float64: so
``abs(Z) > horizon`` is one pass over Z writing bools, where NumPy writes a float64
temporary and reads it back. Nothing else of complex arithmetic is lowered here.

NumPy 2's ``CDOUBLE_absolute`` (``loops_unary_complex.dispatch.c.src``,
``simd_cabsolute_f64``) runs its SIMD body on every element of arrays whose strides
its vectors can load, tail included (masked loads), and never libm's ``hypot``
there: with ``a = |re|``, ``b = |im|``, an infinite part gives inf, else a NaN real
part NaN, else a NaN imaginary part that NaN (its own bits, quieted), else
``sqrt(fma(r, r, 1)) * L`` with ``L = max(a, b)``, ``r = min(a, b) / L`` (0 where
``L`` is 0). The fma is its ``npyv_muladd_f64``: fused where the dispatched target has
FMA3 (X86_V3/X86_V4), so this lowering needs it too (`complex_refusal`); whether the
bits are NumPy's on this build and CPU is proven by experiment (`_proof`'s ``cabs``
case on complex inputs with special values in either part) before a kernel is built.

A compare of such an abs with a scalar (``abs(Z) > horizon``) needs the hypot only
where |z| is near the bound: a vector whose lanes the sum of squares decides, far from
overflow and underflow and beyond a relative margin no rounding reaches, skips it
(`lower_cabs_compare`): ``abs(Z) > h`` over 4e4 elements in 0.56x the time of the
exact kernel, 0.70x NumPy's abs-then-compare.

NaN and infinity are told apart from the bits (integer compares raise no flag, a
quiet compare of a signalling NaN would); the lanes NumPy masks out of its division
divide 0 by 1 here, so no flag is raised where NumPy raises none (it clears the flags
its loop raised; an overflow of ``h * L`` raised here sends the call to NumPy).
"""

from __future__ import annotations

import functools
import hashlib
import struct
from typing import TYPE_CHECKING

from ._errors import LlvmBackendError
from ._exp import host_has_fma
from ._irtext import STRICT_ATTR, f64_literal
from ._nan_order import swap_nodes
from ._spec import KernelBuilder, KernelSpec, loop_name

if TYPE_CHECKING:
    from ._lower import LowerCtx

_INF_BITS = 0x7FF0_0000_0000_0000
_ABS_MASK = 0x7FFF_FFFF_FFFF_FFFF
_QUIET_BIT = 0x0008_0000_0000_0000
_NAN = float("nan")  # NumPy's NPY_NAN: 0x7ff8000000000000


def has_complex(spec: KernelSpec) -> bool:
    """Whether the kernel reads a complex128 array."""
    return "complex" in spec.leaves


def complex_refusal(spec: KernelSpec) -> None:
    """LlvmBackendError (E2047) unless every complex leaf is read only by ``cabs`` in a
    float64 map without library loops (the kernel's other entries, reductions and
    NumPy's loop calls assume 8-byte elements), on a host with FMA."""
    if not has_complex(spec):
        return
    nl = len(spec.leaves)
    for node in spec.nodes:
        complex_args = [a for a in node.args if a < nl and spec.leaves[a] == "complex"]
        if complex_args and node.op != "cabs":
            raise LlvmBackendError("E2047", f"a complex128 array under {node.op}")
    if spec.result < nl:
        raise LlvmBackendError("E2047", "a complex128 array as the result")
    if spec.dtype != "f64" or spec.fastmath:
        raise LlvmBackendError("E2047", f"complex128 with {spec.dtype} arrays")
    if spec.reduce is not None:  # correct, but measured 1.1-1.5x NumPy's from 10^4 elements
        raise LlvmBackendError("E2047", f"a reduction ({spec.reduce}) of complex128")
    if any(loop_name(n, spec) for n in spec.nodes):
        raise LlvmBackendError("E2047", "complex128 beside NumPy's loop calls")
    if swap_nodes(spec):  # the elision table numbers float64 array leaves only
        raise LlvmBackendError("E2047", "complex128 beside a node NumPy's elision may swap")
    if not host_has_fma():
        raise LlvmBackendError("E2047", "this CPU has no FMA (NumPy's SIMD hypot fuses)")


#: exact hypots with this many other operations or fewer run no faster than NumPy's
#: abs loop and its arithmetic (measured, interleaved best-of-200, one thread:
#: `np.abs(z) * 2.0` 0.97-1.17x NumPy's time over 1e3-1e6 elements, `np.abs(z) * s + 1.0`
#: 0.94-1.10x, `np.abs(z) * x - x * 0.5` 0.73-0.96x from 1e3 on)
CHEAP_AROUND = 2


def complex_cost(spec: KernelSpec) -> str | None:
    """`_cost`'s detail for a kernel whose abs of complex128 is computed whole (no
    bounded compare decides it) beside at most `CHEAP_AROUND` other operations, else
    None."""
    if not has_complex(spec):
        return None
    nl = len(spec.leaves)
    decided: dict[int, int] = {}  # the bounded compares, by the cabs they decide
    for k in range(len(spec.nodes)):
        found = bounded_compare(spec, nl + k)
        if found is not None:
            decided[found[0]] = nl + k
    exact = [nl + k for k, n in enumerate(spec.nodes) if n.op == "cabs" and nl + k not in decided]
    skip = {*decided, *decided.values()}
    around = [
        n for k, n in enumerate(spec.nodes) if n.op not in ("cabs", "const") and nl + k not in skip
    ]
    if not exact or len(around) > CHEAP_AROUND:
        return None
    return f"abs of complex128 with {len(around)} other operations: NumPy's SIMD abs is as fast"


def complex_parts(ctx: LowerCtx, base: str, index: str) -> tuple[str, str]:
    """(real parts, imaginary parts) of elements ``index .. index+width`` of the
    complex128 array at `base`: one load of 2*width doubles, split even/odd."""
    em, w = ctx.em, ctx.width
    at = em.assign(f"getelementptr [2 x double], ptr {base}, i64 {index}")
    if w == 1:
        re = em.assign(f"load double, ptr {at}, align 8")
        im_at = em.assign(f"getelementptr double, ptr {at}, i64 1")
        return re, em.assign(f"load double, ptr {im_at}, align 8")
    both = em.assign(f"load <{2 * w} x double>, ptr {at}, align 8")
    parts = []
    for first in (0, 1):
        mask = "<" + ", ".join(f"i32 {2 * k + first}" for k in range(w)) + ">"
        parts.append(
            em.assign(
                f"shufflevector <{2 * w} x double> {both}, <{2 * w} x double> poison, "
                f"<{w} x i32> {mask}"
            )
        )
    return parts[0], parts[1]


def lower_cabs(ctx: LowerCtx, re: str, im: str) -> str:
    """``abs(re + im*j)`` with NumPy's SIMD bits (see the module docstring)."""
    em, ft, bt = ctx.em, ctx.ft, ctx.bt
    it = "i64" if ctx.width == 1 else f"<{ctx.width} x i64>"

    def ints(value: int) -> str:
        return str(value) if ctx.width == 1 else "<" + ", ".join([f"i64 {value}"] * ctx.width) + ">"

    def fabs(x: str) -> str:
        name = f"llvm.fabs.{ctx.sfx}"
        em.declare(f"declare {ft} @{name}({ft})")
        return em.assign(f"call {ft} @{name}({ft} {x})")

    def bits(x: str) -> str:
        return em.assign(f"bitcast {ft} {x} to {it}")

    def either(p: str, q: str) -> str:
        return em.assign(f"or {bt} {p}, {q}")

    a, b = fabs(re), fabs(im)
    ai, bi = bits(a), bits(b)
    re_nan = em.assign(f"icmp ugt {it} {ai}, {ints(_INF_BITS)}")
    im_nan = em.assign(f"icmp ugt {it} {bi}, {ints(_INF_BITS)}")
    inf = either(
        em.assign(f"icmp eq {it} {ai}, {ints(_INF_BITS)}"),
        em.assign(f"icmp eq {it} {bi}, {ints(_INF_BITS)}"),
    )
    a_larger = em.assign(f"icmp ugt {it} {ai}, {bi}")  # non-negative doubles order as ints
    larger = ctx.select(a_larger, a, b)
    smaller = ctx.select(a_larger, b, a)
    zero = em.assign(f"icmp eq {it} {bits(larger)}, {ints(0)}")
    masked = either(either(zero, inf), either(re_nan, im_nan))
    den = ctx.select(masked, ctx.splat(1.0), larger)
    num = ctx.select(masked, ctx.splat(0.0), smaller)
    ratio = ctx.binop("fdiv", num, den, ordered=False)
    hypot = ctx.rounding("sqrt", _fma(ctx, ratio, ratio, ctx.splat(1.0)))
    value = ctx.binop("fmul", hypot, den, ordered=False)
    value = ctx.select(zero, ctx.splat(0.0), value)
    quiet = em.assign(f"bitcast {it} {em.assign(f'or {it} {bi}, {ints(_QUIET_BIT)}')} to {ft}")
    value = ctx.select(im_nan, quiet, value)
    value = ctx.select(re_nan, _nan(ctx), value)
    return ctx.select(inf, ctx.splat(float("inf")), value)


#: ``scalar pred abs(z)`` as ``abs(z) pred' scalar``
_FLIPPED = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
_FCMP = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
#: the decided lanes: |z|^2 beyond h^2 by this relative margin (NumPy's |z| and the
#: sum of squares are both within 8 ulps of the true |z|, |z|^2: far inside it)
_MARGIN = 2.0**-40


def bounded_compare(spec: KernelSpec, vid: int) -> tuple[int, int, str] | None:
    """(cabs node, scalar operand, predicate of ``abs(z) pred scalar``) where node `vid`
    compares a ``cabs`` read nowhere else with a scalar or literal; else None."""
    nl = len(spec.leaves)
    node = spec.nodes[vid - nl]
    if node.op != "compare" or spec.fastmath or len(node.args) != 2:
        return None
    pred = str(node.attr("pred"))
    for k, flip in ((0, False), (1, True)):
        cabs, other = node.args[k], node.args[1 - k]
        if cabs < nl or spec.nodes[cabs - nl].op != "cabs" or cabs == spec.result:
            continue
        scalar = other < nl and spec.leaves[other] == "scalar"
        if not (scalar or (other >= nl and spec.nodes[other - nl].op == "const")):
            continue
        if sum(a == cabs for n in spec.nodes for a in n.args) == 1:
            return cabs, other, _FLIPPED[pred] if flip else pred
    return None


def lower_cabs_compare(ctx: LowerCtx, parts: tuple[str, str], h: str, pred: str) -> str:
    """``abs(z) pred h`` with NumPy's answer, its hypot computed only for vectors holding
    a lane where it can matter. A lane is decided by ``q = re*re + im*im`` against
    ``h*h`` widened by `_MARGIN` where both are far from overflow and underflow (the
    larger part and h in [2^-400, 2^400] and [2^-300, 2^300], parts below 2^-500 taken
    as 0); the others (zeros, infinities, NaNs, extremes, |z| near h) take the exact
    `lower_cabs`. No operation of the decided path raises a flag but inexact."""
    em, w = ctx.em, ctx.width
    it = "i64" if w == 1 else f"<{w} x i64>"

    def ints(value: int) -> str:
        return str(value) if w == 1 else "<" + ", ".join([f"i64 {value}"] * w) + ">"

    def bits(x: str) -> str:
        return em.assign(f"bitcast {ctx.ft} {x} to {it}")

    def within(x: str, lo: float, hi: float) -> str:
        lo_ok = em.assign(f"icmp uge {it} {x}, {ints(_bits_of(lo))}")
        hi_ok = em.assign(f"icmp ule {it} {x}, {ints(_bits_of(hi))}")
        return em.assign(f"and {ctx.bt} {lo_ok}, {hi_ok}")

    re, im = parts
    ai, bi = (em.assign(f"and {it} {bits(x)}, {ints(_ABS_MASK)}") for x in parts)
    a_larger = em.assign(f"icmp ugt {it} {ai}, {bi}")
    larger = em.assign(f"select {ctx.bt} {a_larger}, {it} {ai}, {it} {bi}")
    z_sure = within(larger, 2.0**-400, 2.0**400)
    fast = em.assign(f"and {ctx.bt} {z_sure}, {within(bits(h), 2.0**-300, 2.0**300)}")
    squares = []
    for x in (ai, bi):
        big = em.assign(f"icmp uge {it} {x}, {ints(_bits_of(2.0**-500))}")
        keep = em.assign(f"and {ctx.bt} {fast}, {big}")
        part = em.assign(f"bitcast {it} {x} to {ctx.ft}")
        part = ctx.select(keep, part, ctx.splat(0.0))
        squares.append(ctx.binop("fmul", part, part, ordered=False))
    q = ctx.binop("fadd", squares[0], squares[1], ordered=False)
    h_sure = ctx.select(fast, h, ctx.splat(1.0))
    hh = ctx.binop("fmul", h_sure, h_sure, ordered=False)
    above = ctx.fcmp("ogt", q, ctx.binop("fmul", hh, ctx.splat(1.0 + _MARGIN), ordered=False))
    below = ctx.fcmp("olt", q, ctx.binop("fmul", hh, ctx.splat(1.0 - _MARGIN), ordered=False))
    decided = em.assign(f"and {ctx.bt} {fast}, {em.assign(f'or {ctx.bt} {above}, {below}')}")
    answer = {"gt": above, "ge": above, "lt": below, "le": below}.get(pred)
    if answer is None:  # eq never holds on a decided lane, ne always
        answer = _bools(w, pred == "ne")
    every = decided
    if w > 1:
        name = f"llvm.vector.reduce.and.v{w}i1"
        em.declare(f"declare i1 @{name}(<{w} x i1>)")
        every = em.assign(f"call i1 @{name}(<{w} x i1> {decided})")
    before, exact, join = em.block, em.label("cabs_exact"), em.label("cabs_done")
    em.emit(f"br i1 {every}, label %{join}, label %{exact}")
    em.start_block(exact)
    precise = ctx.fcmp(_FCMP[pred], lower_cabs(ctx, re, im), h)
    end = em.block
    em.emit(f"br label %{join}")
    em.start_block(join)
    return em.assign(f"phi {ctx.bt} [ {answer}, %{before} ], [ {precise}, %{end} ]")


def _bits_of(value: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def _bools(width: int, value: bool) -> str:
    text = "true" if value else "false"
    return text if width == 1 else "<" + ", ".join([f"i1 {text}"] * width) + ">"


def _nan(ctx: LowerCtx) -> str:
    """NumPy's NaN constant (positive, quiet, no payload) at the context's width."""
    lit = f64_literal(_NAN)
    return lit if ctx.width == 1 else "<" + ", ".join([f"double {lit}"] * ctx.width) + ">"


def _fma(ctx: LowerCtx, a: str, b: str, c: str) -> str:
    """``a*b + c`` rounded once (NumPy's npyv_muladd_f64 on an FMA target)."""
    ft, sfx, em = ctx.ft, ctx.sfx, ctx.em
    name = f"llvm.experimental.constrained.fma.{sfx}"
    em.declare(f"declare {ft} @{name}({ft}, {ft}, {ft}, metadata, metadata)")
    return em.assign(
        f"call {ft} @{name}({ft} {a}, {ft} {b}, {ft} {c}, "
        f'metadata !"round.tonearest", metadata !"fpexcept.strict") {STRICT_ATTR}'
    )


#: the proof cases' name (one verdict for every kernel reading complex128 arrays)
PROOF_NAME = "cabs"


def complex_proof_specs() -> list[tuple[KernelSpec, tuple]]:
    """(spec, NumPy expression) of the proof: ``abs(z)`` bare, compared and in
    arithmetic (every proof kernel is called with (z, y), y a float64 array)."""
    out: list[tuple[KernelSpec, tuple]] = []
    for shape in ("bare", "compare", "mul"):
        b = KernelBuilder()
        z, y = b.leaf("complex"), b.leaf()
        cabs = b.op("cabs", z)
        if shape == "bare":
            out.append((b.build(cabs), ("absolute", 0)))
        elif shape == "compare":
            out.append(
                (b.build(b.op("compare", cabs, y, pred="gt")), ("greater", ("absolute", 0), 1))
            )
        else:
            out.append((b.build(b.op("mul", cabs, y)), ("mul", ("absolute", 0), 1)))
    return out


def run_complex_proof(library: str) -> dict[str, str]:
    """``{"cabs": "ok" | reason}`` by experiment (`library`'s adapter, complex inputs)."""
    from ppy_core.runtime.adapter import adapter

    from ._proof import _cases

    if not host_has_fma():
        return {PROOF_NAME: "this CPU has no FMA (NumPy's SIMD hypot fuses)"}
    named = [(PROOF_NAME, spec, expr) for spec, expr in complex_proof_specs()]
    verdict = adapter(library).prove(_cases(named, "complex", "proof-complex"))
    return {PROOF_NAME: verdict.get(PROOF_NAME, "not tested")}


def complex_unproven(library: str) -> str | None:
    """E2104's detail where a kernel's complex128 abs is not proven NumPy's for
    `library`'s build on this CPU, else None. The verdict is cached as the loops' are,
    and under the proof kernels' LLVM IR too: the kernel is the computation here, so
    a change to its code generation proves it again."""
    from ._proof import _cached

    try:
        prefix = f"proof-complex-{_proof_code_key()}"
        verdict = _cached(prefix, library, run_complex_proof, False)
    except (LlvmBackendError, LookupError, ImportError, OSError) as exc:
        return f"abs of complex128 (proof could not run: {exc})"
    found = verdict.get(PROOF_NAME, "not tested")
    return None if found == "ok" else f"abs of complex128: {found}"


@functools.cache
def _proof_code_key() -> str:
    """sha256 prefix of the proof kernels' LLVM IR (what `lower_cabs` emits)."""
    from ._kernels import emit_kernel, module_text
    from ._lower import default_lowerings

    decls: set[str] = set()
    bodies = [
        emit_kernel(spec, f"k{k}", default_lowerings(), decls)
        for k, (spec, _) in enumerate(complex_proof_specs())
    ]
    return hashlib.sha256(module_text(bodies, decls).encode()).hexdigest()[:16]
