"""Unit tests: build IR in Python, assert on its structure, its text and its rewrites."""

from __future__ import annotations

import math
import textwrap

import pytest

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir import (
    F64,
    I1,
    Block,
    Dialect,
    DialectRegistry,
    OpaqueType,
    Operation,
    Region,
    Rewriter,
    TensorType,
    apply_patterns,
    core_registry,
    parse_ir,
    print_attribute,
    print_ir,
    verify,
)
from ppy_core.ir.dialects.builtin import ConstantOp, FuncOp, ModuleOp, ReturnOp
from ppy_core.ir.dialects.library import LibraryCall, library_ops
from ppy_core.ir.dialects.tensor import AddOp, CompareOp, KernelOp, MulOp, NegOp, ReduceOp, YieldOp

VEC = TensorType(F64, (None,))
REGISTRY = core_registry()


def axpy() -> tuple[ModuleOp, FuncOp]:
    module = ModuleOp.empty({"name": "m"})
    func = module.body.block.append(FuncOp.build("axpy", [F64, VEC, VEC], [VEC], ["a", "x", "y"]))
    a, x, y = func.args
    ax = func.entry.append(MulOp([a, x], [VEC]))
    ax.result.name_hint = "ax"
    out = func.entry.append(AddOp([ax.result, y], [VEC]))
    func.entry.append(ReturnOp([out.result]))
    return module, func


AXPY_TEXT = """\
builtin.module {name = "m"} {
  func.func @axpy(%a: f64, %x: tensor<?xf64>, %y: tensor<?xf64>) -> (tensor<?xf64>) {
    %ax = tensor.mul %a, %x : (f64, tensor<?xf64>) -> tensor<?xf64>
    %0 = tensor.add %ax, %y : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
    func.return %0 : (tensor<?xf64>) -> ()
  }
}
"""


def test_built_module_prints_in_its_textual_form() -> None:
    module, _ = axpy()
    verify(module)
    assert print_ir(module) == AXPY_TEXT


def test_parse_rebuilds_the_same_structure() -> None:
    module = parse_ir(AXPY_TEXT, REGISTRY)
    func = module.body.block.ops[0]
    assert isinstance(func, FuncOp)
    assert func.sym_name == "axpy"
    assert func.result_types == (VEC,)
    mul, add, ret = func.entry.ops
    assert [type(op) for op in (mul, add, ret)] == [MulOp, AddOp, ReturnOp]
    assert [mul.lhs, mul.rhs] == func.args[:2]
    assert add.lhs is mul.result
    assert ret.values == [add.result]
    hints = [v.name_hint for v in (*func.args, mul.result, add.result)]
    assert hints == ["a", "x", "y", "ax", None]


def test_accessors_read_declared_parts() -> None:
    _, func = axpy()
    mul = func.entry.ops[0]
    assert [d.name for d in MulOp.operand_defs] == ["lhs", "rhs"]
    assert mul.out is mul.result
    red = ReduceOp([func.args[1]], [F64], {"op": "add"})
    assert (red.op, red.source) == ("add", func.args[1])
    assert func.entry.ops[-1].values == [func.entry.ops[1].result]


def test_result_of_a_multi_result_op_is_an_error() -> None:
    with pytest.raises(InvalidIRError, match="has 0 results, not one"):
        _ = ReturnOp([]).result


def test_walk_is_preorder_and_parents_are_set() -> None:
    module, func = axpy()
    names = [op.name for op in module.walk()]
    assert names == ["builtin.module", "func.func", "tensor.mul", "tensor.add", "func.return"]
    assert func.parent is module.body.block
    assert func.entry.parent is func.regions[0]
    assert func.regions[0].parent is func


def test_value_names_are_unique_in_the_text() -> None:
    module = ModuleOp.empty()
    for sym in ("f", "g"):
        func = module.body.block.append(FuncOp.build(sym, [VEC], [VEC], ["x"]))
        neg = func.entry.append(NegOp([func.args[0]], [VEC]))
        neg.result.name_hint = "0"  # a number is not a usable hint
        func.entry.append(ReturnOp([neg.result]))
    text = print_ir(module)
    for line in (
        "@f(%x: tensor<?xf64>)",
        "@g(%1: tensor<?xf64>)",
        "%0 = tensor.neg %x",
        "%2 = tensor.neg %1",
    ):
        assert line in text
    assert print_ir(parse_ir(text, REGISTRY)) == text


def test_awkward_symbol_and_attribute_keys_are_quoted() -> None:
    func = FuncOp.build("my.func", [], [])
    func.entry.append(ReturnOp([]))
    func.attributes["a key"] = {"x-y": [1, 2.5, "s"]}
    text = print_ir(func)
    assert text.startswith('func.func @"my.func"() -> () {"a key" = {"x-y" = [1, 2.5, "s"]}} {')
    assert print_ir(parse_ir(text, REGISTRY)) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "unit"),
        (True, "true"),
        (False, "false"),
        (7, "7"),
        (-(2**70), str(-(2**70))),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1e16, "1e+16"),
        (5e-324, "5e-324"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (math.nan, "nan"),
        (-math.nan, "-nan"),
        ('a"\\', '"a\\"\\\\"'),
        ((), "[]"),
        ({}, "{}"),
        (I1, "i1"),
        (OpaqueType('x"y'), '!opaque<"x\\"y">'),
        (TensorType(F64, ("n", 3), "numpy"), 'tensor<"n"x3xf64, "numpy">'),
    ],
)
def test_attribute_text(value: object, text: str) -> None:
    assert print_attribute(value) == text


