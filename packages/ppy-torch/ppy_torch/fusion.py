"""Which torch arithmetic converges onto the tensor dialect (fused float64 sites).

Expression trees of `+ - * /`, unary `-`, and `torch.add/sub/mul/div/neg/abs` (as
functions or `Tensor` methods) over tensors typed `torch.Tensor` become
`tensor.add ... tensor.abs` with result `tensor<*xf64, "torch">`; the `llvm`
backend compiles the fused tree, and `ppy_torch.fused` guards it at run time
(exact CPU float64 contiguous tensors of one shape, outside autograd).

Only what torch computes with one IEEE operation per element converges, each
equality shown by the tests (`tests/test_fused.py`):

* `t + s`, `s + t`, `t - s`, `s - t`, `t * s`, `s * t`, `t / s`, and the same of
  two tensors: one rounding each, as the kernel computes them;
* `s / t` does not: torch computes it as `t.reciprocal() * s` (two roundings);
* `**` does not: torch's pow of a general exponent is not NumPy's loop, which is
  the one the kernel calls;
* reductions (`sum`, `prod`, `mean`, `max`, `min`) do not: torch sums in its own
  cascade order, not NumPy's pairwise order that the kernel reproduces.

`torch.add(x, y)` needs a tensor first argument (torch raises for a number there),
so a number in that place leaves the call Python. Calls with keywords (`alpha=`,
`rounding_mode=`, `out=`) are never asked: the core only offers keyword-free calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ppy_core.interface.plugin import NOT_CONSTANT, CallContext, Converge, OperatorContext
from ppy_core.ir.types import F64, I64, UNKNOWN, ScalarType, TensorType, Type

LIBRARY: Final = "torch"
TENSOR: Final = TensorType(F64, None, LIBRARY)

#: Python operator (ast class name) -> tensor-dialect op
BINARY_OPERATORS: Final[Mapping[str, str]] = MappingProxyType(
    {"Add": "tensor.add", "Sub": "tensor.sub", "Mult": "tensor.mul", "Div": "tensor.div"}
)
#: operators whose number-on-the-left form torch computes in one rounding (`__radd__`,
#: `__rsub__` = `sub(s, t)`, `__rmul__`); `s / t` is `t.reciprocal() * s` in torch
NUMBER_LEFT_OK: Final = frozenset({"Add", "Sub", "Mult"})

_BINARY: Final = {
    "add": "tensor.add",
    "sub": "tensor.sub",
    "mul": "tensor.mul",
    "div": "tensor.div",
    "subtract": "tensor.sub",
    "multiply": "tensor.mul",
    "divide": "tensor.div",
    "true_divide": "tensor.div",
}
_UNARY: Final = {
    "neg": "tensor.neg",
    "negative": "tensor.neg",
    "abs": "tensor.abs",
    "absolute": "tensor.abs",
}


def _table() -> dict[str, tuple[str, int]]:
    """Qualified callee -> (op, arity), for `torch.<f>` and `torch.Tensor.<f>`."""
    table: dict[str, tuple[str, int]] = {}
    for prefix in ("torch.", "torch.Tensor."):
        table.update({prefix + name: (op, 2) for name, op in _BINARY.items()})
        table.update({prefix + name: (op, 1) for name, op in _UNARY.items()})
    return table


#: every call that converges, with its arity (a method's receiver counts)
CALLS: Final[Mapping[str, tuple[str, int]]] = MappingProxyType(_table())


def is_tensor(t: Type) -> bool:
    """A torch tensor (of any dtype: the run-time guard checks float64)."""
    return isinstance(t, TensorType) and t.library == LIBRARY


def _is_number(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.kind in ("f64", "i64")


def _tensor_like(t: Type, constant: object) -> bool:
    """An operand that can stand where torch wants a tensor: a torch tensor, or a
    non-literal of unknown type (the guard then requires a tensor)."""
    return is_tensor(t) or (t is UNKNOWN and constant is NOT_CONSTANT)


def _operand_ok(t: Type, constant: object) -> bool:
    """Tensors of torch, Python numbers, literals, or unknown (the guard decides)."""
    return is_tensor(t) or _is_number(t) or t is UNKNOWN or isinstance(constant, int | float)


def _result(operands: tuple[Type, ...]) -> TensorType:
    """`tensor<*xf64, "torch">`, with the shape the tensor operands agree on, if known."""
    shapes = {t.shape for t in operands if isinstance(t, TensorType) and t.shape is not None}
    shape = shapes.pop() if len(shapes) == 1 else None
    return TensorType(F64, shape, LIBRARY)


def _typed(types: tuple[Type, ...], constants: tuple[object, ...]) -> tuple[Type, ...]:
    """Operand types, with literals the typer left unknown (`-3`) typed by value."""
    out = list(types)
    for i, value in enumerate(constants[: len(out)]):
        if out[i] is UNKNOWN and isinstance(value, int | float) and not isinstance(value, bool):
            out[i] = F64 if isinstance(value, float) else I64
    return tuple(out)


def _bool_literal(constants: tuple[object, ...]) -> bool:
    return any(isinstance(c, bool) for c in constants)


def converge_operator(ctx: OperatorContext) -> Converge | Type | None:
    """The `operator` hook's answer for torch tensors (None: not ours)."""
    operands = _typed(ctx.operands, ctx.constants)
    if not any(map(is_tensor, operands)):
        return None  # Python numbers: the core types them (its `arithmetic`)
    constants = tuple(ctx.constants) + (NOT_CONSTANT,) * (len(operands) - len(ctx.constants))
    if _bool_literal(constants) or not all(map(_operand_ok, operands, constants)):
        return None
    if ctx.op == "USub":
        return Converge("tensor.neg", _result(operands))
    op = BINARY_OPERATORS.get(ctx.op)
    if op is None:
        return None  # `**`, `//`, `%`, `@`, comparisons: torch's own
    if not _tensor_like(operands[0], constants[0]) and ctx.op not in NUMBER_LEFT_OK:
        return None  # `s / t` is `t.reciprocal() * s` in torch
    return Converge(op, _result(operands))


def converge_call(ctx: CallContext) -> Converge | None:
    """The `tensor_operation` hook's answer for `torch.add(...)`, `t.neg()`, ..."""
    found = CALLS.get(ctx.callee)
    if found is None or ctx.kwargs or ctx.kw_constants:
        return None
    op, arity = found
    operands = _typed(ctx.args, ctx.constants)
    constants = tuple(ctx.constants) + (NOT_CONSTANT,) * (len(operands) - len(ctx.constants))
    if len(operands) != arity or _bool_literal(constants):
        return None
    if not _tensor_like(operands[0], constants[0]):
        return None  # torch.add(2.0, t) raises in torch: leave it to torch
    if not all(map(_operand_ok, operands, constants)):
        return None
    return Converge(op, _result(operands))


__all__ = [
    "LIBRARY",
    "TENSOR",
    "CALLS",
    "BINARY_OPERATORS",
    "NUMBER_LEFT_OK",
    "converge_operator",
    "converge_call",
    "is_tensor",
]
