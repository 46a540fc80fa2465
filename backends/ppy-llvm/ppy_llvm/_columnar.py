"""Columnar kernels: a site of the core's `columnar` ops becomes one loop over Arrow
arrays' own value and validity buffers, with Arrow's null semantics.

The kernel (ABI kinds `column` / `column_bool`, `ppy_core.runtime.abi`) takes each
array as a C Data Interface `struct ArrowArray` and walks the result a word of
validity at a time: W slots per step (8 for a float64 answer, 32 for a boolean one),
each op giving a vector of values and a word of validity bits (booleans are words
too), then a tail of n % W slots. Per op (Arrow's compute docs, checked on pyarrow 26):

- arithmetic, comparison, and/or/xor, neg/abs/invert: null if any operand is null;
- and_kleene/or_kleene: Kleene logic (false AND null is false, true OR null is true);
- select (if_else): null if the condition is null, else the chosen side's validity;
- fill_null/coalesce: the first valid operand; is_null/is_valid: never null;
- arithmetic with {nan_null = true} (pandas' Arrow-backed float ops): a NaN result is
  also null, and the result then always has a bitmap;
- divide_checked over floats: a valid slot dividing by zero makes the kernel return
  1, and the site runs Arrow, which raises there (both sides of an if_else count:
  Arrow evaluates them eagerly).

Whether the result has a validity bitmap follows Arrow's preallocation rule, per op:
an op that propagates nulls allocates one iff an operand may have nulls (a bitmap
and a null count other than 0, unknown counting as "may"); select, fill_null,
coalesce and the Kleene ops always do (their count is then unknown, so "may");
is_null/is_valid never do; an empty result never has one.

Float ops are plain IEEE (no fast-math, no contraction): Arrow's own bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ppy_core.runtime.abi import CompiledKernel

ARITH: Final = {"add": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv"}
COMPARE: Final = {
    "greater": "ogt",
    "greater_equal": "oge",
    "less": "olt",
    "less_equal": "ole",
    "equal": "oeq",
    "not_equal": "une",
}
LOGIC: Final = {"and": "and", "or": "or", "xor": "xor"}
ALWAYS_BITMAP: Final = frozenset({"select", "fill_null", "coalesce", "and_kleene", "or_kleene"})
NO_BITMAP: Final = frozenset({"is_null", "is_valid"})
WHOLE_COLUMN: Final = frozenset(
    {"columnar.filter", "columnar.take", "columnar.sort_indices", "columnar.cast"}
)


class ColumnarError(Exception):
    """A columnar site this backend does not lower (E2015)."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(
            f"columnar {detail} has no CPU kernel  [E2015]\n  hint: this site runs its library"
        )


def is_columnar(func: Any) -> bool:
    """Whether a site's function holds columnar ops (then this module lowers it).
    Duck-typed like `_from_ir`: a function without `walk` is read block by block."""
    walk = getattr(func, "walk", None)
    ops = walk() if walk else (op for b in func.body.blocks for op in b.ops)
    return any(str(op.name).startswith("columnar.") for op in ops)


@dataclass(frozen=True, slots=True)
class ColNode:
    """One op: `op` (columnar op name without dialect, or "const"), its operands as
    value ids, its result kind ("f64" or "i1"), attributes (checked, unary op, value)."""

    op: str
    args: tuple[int, ...]
    kind: str
    attrs: tuple[tuple[str, Any], ...] = ()

    def attr(self, key: str, default: Any = None) -> Any:
        return dict(self.attrs).get(key, default)


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """A columnar kernel: leaves ("a" float64 array, "b" boolean array, "s" float64
    scalar), nodes (ids continue after the leaves), the result's id."""

    leaves: str
    nodes: tuple[ColNode, ...]
    result: int

    def kind_of(self, vid: int) -> str:
        if vid < len(self.leaves):
            return "i1" if self.leaves[vid] == "b" else "f64"
        return self.nodes[vid - len(self.leaves)].kind

    @property
    def result_kind(self) -> str:
        return "column_bool" if self.kind_of(self.result) == "i1" else "column"


def _leaf(t: Any) -> str:
    name = type(t).__name__
    kind = str(getattr(getattr(t, "value", None), "kind", getattr(t, "kind", "")))
    if name == "ColumnType" and kind in ("f64", "i1"):
        return "a" if kind == "f64" else "b"
    if name == "ScalarType" and kind == "f64":
        return "s"
    raise ColumnarError(f"operand of type {t}")


