"""The thin IR-facing layer: a ppy_core ``func.func`` holding one ``tensor.kernel``
(or plain tensor ops) -> `KernelSpec`. Duck-typed on the core's op objects
(``.name``, ``.operands``, ``.results``, ``.attributes``, ``.regions``)."""

from __future__ import annotations

from typing import Any

from ._complex import complex_refusal
from ._errors import LlvmBackendError
from ._kernel_dtype import element_kind, int_constant, kernel_dtype
from ._mixed import INT_ATTR, int_refusal, mixed_kinds
from ._spec import (
    BINARY,
    EXACT_UNARY,
    LOGICAL,
    PREDICATES,
    REDUCTIONS,
    ROW_REDUCTIONS,
    KernelSpec,
    LeafKind,
    Node,
    is_loop_binary,
    is_loop_unary,
)

_SIMPLE = {f"tensor.{op}": op for op in (*BINARY, "neg", "abs", "select")}


def _ops(block: Any) -> list[Any]:
    return list(getattr(block, "ops", None) or getattr(block, "operations", []))


def _leaf_kind(value: Any) -> LeafKind:
    ty = value.type
    if type(ty).__name__ == "TensorType":
        if getattr(ty.element, "kind", None) == "c128":  # read through abs only: `_complex`
            return "complex"
        if element_kind(ty) is None:
            raise LlvmBackendError("E2103", f"tensor of {ty.element}")
        return "array"
    if getattr(ty, "kind", None) in ("f64", "i64"):  # a Python float or int
        return "scalar"
    raise LlvmBackendError("E2103", f"argument of type {ty}")


def _body(func: Any) -> tuple[list[Any], dict[int, int], list[Any]]:
    """(the function's parameters, {id(kernel block arg): parameter index}, ops).

    The kernel's leaves are the *function's* parameters in their order: that is the
    order the dispatcher is called with. A fusion pass may order the kernel's
    operands differently (by first use), so block arguments are mapped back through
    the kernel's operands."""
    block = func.body.blocks[0]
    params = list(block.args)
    ops = _ops(block)
    kernels = [op for op in ops if op.name == "tensor.kernel"]
    if not kernels:
        return params, {}, ops
    if len(kernels) > 1:
        raise LlvmBackendError("E2103", "more than one tensor.kernel in a site")
    position = {id(p): k for k, p in enumerate(params)}
    inner = kernels[0].regions[0].blocks[0]
    alias: dict[int, int] = {}
    for arg, operand in zip(inner.args, kernels[0].operands, strict=True):
        if id(operand) not in position:
            raise LlvmBackendError("E2103", "a kernel operand that is no site argument")
        alias[id(arg)] = position[id(operand)]
    outer_rest = [op for op in ops if op.name not in ("tensor.kernel", "func.return")]
    if outer_rest:
        raise LlvmBackendError("E2103", f"{outer_rest[0].name} outside the kernel")
    return params, alias, _ops(inner)


def spec_from_func(func: Any, fastmath: bool = False) -> KernelSpec:
    """Translate; raises `LlvmBackendError` (E2103) for anything not lowerable."""
    leaves, alias, ops = _body(func)
    ids: dict[int, int] = {id(v): k for k, v in enumerate(leaves)}
    ids.update(alias)
    kinds, in_int = mixed_kinds(leaves, tuple(_leaf_kind(v) for v in leaves), ops, ids)
    dtype = kernel_dtype(leaves, kinds, ops)
    nodes: list[Node] = []
    result: int | None = None
    reduce: str | None = None
    along = ""
    for op in ops:
        if op.name in ("tensor.yield", "func.return"):
            if op.operands:
                result = ids[id(op.operands[0])]
            continue
        if op.name == "tensor.reduce":
            kind = str(op.attributes.get("op"))
            if kind not in REDUCTIONS or reduce is not None:
                raise LlvmBackendError("E2103", f"tensor.reduce {{op = {kind}}}")
            reduce, result = kind, ids[id(op.operands[0])]
            along = _along(op)
            ids[id(op.results[0])] = result
            continue
        if reduce is not None:
            raise LlvmBackendError("E2103", f"{op.name} after a reduction")
        node = _node(op, [ids[id(v)] for v in op.operands])
        if node.op == "abs" and _reads_complex(node, kinds):
            node = Node("cabs", node.args)  # abs of a complex128 array: a float64
        if dtype in ("i64", "i32") and node.op == "const":  # the exact Python int
            node = Node("const", (), (("value", int_constant(op, dtype)),))
        if id(op) in in_int:  # computed in int64 in a float64 kernel: `_mixed`
            value = (("value", int_constant(op, "i64")),) if node.op == "const" else node.attrs
            node = Node(node.op, node.args, (*value, (INT_ATTR, True)))
        nodes.append(node)
        ids[id(op.results[0])] = len(leaves) + len(nodes) - 1
    if result is None:
        raise LlvmBackendError("E2107", "kernel yields nothing")
    if "array" not in kinds and "complex" not in kinds and "int" not in kinds:
        raise LlvmBackendError("E2103", "a kernel without array operands")
    spec = KernelSpec(kinds, tuple(nodes), result, reduce, fastmath, dtype, along=along)  # type: ignore[arg-type]
    complex_refusal(spec)
    int_refusal(spec)
    return spec


def _along(op: Any) -> str:
    """A `tensor.reduce`'s extent (`KernelSpec.along`): rows along the last axis, the
    only axis the op takes, or the whole array."""
    if "axis" not in op.attributes:
        return ""
    if str(op.attributes.get("op")) not in ROW_REDUCTIONS:
        raise LlvmBackendError("E2103", f"tensor.reduce {{op = {op.attributes.get('op')}}} of rows")
    return "rows_keep" if op.attributes.get("keepdims") else "rows"


def _reads_complex(node: Node, kinds: tuple[LeafKind, ...]) -> bool:
    return node.args[0] < len(kinds) and kinds[node.args[0]] == "complex"


def _node(op: Any, args: list[int]) -> Node:
    attrs = dict(op.attributes)
    if op.name in _SIMPLE:
        extra = (
            (("scalar_fast_path", bool(attrs.get("scalar_fast_path", False))),)
            if op.name == "tensor.pow"
            else ()
        )
        return Node(_SIMPLE[op.name], tuple(args), extra)
    if op.name == "tensor.unary" and (
        attrs.get("op") in EXACT_UNARY or is_loop_unary(attrs.get("op"))
    ):
        return Node("unary", tuple(args), (("op", str(attrs["op"])),))
    if op.name == "tensor.binary" and is_loop_binary(attrs.get("op")):
        return Node("binary", tuple(args), (("op", str(attrs["op"])),))
    if op.name == "tensor.clip":
        return Node("clip", tuple(args))
    if op.name == "tensor.logical" and attrs.get("op") in LOGICAL:
        return Node("logical", tuple(args), (("op", str(attrs["op"])),))
    if op.name == "tensor.compare" and attrs.get("pred") in PREDICATES:
        return Node("compare", tuple(args), (("pred", str(attrs["pred"])),))
    if op.name == "builtin.constant" and isinstance(attrs.get("value"), (int, float)):
        return Node("const", (), (("value", float(attrs["value"])),))
    raise LlvmBackendError("E2103", f"{op.name} {attrs}")
