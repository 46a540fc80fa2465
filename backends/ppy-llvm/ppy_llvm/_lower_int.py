"""Per-element lowerings of integer kernels (``KernelSpec.dtype`` ``i64`` / ``i32``).

NumPy's int64/int32 ``+ - *`` wrap around modulo 2**64 / 2**32 without a warning,
its comparisons are signed, `np.abs` of the most negative value is itself, and
`np.maximum`/`np.minimum` pick by a signed compare, `np.clip(x, lo, hi)` is NumPy's
`min(max(x, lo), hi)` (so `hi` where lo > hi): LLVM's plain integer
instructions (no ``nsw``/``nuw`` flags: wrapping is defined) give exactly that, with
no FP flags to keep. Division, powers and anything producing a float are refused in
`_from_ir` (E2049): NumPy computes those in float64 or raises on zero.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._lower import LowerCtx
    from ._spec import Node

INT_ARITH = {"add": "add", "sub": "sub", "mul": "mul"}
INT_PREDICATES = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
#: the ops an integer kernel holds
INT_OPS = frozenset(
    {
        "add",
        "sub",
        "mul",
        "neg",
        "abs",
        "maximum",
        "minimum",
        "clip",
        "compare",
        "select",
        "logical",
    }
)


def is_int(ctx: LowerCtx) -> bool:
    """Whether the kernel computes in integers."""
    return ctx.spec.dtype in ("i64", "i32")


def int_literal(ctx: LowerCtx, value: int) -> str:
    """`value` splatted at the context's width."""
    if ctx.width == 1:
        return str(value)
    return "<" + ", ".join([f"{ctx.et} {value}"] * ctx.width) + ">"


def lower_int(ctx: LowerCtx, node: Node, args: list[str]) -> str:
    """One integer node: wrapping arithmetic, signed compares, abs, extrema."""
    em, ty = ctx.em, ctx.ft
    op = node.op
    if op in INT_ARITH:
        return em.assign(f"{INT_ARITH[op]} {ty} {args[0]}, {args[1]}")
    if op == "neg":
        return em.assign(f"sub {ty} {int_literal(ctx, 0)}, {args[0]}")
    if op == "abs":  # llvm.abs with is_int_min_poison = false: abs(MIN) is MIN, as NumPy's
        sfx = ctx.et if ctx.width == 1 else f"v{ctx.width}{ctx.et}"
        em.declare(f"declare {ty} @llvm.abs.{sfx}({ty}, i1)")
        return em.assign(f"call {ty} @llvm.abs.{sfx}({ty} {args[0]}, i1 false)")
    if op in ("maximum", "minimum"):
        pred = "sgt" if op == "maximum" else "slt"
        better = em.assign(f"icmp {pred} {ty} {args[0]}, {args[1]}")
        return em.assign(f"select {ctx.bt} {better}, {ty} {args[0]}, {ty} {args[1]}")
    if op == "clip":  # NumPy's _NPY_CLIP: _NPY_MIN(_NPY_MAX(x, lo), hi)
        above = em.assign(f"icmp sgt {ty} {args[0]}, {args[1]}")
        low = em.assign(f"select {ctx.bt} {above}, {ty} {args[0]}, {ty} {args[1]}")
        below = em.assign(f"icmp slt {ty} {low}, {args[2]}")
        return em.assign(f"select {ctx.bt} {below}, {ty} {low}, {ty} {args[2]}")
    if op == "compare":
        pred = INT_PREDICATES[str(node.attr("pred"))]
        return em.assign(f"icmp {pred} {ty} {args[0]}, {args[1]}")
    if op == "const":
        return int_literal(ctx, int(node.attr("value")))  # type: ignore[call-overload]
    raise KeyError(f"integer {op}")
