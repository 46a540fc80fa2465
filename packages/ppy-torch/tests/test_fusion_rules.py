"""Unit tests of what the torch plugin converges onto the tensor dialect (no compile)."""

from __future__ import annotations

import sys

import pytest

from ppy_core.interface.plugin import NOT_CONSTANT, CallContext, Converge, OperatorContext
from ppy_core.ir.types import F64, I1, I64, UNKNOWN, TensorType
from ppy_torch.fusion import TENSOR
from ppy_torch.plugin import TorchPlugin

T = TENSOR
NUMPY = TensorType(F64, None, "numpy")
N = NOT_CONSTANT


def op(name: str, *operands: object, constants: tuple[object, ...] = ()) -> object:
    ctx = OperatorContext(name, tuple(operands), constants or (N,) * len(operands))
    return TorchPlugin().operator(ctx)  # type: ignore[arg-type]


def call(
    callee: str,
    *args: object,
    constants: tuple[object, ...] = (),
    kwargs: dict[str, object] | None = None,
) -> Converge | None:
    ctx = CallContext(
        callee,
        tuple(args),
        kwargs or {},  # type: ignore[arg-type]
        constants or (N,) * len(args),
    )
    return TorchPlugin().tensor_operation(ctx)


@pytest.mark.parametrize(
    ("name", "ir"),
    [("Add", "tensor.add"), ("Sub", "tensor.sub"), ("Mult", "tensor.mul"), ("Div", "tensor.div")],
)
def test_tensor_operators_converge(name: str, ir: str) -> None:
    answer = op(name, T, T)
    assert isinstance(answer, Converge)
    assert answer.op == ir
    assert answer.result == T
    assert isinstance(op(name, T, F64), Converge)
    assert isinstance(op(name, T, UNKNOWN), Converge)


def test_number_on_the_left() -> None:
    assert isinstance(op("Sub", F64, T), Converge)  # __rsub__: sub(s, t), one rounding
    assert isinstance(op("Mult", I64, T), Converge)
    assert op("Div", F64, T) is None  # __rtruediv__: t.reciprocal() * s
    assert op("Div", UNKNOWN, T, constants=(2.0, N)) is None  # a literal on the left


def test_what_stays_torchs() -> None:
    assert op("Pow", T, F64) is None
    assert op("FloorDiv", T, T) is None
    assert op("MatMult", T, T) is None
    assert op("Lt", T, T) is None
    assert op("Add", T, NUMPY) is None
    assert op("Add", T, I1) is None  # a bool operand promotes differently
    assert op("Mult", T, UNKNOWN, constants=(N, True)) is None


def test_neg_and_python_numbers() -> None:
    answer = op("USub", T)
    assert isinstance(answer, Converge)
    assert answer.op == "tensor.neg"
    # Python numbers are the core's (`frontend/arithmetic.py`): the plugin declines them
    assert op("USub", F64) is None
    assert op("Mult", I64, I64) is None
    assert op("Div", I64, I64) is None
    assert op("Add", NUMPY, NUMPY) is None


def test_calls_converge() -> None:
    for callee, ir in [
        ("torch.add", "tensor.add"),
        ("torch.Tensor.mul", "tensor.mul"),
        ("torch.true_divide", "tensor.div"),
        ("torch.subtract", "tensor.sub"),
    ]:
        answer = call(callee, T, F64)
        assert answer is not None
        assert answer.op == ir
    for callee, ir in [
        ("torch.abs", "tensor.abs"),
        ("torch.Tensor.neg", "tensor.neg"),
        ("torch.negative", "tensor.neg"),
    ]:
        answer = call(callee, T)
        assert answer is not None
        assert answer.op == ir


def test_calls_that_stay_torchs() -> None:
    assert call("torch.add", F64, T) is None  # torch raises for a number first
    assert call("torch.add", UNKNOWN, T, constants=(2.0, N)) is None
    assert call("torch.add", T, T, kwargs={"alpha": I64}) is None
    assert call("torch.add", T) is None  # wrong arity
    assert call("torch.pow", T, F64) is None
    assert call("torch.sum", T) is None
    assert call("torch.mean", T) is None
    assert call("torch.matmul", T, T) is None
    assert call("numpy.add", T, T) is None


def test_result_shape_when_known() -> None:
    shaped = TensorType(F64, (4, 5), "torch")
    answer = op("Add", shaped, shaped)
    assert isinstance(answer, Converge)
    assert answer.result.shape == (4, 5)
    answer = op("Add", shaped, TensorType(F64, (5,), "torch"))
    assert isinstance(answer, Converge)
    assert answer.result.shape is None


def test_importing_the_fusion_rules_imports_no_torch() -> None:
    import subprocess

    code = "import ppy_torch.fusion, ppy_torch.fused, sys; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
