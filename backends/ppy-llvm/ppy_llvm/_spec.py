"""The backend's own small kernel description, independent of ppy_core's IR.

A `KernelSpec` is a DAG in SSA order: value ids ``0..len(leaves)-1`` are the
leaves (call arguments, in call order), each `Node` appends one value. The
IR-facing adapter (`_from_ir.spec_from_func`) and the tests' `KernelBuilder`
both produce it, so code generation never depends on the core's classes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Final, Literal

LeafKind = Literal["array", "scalar", "complex", "int", "int_scalar"]  # complex: a
# complex128 array (`_complex`); int: an int64 array a float64 kernel converts as it
# loads, int_scalar: a Python int its int64 nodes read (`_mixed`)
FloatKind = Literal["f64", "f32", "i64", "i32"]  # the element type (also integers)
ReduceKind = Literal["add", "mul", "max", "min", "mean"]
AlongKind = Literal["", "rows", "rows_keep"]  # a reduction's extent (`KernelSpec.along`)

BINARY: Final = frozenset({"add", "sub", "mul", "div", "pow", "maximum", "minimum"})
EXACT_UNARY: Final = frozenset(
    {"neg", "abs", "sqrt", "floor", "ceil", "trunc", "square", "reciprocal"}
)
#: unary functions NumPy computes with a CPU-dispatched loop; fused by calling that loop
LOOP_UNARY: Final = (
    "exp",
    "log",
    "log1p",
    "expm1",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "sign",
)
#: two-input functions (`binary` nodes) fused by calling the library's loop; `clip`
#: (three inputs) likewise. Their NaN and signed-zero choices differ between NumPy's
#: SIMD body and its scalar tail, so only the library's own loop gives its bits.
LOOP_BINARY: Final = ("arctan2", "hypot", "fmax", "fmin")


def is_loop_unary(op: object) -> bool:
    """Whether a `unary` op is fused by calling a library's loop: one of `LOOP_UNARY`
    (NumPy's), or another library's one-input ufunc named ``module:attr``
    (``scipy.special:erf``), resolved by the site library's runtime adapter."""
    if not isinstance(op, str):
        return False
    if op in LOOP_UNARY:
        return True
    return is_foreign_loop(op)


def is_loop_binary(op: object) -> bool:
    """Whether a `binary` op is fused by calling a library's loop: one of `LOOP_BINARY`
    (NumPy's), or another library's two-input ufunc named ``module:attr``
    (``scipy.special:xlogy``)."""
    return isinstance(op, str) and (op in LOOP_BINARY or is_foreign_loop(op))


def is_foreign_loop(op: object) -> bool:
    """Whether `op` names another library's ufunc, ``dotted.module:attr``, resolved by
    the site library's runtime adapter (SciPy's loops test and clear the FP flags to
    report through `sf_error`: `_codegen` keeps the kernel's own flags across them)."""
    if not isinstance(op, str):
        return False
    module, sep, attr = op.partition(":")
    return bool(sep) and attr.isidentifier() and all(p.isidentifier() for p in module.split("."))


PREDICATES: Final = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})
LOGICAL: Final = frozenset({"and", "or", "xor", "not"})
REDUCTIONS: Final = frozenset({"add", "mul", "max", "min", "mean"})
#: reductions a kernel computes row by row (`KernelSpec.along`), in float32 too
ROW_REDUCTIONS: Final = frozenset({"add", "max", "min"})


@dataclass(frozen=True, slots=True)
class Node:
    """One operation: ``op`` is ``add``..``minimum``, ``neg``, ``abs``,
    ``unary`` / ``binary`` (attr ``op``), ``clip`` (three operands), ``compare``
    (attr ``pred``), ``select``, ``const``
    (attr ``value``), ``cabs`` (the absolute value of a ``complex`` leaf, a float64:
    `_complex`). ``pow`` takes attr ``scalar_fast_path`` (NumPy's
    ``ndarray ** python_scalar`` shortcut: 2 -> square, 0.5 -> sqrt, -1 -> reciprocal)."""

    op: str
    args: tuple[int, ...]
    attrs: tuple[tuple[str, object], ...] = ()

    def attr(self, name: str, default: object = None) -> object:
        """The attribute `name`, or `default`."""
        return dict(self.attrs).get(name, default)


