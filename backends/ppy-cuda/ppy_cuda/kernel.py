"""The cuda backend's kernel description and the walk from a site's IR to it.

A `CudaKernel` is an SSA DAG of one dtype (float32 or float64, the tensors'):
value ids ``0..len(leaves)-1`` are the leaves in call order (``a`` a tensor,
``s`` a Python float), each `Node` appends one value. Its own walk over the IR
(not ppy-llvm's, which is NumPy's float64 world) keeps this backend free of
another backend's kernel layer. The ops are torch's CUDA semantics, decided
here: ``div`` by a scalar is torch's ``a * (1/s)``, ``add``/``sub`` with an
``alpha`` other than ±1 are torch's fused ``a + alpha*b`` (one FMA).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Final, Literal

from ppy_cuda._errors import cuda_error

Dtype = Literal["f32", "f64"]
BINARY: Final = frozenset({"add", "sub", "mul", "div", "maximum", "minimum"})
EXACT_UNARY: Final = frozenset(
    {"neg", "abs", "sqrt", "floor", "ceil", "trunc", "square", "reciprocal"}
)
#: torch's CUDA kernels call libdevice's `__nv_<name>` (`__nv_<name>f` for float32)
LIBDEVICE_UNARY: Final = {
    "exp": "exp",
    "log": "log",
    "log1p": "log1p",
    "expm1": "expm1",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "erf": "erf",
}
#: transcendentals whose kernel bits a GPU run proved equal to torch's (all 2^32
#: float32 inputs, sampled float64: `gpu_check.sh`). Empty until that proof is run
#: and recorded here: an unproven function keeps its site torch (E2033).
PROVEN: Final[frozenset[str]] = frozenset()
#: torch ops that nvcc contracts inside their own kernel, written the same way here
#: (`addcmul`: ``fma(value, b*c, a)``; `lerp`: ``fma(w, e-s, s)`` for ``|w| < 0.5``,
#: else ``fma(-(e-s), 1-w, e)``), read from torch's source: not yet checked on a GPU,
#: so they count as unproven (E2033) until `test_gpu.py` passes and they join PROVEN.
FUSED_OPS: Final = frozenset({"addcmul", "lerp"})
PREDICATES: Final = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})


@dataclass(frozen=True, slots=True)
class Node:
    """``op`` in BINARY, ``unary`` (attr ``fn``), ``compare`` (attr ``pred``),
    ``select``, ``const`` (attr ``value``); ``add``/``sub`` may carry ``alpha``."""

    op: str
    args: tuple[int, ...]
    attrs: tuple[tuple[str, object], ...] = ()

    def attr(self, name: str, default: object = None) -> object:
        """The attribute `name`, or `default`."""
        return dict(self.attrs).get(name, default)


@dataclass(frozen=True, slots=True)
class CudaKernel:
    """One fused elementwise kernel over same-shaped contiguous tensors."""

    dtype: Dtype
    leaves: tuple[str, ...]  # "a" tensor, "s" Python float
    nodes: tuple[Node, ...]
    result: int

    def is_bool(self, vid: int) -> bool:
        """Whether value `vid` is a comparison (a bool tensor)."""
        return vid >= len(self.leaves) and self.nodes[vid - len(self.leaves)].op == "compare"

    def is_scalar(self, vid: int) -> bool:
        """Whether value `vid` is the same for every element (no tensor reaches it)."""
        if vid < len(self.leaves):
            return self.leaves[vid] == "s"
        return all(self.is_scalar(a) for a in self.nodes[vid - len(self.leaves)].args)

    def functions(self) -> tuple[str, ...]:
        """The libdevice functions it calls (torch names), in first-use order."""
        seen: list[str] = []
        for node in self.nodes:
            fn = str(node.attr("fn", ""))
            if node.op == "unary" and fn in LIBDEVICE_UNARY and fn not in seen:
                seen.append(fn)
        return tuple(seen)

    def key(self) -> str:
        """sha256 of the canonical text: the kernel's name and cache key."""
        text = json.dumps(
            [
                self.dtype,
                self.leaves,
                [[n.op, n.args, sorted(map(repr, n.attrs))] for n in self.nodes],
                self.result,
            ]
        )
        return hashlib.sha256(text.encode()).hexdigest()


class KernelBuilder:
    """Build a `CudaKernel` by hand (tests, the GPU proofs): ``b.leaf()``, ``b.op()``."""

    def __init__(self, dtype: Dtype) -> None:
        self.dtype: Dtype = dtype
        self.leaves: list[str] = []
        self.nodes: list[Node] = []

    def leaf(self, kind: str = "a") -> int:
        """Append a leaf (all leaves come before the first node)."""
        if self.nodes or kind not in ("a", "s"):
            raise ValueError("leaves come first, each 'a' (tensor) or 's' (scalar)")
        self.leaves.append(kind)
        return len(self.leaves) - 1

    def op(self, op: str, /, *args: int, **attrs: object) -> int:
        """Append a node; its value id."""
        self.nodes.append(Node(op, tuple(args), tuple(sorted(attrs.items()))))
        return len(self.leaves) + len(self.nodes) - 1

    def build(self, result: int) -> CudaKernel:
        """Freeze (checked: `check` raises E2030 for what cannot lower)."""
        kernel = CudaKernel(self.dtype, tuple(self.leaves), tuple(self.nodes), result)
        check(kernel, proven_only=False)
        return kernel


