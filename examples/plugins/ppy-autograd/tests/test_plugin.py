"""The plugin's answers: autograd.numpy names converge onto NumPy's tensor ops, and
nothing else does."""

from __future__ import annotations

from ppy_autograd.plugin import ARRAY, AutogradPlugin

from ppy_core.interface.plugin import CallContext, Converge, OperatorContext
from ppy_core.ir.types import F64, I1, UNKNOWN, ScalarType, TensorType

PLUGIN = AutogradPlugin()


def _call(name: str, *args: object, **kwargs: object) -> CallContext:
    return CallContext(f"autograd.numpy.{name}", tuple(args), dict(kwargs))  # type: ignore[arg-type]


def test_unary_binary_and_compare_calls_converge() -> None:
    exp = PLUGIN.tensor_operation(_call("exp", ARRAY))
    assert exp is not None
    assert exp.op == "tensor.unary"
    assert exp.attributes == {"op": "exp"}
    assert PLUGIN.tensor_operation(_call("fabs", ARRAY)).op == "tensor.abs"  # type: ignore[union-attr]
    assert PLUGIN.tensor_operation(_call("maximum", ARRAY, F64)).op == "tensor.maximum"  # type: ignore[union-attr]
    less = PLUGIN.tensor_operation(_call("less", UNKNOWN, ARRAY))
    assert less is not None
    assert less.result == TensorType(I1, None, "numpy")
    answer = PLUGIN.call(_call("sin", ARRAY))
    assert answer is not None
    assert answer.result == ARRAY
    assert answer.lowering is not None


def test_what_stays_python() -> None:
    f32 = TensorType(ScalarType("f32"), None, "numpy")
    torch = TensorType(F64, None, "torch")
    assert PLUGIN.tensor_operation(_call("exp", f32)) is None  # float32: NumPy's own loops
    assert PLUGIN.tensor_operation(_call("exp", torch)) is None  # not NumPy's array
    assert PLUGIN.tensor_operation(_call("exp", F64)) is None  # a number: a scalar, no kernel
    assert PLUGIN.tensor_operation(_call("exp", ARRAY, out=ARRAY)) is None
    assert PLUGIN.call(_call("exp", ARRAY, out=ARRAY)) is None
    assert PLUGIN.tensor_operation(_call("einsum", ARRAY)) is None
    assert PLUGIN.tensor_operation(CallContext("numpy.exp", (ARRAY,), {})) is None


def test_operators() -> None:
    add = PLUGIN.operator(OperatorContext("Add", (ARRAY, F64)))
    assert isinstance(add, Converge)  # (the hook may also answer a bare Type)
    assert add.op == "tensor.add"
    assert PLUGIN.operator(OperatorContext("Add", (F64, F64))) is None
    assert PLUGIN.operator(OperatorContext("Pow", (ARRAY, F64))) is None  # NumPy picks by value