def spec_from_func(func: Any) -> ColumnSpec:
    """The kernel of a site's `func.func`; ColumnarError for anything else."""
    block = func.body.blocks[0]
    leaves = "".join(_leaf(arg.type) for arg in block.args)
    if not set(leaves) & {"a", "b"}:
        raise ColumnarError("site without array operands")
    ids = {id(arg): k for k, arg in enumerate(block.args)}
    nodes: list[ColNode] = []
    result: int | None = None
    for op in block.ops:
        if op.name == "func.return":
            if len(op.operands) != 1:
                raise ColumnarError("site with several results")
            result = ids[id(op.operands[0])]
            continue
        node = _node(op, [ids[id(v)] for v in op.operands])
        nodes.append(node)
        ids[id(op.results[0])] = len(leaves) + len(nodes) - 1
    if result is None or result < len(leaves):
        raise ColumnarError("site that computes nothing")
    spec = ColumnSpec(leaves, tuple(nodes), result)
    _check_kinds(spec)
    return spec


def _node(op: Any, args: list[int]) -> ColNode:
    attrs = dict(op.attributes)
    if op.name == "builtin.constant":
        value = attrs.get("value")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ColumnarError(f"constant {value!r}")
        return ColNode("const", (), "f64", (("value", float(value)),))
    if not op.name.startswith("columnar."):
        raise ColumnarError(op.name)
    if op.name == "columnar.reduce":  # Arrow's float sums add in its own (SIMD) order
        raise ColumnarError(f"columnar.reduce {{op = {attrs.get('op')}}} (Arrow's own order)")
    if op.name in WHOLE_COLUMN:
        raise ColumnarError(f"{op.name} (a whole-column op, not elementwise)")
    name = op.name.partition(".")[2]
    out = op.results[0].type
    kind = str(getattr(getattr(out, "value", None), "kind", ""))
    if kind not in ("f64", "i1"):
        raise ColumnarError(f"{op.name} giving {out}")
    known = (*ARITH, *COMPARE, *LOGIC, "and_kleene", "or_kleene", "unary", *NO_BITMAP)
    if name not in (*known, *ALWAYS_BITMAP):
        raise ColumnarError(op.name)
    if name == "unary" and attrs.get("op") not in ("neg", "abs", "invert"):
        raise ColumnarError(f"{op.name} {attrs.get('op')}")
    keep = tuple(sorted((k, v) for k, v in attrs.items() if k in ("checked", "op", "nan_null")))
    return ColNode(name, tuple(args), kind, keep)


def _check_kinds(spec: ColumnSpec) -> None:
    """Operands of the kinds each op takes (the plugin converged them so; a pass may not
    have kept it)."""
    for node in spec.nodes:
        kinds = [spec.kind_of(a) for a in node.args]
        if node.op in ARITH or node.op in COMPARE or node.attr("op") in ("neg", "abs"):
            bad = "i1" in kinds
        elif node.op in (*LOGIC, "and_kleene", "or_kleene") or node.attr("op") == "invert":
            pairs = zip(kinds, node.args, strict=True)
            bad = any(k != "i1" and not _is_const(spec, a) for k, a in pairs)
        else:
            bad = False
        if bad:
            raise ColumnarError(f"{node.op} over {kinds}")


def _is_const(spec: ColumnSpec, vid: int) -> bool:
    return vid >= len(spec.leaves) and spec.nodes[vid - len(spec.leaves)].op == "const"


def symbol_of(spec: ColumnSpec) -> str:
    """The kernel's symbol: a prefix of the sha256 of its spec."""
    import hashlib

    return "ppy_col_" + hashlib.sha256(repr(spec).encode()).hexdigest()[:20]


def compile_columns(specs: list[ColumnSpec]) -> list[CompiledKernel]:
    """Every spec into one shared library (cached by content); one kernel each."""
    from ppy_core.runtime.abi import CompiledKernel, KernelSignature

    from ._columnar_np import emit_twin_kernel, twin_supported
    from ._columnar_steps import emit_column_kernel, module_text
    from ._host import fingerprint
    from ._toolchain import build_shared

    bodies = {symbol_of(s): emit_column_kernel(s, symbol_of(s)) for s in specs}
    # each kernel's NumPy-null-model twin beside it (`<symbol>_np`, `_columnar_np`)
    twins = [s for s in specs if twin_supported(s)]
    bodies.update({symbol_of(s) + "_np": emit_twin_kernel(s, symbol_of(s)) for s in twins})
    path = build_shared(module_text(list(bodies.values())), "columnar")
    fp = fingerprint()
    return [
        CompiledKernel(str(path), symbol_of(s), KernelSignature(s.result_kind, s.leaves), fp)
        for s in specs
    ]


def compile_funcs(funcs: list[Any]) -> list[CompiledKernel]:
    """`compile_columns` of the sites' functions (each checked by `can_lower` first)."""
    return compile_columns([spec_from_func(f) for f in funcs])


__all__ = [
    "ColNode",
    "ColumnSpec",
    "ColumnarError",
    "compile_columns",
    "compile_funcs",
    "is_columnar",
    "spec_from_func",
    "symbol_of",
]