def check(kernel: CudaKernel, *, proven_only: bool = True) -> None:
    """Raise E2030 for an op this backend does not lower, E2033 for a transcendental
    not proven on a GPU (when `proven_only`)."""
    if "a" not in kernel.leaves:
        raise cuda_error("E2030", "a kernel without tensor operands")
    if kernel.dtype not in ("f32", "f64"):
        raise cuda_error("E2030", f"dtype {kernel.dtype}")
    for node in kernel.nodes:
        fn = node.attr("fn")
        ok = (
            node.op in BINARY
            or node.op in ("select", "const")
            or node.op in FUSED_OPS
            or (node.op == "compare" and node.attr("pred") in PREDICATES)
            or (node.op == "unary" and (fn in EXACT_UNARY or fn in LIBDEVICE_UNARY))
        )
        if not ok:
            raise cuda_error("E2030", f"{node.op} {dict(node.attrs)}")
        name = fn if node.op == "unary" and fn in LIBDEVICE_UNARY else node.op
        if proven_only and name in (*LIBDEVICE_UNARY, *FUSED_OPS) and name not in PROVEN:
            raise cuda_error(
                "E2033", f"torch.{name} on CUDA is not yet proven bit-equal (gpu_check.sh)"
            )


_DTYPES: Final = {"f32": "f32", "f64": "f64", "float32": "f32", "float64": "f64"}
_SIMPLE: Final = {f"tensor.{op}": op for op in (*BINARY, "select")}


def _dtype(value: Any) -> Dtype | None:
    ty = value.type
    if type(ty).__name__ != "TensorType":
        return None
    name = str(getattr(ty, "element", "")).lower()
    found = _DTYPES.get(name) or next((v for k, v in _DTYPES.items() if k in name), None)
    if found is None:
        raise cuda_error("E2030", f"a tensor of {ty.element} (float32/float64 only)")
    return found  # type: ignore[return-value]


def kernel_from_func(func: Any) -> CudaKernel:
    """A site's `func.func` (one `tensor.kernel`, or bare tensor ops) -> `CudaKernel`.
    Duck-typed on the core's ops; raises E2030/E2033 for what stays torch."""
    if getattr(func, "name", None) != "func.func":
        raise cuda_error("E2030", f"a {type(func).__name__}, not a func.func")
    block = func.body.blocks[0]
    params = list(block.args)
    ops = list(getattr(block, "ops", None) or getattr(block, "operations", []))
    ids: dict[int, int] = {id(p): k for k, p in enumerate(params)}
    kernels = [op for op in ops if op.name == "tensor.kernel"]
    if len(kernels) > 1:
        raise cuda_error("E2030", "more than one tensor.kernel in a site")
    if kernels:
        if any(op.name not in ("tensor.kernel", "func.return") for op in ops):
            raise cuda_error("E2030", "an op outside the site's tensor.kernel")
        inner = kernels[0].regions[0].blocks[0]
        for arg, operand in zip(inner.args, kernels[0].operands, strict=True):
            if id(operand) not in ids:
                raise cuda_error("E2030", "a kernel operand that is no site argument")
            ids[id(arg)] = ids[id(operand)]
        ops = list(getattr(inner, "ops", None) or getattr(inner, "operations", []))
    dtypes = {d for d in map(_dtype, params) if d is not None}
    if len(dtypes) != 1:
        raise cuda_error("E2030", f"tensors of {sorted(dtypes) or 'no'} dtype (one float dtype)")
    leaves = tuple("a" if _dtype(p) else "s" for p in params)
    nodes: list[Node] = []
    result: int | None = None
    for op in ops:
        if op.name in ("tensor.yield", "func.return"):
            result = ids[id(op.operands[0])] if op.operands else result
            continue
        nodes.append(_node(op, [ids[id(v)] for v in op.operands]))
        ids[id(op.results[0])] = len(leaves) + len(nodes) - 1
    if result is None:
        raise cuda_error("E2030", "a kernel that yields nothing")
    kernel = CudaKernel(dtypes.pop(), leaves, tuple(nodes), result)
    check(kernel)
    return kernel


def _node(op: Any, args: list[int]) -> Node:
    attrs = dict(op.attributes)
    if op.name in _SIMPLE:
        alpha = attrs.get("alpha")
        extra = (("alpha", float(alpha)),) if isinstance(alpha, (int, float)) else ()
        return Node(_SIMPLE[op.name], tuple(args), extra)
    if op.name in ("tensor.neg", "tensor.abs"):
        return Node("unary", tuple(args), (("fn", op.name.split(".")[1]),))
    if op.name == "tensor.unary":
        return Node("unary", tuple(args), (("fn", str(attrs.get("op"))),))
    if op.name == "tensor.compare":
        return Node("compare", tuple(args), (("pred", str(attrs.get("pred"))),))
    if op.name == "builtin.constant" and isinstance(attrs.get("value"), (int, float)):
        return Node("const", (), (("value", float(attrs["value"])),))
    raise cuda_error("E2030", f"{op.name} {attrs}")


__all__ = [
    "FUSED_OPS",
    "LIBDEVICE_UNARY",
    "PROVEN",
    "CudaKernel",
    "KernelBuilder",
    "Node",
    "check",
    "kernel_from_func",
]