def test_float_subclass_prints_as_a_plain_float() -> None:
    class Float64(float):
        def __repr__(self) -> str:
            return f"Float64({float(self)})"

    assert print_attribute(Float64(1.5)) == "1.5"


def test_attribute_that_cannot_be_printed() -> None:
    with pytest.raises(TypeError):
        print_attribute(object())


def test_kernel_prints_its_region() -> None:
    body = Block([VEC, F64])
    m = body.append(CompareOp(body.args, [TensorType(I1, (None,))], {"pred": "gt"}))
    body.append(YieldOp([m.result]))
    func = FuncOp.build("f", [VEC, F64], [TensorType(I1, (None,))], ["a", "b"])
    k = func.entry.append(KernelOp(func.args, [m.result.type], regions=[Region([body])]))
    func.entry.append(ReturnOp([k.result]))
    verify(func)
    assert print_ir(func) == textwrap.dedent("""\
        func.func @f(%a: tensor<?xf64>, %b: f64) -> (tensor<?xi1>) {
          %0 = tensor.kernel %a, %b (
            {
            ^bb0(%1: tensor<?xf64>, %2: f64):
              %3 = tensor.compare %1, %2 {pred = "gt"} : (tensor<?xf64>, f64) -> tensor<?xi1>
              tensor.yield %3 : (tensor<?xi1>) -> ()
            }
          ) : (tensor<?xf64>, f64) -> tensor<?xi1>
          func.return %0 : (tensor<?xi1>) -> ()
        }
        """)


def test_dialect_rejects_a_foreign_op() -> None:
    with pytest.raises(ValueError, match="does not belong to dialect"):
        Dialect("other", [AddOp])


def test_registry_rejects_a_second_dialect_of_the_same_name() -> None:
    registry = DialectRegistry([Dialect("tensor", [AddOp])])
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(Dialect("tensor", [MulOp]))
    assert registry.lookup("tensor.add") is AddOp
    assert registry.lookup("tensor.mul") is None


def test_plugin_dialect_parses_once_registered() -> None:
    class FrobOp(Operation):
        """%r = fakeplugin.frob %x : (f64) -> f64"""

        name = "fakeplugin.frob"

    text = "fakeplugin.frob : () -> ()\n"
    with pytest.raises(InvalidIRError, match=r"unknown operation 'fakeplugin\.frob'"):
        parse_ir(text, REGISTRY)
    registry = core_registry()
    registry.register(Dialect("fakeplugin", [FrobOp]))
    assert print_ir(parse_ir(text, registry)) == text


def test_the_core_registers_only_the_shared_dialects() -> None:
    """aten, stablehlo and scipy.* are their plugins' (ppy-torch, ppy-jax, ppy-scipy)."""
    assert sorted(core_registry().dialects) == [
        "builtin",
        "columnar",
        "func",
        "linalg",
        "loops",  # typed loops: scalar Python over arrays, any array library
        "tensor",
    ]


def test_a_plugin_library_dialect_with_a_dotted_name_round_trips() -> None:
    text = textwrap.dedent("""\
        func.func @f(%x: tensor<?xf64>) -> (tensor<?xc128>) {
          %0 = vendor.fft.rfft %x {target = "vendor.fft.rfft"} : (tensor<?xf64>) -> tensor<?xc128>
          func.return %0 : (tensor<?xc128>) -> ()
        }
        """)
    registry = core_registry()
    registry.register(Dialect("vendor.fft", library_ops("vendor.fft", ("rfft",))))
    op = parse_ir(text, registry)
    verify(op)
    assert print_ir(op) == text
    (call,) = [o for o in op.walk() if o.name == "vendor.fft.rfft"]
    assert isinstance(call, LibraryCall)
    assert call.effects == frozenset({"ReadMemory"})


def test_a_dialect_name_is_registered_once() -> None:
    registry = core_registry()
    with pytest.raises(ValueError, match="linalg is registered twice"):
        registry.register(Dialect("linalg", library_ops("linalg", ("dot",))))


class MulByOneToNeg:
    """A test pattern (not a valid simplification): x * 1 -> neg(x), guard first."""

    def match_and_rewrite(self, op: Operation, rewriter: Rewriter) -> bool:
        if not isinstance(op, MulOp) or not isinstance(op.rhs.owner, ConstantOp):
            return False
        neg = rewriter.insert_before(op, NegOp([op.lhs], [op.out.type]))
        rewriter.replace_op(op, neg.results)
        return True


def test_apply_patterns_rewrites_until_nothing_matches() -> None:
    func = FuncOp.build("f", [VEC], [VEC], ["x"])
    one = func.entry.append(ConstantOp([], [F64], {"value": 1.0}))
    first = func.entry.append(MulOp([func.args[0], one.result], [VEC]))
    second = func.entry.append(MulOp([first.result, one.result], [VEC]))
    func.entry.append(ReturnOp([second.result]))
    assert apply_patterns(func, [MulByOneToNeg()])
    verify(func)
    assert [op.name for op in func.entry.ops] == [
        "builtin.constant",
        "tensor.neg",
        "tensor.neg",
        "func.return",
    ]
    assert not apply_patterns(func, [MulByOneToNeg()])


def test_erasing_a_detached_op_is_an_error() -> None:
    with pytest.raises(ValueError, match="not inside a block"):
        Rewriter(ModuleOp.empty()).erase_op(NegOp([], []))