@dataclass(frozen=True, slots=True)
class KernelSpec:
    """A fused elementwise expression, optionally reduced to one float64."""

    leaves: tuple[LeafKind, ...]
    nodes: tuple[Node, ...]
    result: int
    reduce: ReduceKind | None = None
    fastmath: bool = False
    #: the float type of every array leaf, scalar and float value: ``f32`` kernels
    #: (NumPy's float32 arithmetic) take only inline ops and no reduction
    dtype: FloatKind = "f64"
    #: False: the kernel is only ever called on whole arrays (the loop proofs'), so it
    #: gets no _splat/_rows_nan entries (`_kernels.has_splat`), over half its code
    rows: bool = True
    #: a reduction's extent: "" the whole array (one number), "rows" each row along
    #: the last axis alone (an array without that axis), "rows_keep" the axis kept
    #: (`keepdims=True`); the dispatcher calls the entry once per row
    along: AlongKind = ""
    _key: list[str] = field(default_factory=list, compare=False, repr=False)

    def value_is_bool(self, vid: int) -> bool:
        """Whether value `vid` is an i1 tensor (a comparison, or logic of them)."""
        if vid < len(self.leaves):
            return False
        return self.nodes[vid - len(self.leaves)].op in ("compare", "logical")

    @property
    def result_kind(self) -> str:
        """``map`` (float64 array), ``map_bool`` (bool array) or the reduction name."""
        if self.reduce is not None:
            name = {"add": "sum", "mul": "prod"}.get(self.reduce, self.reduce)
            return f"{name}_{self.along}" if self.along else name
        return "map_bool" if self.value_is_bool(self.result) else "map"

    def loop_ops(self) -> tuple[str, ...]:
        """Names of the NumPy ufunc loops this kernel calls, in table order."""
        seen: list[str] = []
        for node in self.nodes:
            name = loop_name(node, self)
            if name is not None and name not in seen:
                seen.append(name)
        return tuple(seen)

    def to_json(self) -> str:
        """Canonical text of the spec (stable across processes)."""
        extra: dict[str, object] = {"dtype": self.dtype} if self.dtype != "f64" else {}
        if not self.rows:
            extra["rows"] = False
        if self.along:
            extra["along"] = self.along
        return json.dumps(
            {
                **extra,
                "leaves": list(self.leaves),
                "nodes": [
                    [n.op, list(n.args), sorted([k, repr(v)] for k, v in n.attrs)]
                    for n in self.nodes
                ],
                "result": self.result,
                "reduce": self.reduce,
                "fastmath": self.fastmath,
            },
            sort_keys=True,
        )

    def key(self) -> str:
        """sha256 of the canonical text (cached)."""
        if not self._key:
            self._key.append(hashlib.sha256(self.to_json().encode()).hexdigest())
        return self._key[0]


def const_value(spec: KernelSpec, vid: int) -> float | None:
    """The value of `vid` if it is a `const` node whose value the kernel holds (not a
    hoisted literal's slot, `slot_of`)."""
    if vid < len(spec.leaves):
        return None
    node = spec.nodes[vid - len(spec.leaves)]
    if node.op != "const" or slot_of(node) is not None:
        return None
    return float(node.attr("value"))  # type: ignore[arg-type]


def slot_of(node: Node) -> int | None:
    """The slot of a hoisted literal (a ``const`` node whose value the kernel reads
    from its table of literals, `_hoist`), else None."""
    slot = node.attr("slot") if node.op == "const" else None
    return slot if isinstance(slot, int) else None


def has_slots(spec: KernelSpec) -> bool:
    """Whether `spec` is a hoisted body: its entries take ``ptr %consts`` last."""
    return any(slot_of(n) is not None for n in spec.nodes)


POW_FAST: Final = {2.0: "square", 0.5: "sqrt", -1.0: "reciprocal"}


def loop_name(node: Node, spec: KernelSpec) -> str | None:
    """The NumPy loop a node needs (``sin``, ``power``), or None if lowered inline."""
    if node.op == "unary" and is_loop_unary(node.attr("op")):
        return str(node.attr("op"))
    if node.op == "binary":
        return str(node.attr("op"))
    if node.op == "clip":  # integers clip inline (`_lower_int`), floats call NumPy's loop
        return None if spec.dtype in ("i64", "i32") else "clip"
    if node.op == "pow":
        if node.attr("scalar_fast_path", False) and const_value(spec, node.args[1]) in POW_FAST:
            return None
        return "power"
    return None


class KernelBuilder:
    """Build a `KernelSpec` by hand (tests, benchmarks): ``b.leaf()``, ``b.op(...)``."""

    def __init__(self) -> None:
        self.leaves: list[LeafKind] = []
        self.nodes: list[Node] = []

    def leaf(self, kind: LeafKind = "array") -> int:
        """Append a leaf; leaves must all come before the first node."""
        assert not self.nodes, "leaves first"
        self.leaves.append(kind)
        return len(self.leaves) - 1

    def op(self, op: str, /, *args: int, **attrs: object) -> int:
        """Append a node and return its value id."""
        self.nodes.append(Node(op, tuple(args), tuple(sorted(attrs.items()))))
        return len(self.leaves) + len(self.nodes) - 1

    def const(self, value: float) -> int:
        """A float64 constant."""
        return self.op("const", value=float(value))

    def build(
        self,
        result: int,
        reduce: ReduceKind | None = None,
        fastmath: bool = False,
        dtype: FloatKind = "f64",
    ) -> KernelSpec:
        """Freeze into a `KernelSpec`."""
        return KernelSpec(tuple(self.leaves), tuple(self.nodes), result, reduce, fastmath, dtype)
