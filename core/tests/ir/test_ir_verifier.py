"""The verifier rejects each kind of malformed IR with InvalidIRError."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir import (
    F64,
    I1,
    I64,
    Block,
    ColumnType,
    Operation,
    Region,
    TensorType,
    Type,
    Value,
    attribute,
    verify,
)
from ppy_core.ir.dialects.builtin import ConstantOp, FuncOp, ModuleOp, ReturnOp
from ppy_core.ir.dialects.tensor import (
    AddOp,
    CompareOp,
    KernelOp,
    NegOp,
    ReduceOp,
    SelectOp,
    UnaryOp,
    YieldOp,
)

VEC = TensorType(F64, (None,))
MAT = TensorType(F64, (None, None))
MASK = TensorType(I1, (None,))


def module_with(
    build: Callable[[FuncOp], Value], args: Sequence[Type] = (VEC, VEC, F64)
) -> ModuleOp:
    """A module holding `f(args...)` whose body `build` fills; it returns what build returns."""
    func = FuncOp.build("f", list(args), [], ["a", "b", "x"][: len(args)])
    out = build(func)
    func.entry.append(ReturnOp([out]))
    func.attributes["result_types"] = (out.type,)
    module = ModuleOp.empty()
    module.body.block.append(func)
    return module


def emit(func: FuncOp, op: Operation) -> Value:
    return func.entry.append(op).result


def rejects(module: Operation, fragment: str) -> None:
    with pytest.raises(InvalidIRError) as info:
        verify(module)
    assert fragment in info.value.diagnostic.message
    assert info.value.code == "E9001"


def test_well_formed_module_verifies() -> None:
    verify(module_with(lambda f: emit(f, AddOp([f.args[0], f.args[2]], [VEC]))))


def test_wrong_operand_count() -> None:
    rejects(module_with(lambda f: emit(f, AddOp([f.args[0]], [VEC]))), "expects 2 operands, has 1")


def test_wrong_result_count() -> None:
    module = module_with(lambda f: emit(f, AddOp([f.args[0], f.args[1]], [VEC])))
    func = module.body.block.ops[0]
    func.entry.insert(0, AddOp([func.args[0], func.args[1]], [VEC, VEC]))
    rejects(module, "expects 1 results, has 2")


def test_wrong_operand_type() -> None:
    rejects(
        module_with(lambda f: emit(f, NegOp([f.args[0]], [VEC])), [ColumnType(F64)]),
        "operand 'source' must be TensorType or ScalarType, not column<f64>",
    )


def test_reduce_of_a_scalar() -> None:
    rejects(
        module_with(lambda f: emit(f, ReduceOp([f.args[2]], [F64], {"op": "add"}))),
        "operand 'source' must be TensorType",
    )


def test_missing_attribute() -> None:
    rejects(module_with(lambda f: emit(f, UnaryOp([f.args[0]], [VEC]))), "missing attribute 'op'")


def test_attribute_of_the_wrong_kind() -> None:
    rejects(
        module_with(lambda f: emit(f, UnaryOp([f.args[0]], [VEC], {"op": 3}))),
        "attribute 'op' must be str, not 3",
    )


def test_bool_is_not_an_int_attribute() -> None:
    class Shift(Operation):
        name = "test.shift"
        amount = attribute(int)

    with pytest.raises(InvalidIRError, match="must be int, not bool"):
        Shift(attributes={"amount": True}).verify()


@pytest.mark.parametrize(
    ("op", "attrs", "fragment"),
    [
        (UnaryOp, {"op": "sine"}, "attribute 'op' = 'sine' is not one of"),
        (ReduceOp, {"op": "prod"}, "attribute 'op' = 'prod' is not one of"),
    ],
)
def test_one_of_violation(op: type[Operation], attrs: dict, fragment: str) -> None:
    out = F64 if op is ReduceOp else VEC
    rejects(module_with(lambda f: emit(f, op([f.args[0]], [out], attrs))), fragment)


def test_compare_predicate_one_of() -> None:
    rejects(
        module_with(lambda f: emit(f, CompareOp([f.args[0], f.args[1]], [MASK], {"pred": "gtt"}))),
        "'gtt' is not one of",
    )


def test_terminator_not_last() -> None:
    def build(f: FuncOp) -> Value:
        f.entry.append(ReturnOp([f.args[0]]))
        return f.args[0]

    rejects(module_with(build), "a terminator must end its block")


def test_function_without_return() -> None:
    module = module_with(lambda f: f.args[0])
    module.body.block.ops[0].entry.ops.pop()
    rejects(module, "a function must end with func.return")


def test_function_return_mismatch() -> None:
    module = module_with(lambda f: f.args[0])
    module.body.block.ops[0].attributes["result_types"] = (F64,)
    rejects(module, "returns ['tensor<?xf64>'], declared ['f64']")


def test_function_result_types_must_be_types() -> None:
    module = module_with(lambda f: f.args[0])
    module.body.block.ops[0].attributes["result_types"] = ("f64",)
    rejects(module, "result type 'f64' is not a type")


def test_use_before_def() -> None:
    def build(f: FuncOp) -> Value:
        late = AddOp([f.args[0], f.args[1]], [VEC])
        early = emit(f, NegOp([late.result], [VEC]))
        f.entry.append(late)
        return early

    rejects(module_with(build), "uses a value before it is defined, or from outside")


def test_value_from_another_function() -> None:
    other = FuncOp.build("g", [VEC], [VEC], ["stranger"])
    other.entry.append(ReturnOp([other.args[0]]))
    module = module_with(lambda f: emit(f, NegOp([other.args[0]], [VEC])))
    module.body.block.append(other)
    rejects(module, "uses stranger before it is defined, or from outside")


def test_value_from_inside_a_region_used_outside() -> None:
    def build(f: FuncOp) -> Value:
        body = Block([VEC])
        inner = body.append(NegOp([body.args[0]], [VEC]))
        body.append(YieldOp([inner.result]))
        emit(f, KernelOp([f.args[0]], [VEC], regions=[Region([body])]))
        return emit(f, AddOp([inner.result, f.args[1]], [VEC]))

    rejects(module_with(build), "before it is defined, or from outside")


def kernel(
    f: FuncOp,
    arg_types: list,
    yielded: Callable[[Block], Value] | None = None,
    out: TensorType = VEC,
) -> Value:
    body = Block(arg_types)
    value = yielded(body) if yielded else body.args[0]
    body.append(YieldOp([value]))
    return emit(f, KernelOp([f.args[0]], [out], regions=[Region([body])]))


def test_kernel_region_argument_mismatch() -> None:
    rejects(
        module_with(lambda f: kernel(f, [F64])), "region arguments must match the kernel's inputs"
    )
    rejects(
        module_with(lambda f: kernel(f, [VEC, VEC])),
        "region arguments must match the kernel's inputs",
    )


def test_kernel_yield_type_mismatch() -> None:
    rejects(
        module_with(lambda f: kernel(f, [VEC], out=MAT)),
        "the body must yield one value of the kernel's result type",
    )


def test_kernel_body_without_yield() -> None:
    def build(f: FuncOp) -> Value:
        body = Block([VEC])
        body.append(NegOp([body.args[0]], [VEC]))
        return emit(f, KernelOp([f.args[0]], [VEC], regions=[Region([body])]))

    rejects(module_with(build), "the body must end with tensor.yield")


def test_kernel_body_is_verified() -> None:
    rejects(
        module_with(
            lambda f: kernel(
                f, [VEC], lambda b: b.append(UnaryOp([b.args[0]], [VEC], {"op": "nope"})).result
            )
        ),
        "'nope' is not one of",
    )


def test_region_without_block() -> None:
    rejects(
        module_with(lambda f: emit(f, KernelOp([f.args[0]], [VEC], regions=[Region()]))),
        "tensor.kernel: a region has no block",
    )


def test_wrong_region_count() -> None:
    rejects(
        module_with(lambda f: emit(f, KernelOp([f.args[0]], [VEC]))), "expects 1 regions, has 0"
    )


def test_rank_disagreement() -> None:
    rejects(
        module_with(lambda f: emit(f, AddOp([f.args[0], f.args[1]], [VEC])), [VEC, MAT, F64]),
        "operands disagree in rank: [1, 2]",
    )
    rejects(
        module_with(lambda f: emit(f, AddOp([f.args[0], f.args[1]], [MAT]))),
        "operands disagree in rank: [1, 2]",
    )


def test_tensor_operand_needs_tensor_result() -> None:
    rejects(
        module_with(lambda f: emit(f, AddOp([f.args[0], f.args[2]], [F64]))),
        "result must be a tensor when an operand is, not f64",
    )
    rejects(
        module_with(lambda f: emit(f, NegOp([f.args[2]], [VEC]))),
        "result must be a scalar when every operand is",
    )


def test_compare_must_yield_i1() -> None:
    rejects(
        module_with(lambda f: emit(f, CompareOp([f.args[0], f.args[1]], [VEC], {"pred": "lt"}))),
        "a comparison yields i1 elements, not f64",
    )


def test_select_condition_must_be_i1() -> None:
    rejects(
        module_with(lambda f: emit(f, SelectOp([f.args[0], f.args[0], f.args[1]], [VEC]))),
        "the condition must have i1 elements, not f64",
    )
    verify(module_with(lambda f: emit(f, SelectOp(list(f.args), [VEC])), [MASK, VEC, VEC]))


def test_float_constant_with_integer_type() -> None:
    rejects(
        module_with(lambda f: emit(f, ConstantOp([], [I64], {"value": 1.5}))),
        "a float constant cannot have type i64",
    )
    rejects(
        module_with(lambda f: emit(f, ConstantOp([], [F64], {"value": "1"}))),
        "attribute 'value' must be int or float or bool",
    )
