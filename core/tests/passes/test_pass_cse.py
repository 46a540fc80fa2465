"""CommonSubexpressionElimination: before/after IR text."""

from __future__ import annotations

from textwrap import dedent

from ppy_core.compiler.passes import CommonSubexpressionElimination
from ppy_core.ir import PassManager, core_registry, parse_ir, print_ir


def cse(before: str) -> str:
    op = parse_ir(dedent(before), core_registry())
    PassManager([CommonSubexpressionElimination()]).run(op)
    return print_ir(op)


def unchanged(text: str) -> None:
    assert cse(text) == dedent(text)


def test_identical_pure_ops_merge_and_uses_follow() -> None:
    assert cse("""\
        func.func @f(%a: tensor<?xf64>, %b: tensor<?xf64>) -> (tensor<?xf64>) {
          %0 = tensor.mul %a, %b : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          %1 = tensor.mul %a, %b : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          %2 = tensor.unary %0 {op = "exp"} : (tensor<?xf64>) -> tensor<?xf64>
          %3 = tensor.unary %1 {op = "exp"} : (tensor<?xf64>) -> tensor<?xf64>
          %4 = tensor.add %2, %3 : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          func.return %4 : (tensor<?xf64>) -> ()
        }
        """) == dedent("""\
        func.func @f(%a: tensor<?xf64>, %b: tensor<?xf64>) -> (tensor<?xf64>) {
          %0 = tensor.mul %a, %b : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          %1 = tensor.unary %0 {op = "exp"} : (tensor<?xf64>) -> tensor<?xf64>
          %2 = tensor.add %1, %1 : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          func.return %2 : (tensor<?xf64>) -> ()
        }
        """)


def test_equal_constants_merge() -> None:
    assert cse("""\
        func.func @f(%a: f64) -> (f64) {
          %0 = builtin.constant {value = 2.0} : () -> f64
          %1 = builtin.constant {value = 2.0} : () -> f64
          %2 = tensor.mul %a, %0 : (f64, f64) -> f64
          %3 = tensor.mul %2, %1 : (f64, f64) -> f64
          func.return %3 : (f64) -> ()
        }
        """) == dedent("""\
        func.func @f(%a: f64) -> (f64) {
          %0 = builtin.constant {value = 2.0} : () -> f64
          %1 = tensor.mul %a, %0 : (f64, f64) -> f64
          %2 = tensor.mul %1, %0 : (f64, f64) -> f64
          func.return %2 : (f64) -> ()
        }
        """)


def test_zero_and_negative_zero_do_not_merge() -> None:
    unchanged("""\
        func.func @f(%a: f64) -> (f64) {
          %0 = builtin.constant {value = 0.0} : () -> f64
          %1 = builtin.constant {value = -0.0} : () -> f64
          %2 = tensor.add %a, %0 : (f64, f64) -> f64
          %3 = tensor.add %2, %1 : (f64, f64) -> f64
          func.return %3 : (f64) -> ()
        }
        """)


def test_nans_merge_only_with_the_same_bits() -> None:
    after = cse("""\
        func.func @f(%a: f64) -> (f64) {
          %0 = builtin.constant {value = nan} : () -> f64
          %1 = builtin.constant {value = -nan} : () -> f64
          %2 = builtin.constant {value = nan(0x7ff0000000000001)} : () -> f64
          %3 = builtin.constant {value = nan} : () -> f64
          %4 = tensor.add %0, %1 : (f64, f64) -> f64
          %5 = tensor.add %2, %3 : (f64, f64) -> f64
          %6 = tensor.add %4, %5 : (f64, f64) -> f64
          func.return %6 : (f64) -> ()
        }
        """)
    assert after.count("builtin.constant") == 3
    assert "%4 = tensor.add %2, %0" in after


def test_int_float_and_bool_constants_do_not_merge() -> None:
    unchanged("""\
        func.func @f() -> (f64) {
          %0 = builtin.constant {value = 1} : () -> f64
          %1 = builtin.constant {value = 1.0} : () -> f64
          %2 = builtin.constant {value = true} : () -> f64
          %3 = builtin.constant {value = 1.0} : () -> f32
          %4 = tensor.add %0, %1 : (f64, f64) -> f64
          %5 = tensor.add %4, %2 : (f64, f64) -> f64
          %6 = tensor.cast %3 : (f32) -> f64
          %7 = tensor.add %5, %6 : (f64, f64) -> f64
          func.return %7 : (f64) -> ()
        }
        """)


def test_different_attributes_operands_or_order_do_not_merge() -> None:
    unchanged("""\
        func.func @f(%a: tensor<?xf64>, %b: tensor<?xf64>) -> (tensor<?xf64>) {
          %0 = tensor.sub %a, %b : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          %1 = tensor.sub %b, %a : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          %2 = tensor.unary %0 {op = "sin"} : (tensor<?xf64>) -> tensor<?xf64>
          %3 = tensor.unary %0 {op = "cos"} : (tensor<?xf64>) -> tensor<?xf64>
          %4 = tensor.add %1, %2 : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          %5 = tensor.add %4, %3 : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          func.return %5 : (tensor<?xf64>) -> ()
        }
        """)


def test_ops_with_effects_never_merge() -> None:
    unchanged("""\
        func.func @f(%a: tensor<?xf64>) -> (f64, f64, tensor<?xf64>, tensor<?xf64>) {
          %0 = func.call %a {callee = "random.random"} : (tensor<?xf64>) -> f64
          %1 = func.call %a {callee = "random.random"} : (tensor<?xf64>) -> f64
          %2 = linalg.norm %a {target = "numpy.linalg.norm"} : (tensor<?xf64>) -> tensor<?xf64>
          %3 = linalg.norm %a {target = "numpy.linalg.norm"} : (tensor<?xf64>) -> tensor<?xf64>
          func.return %0, %1, %2, %3 : (f64, f64, tensor<?xf64>, tensor<?xf64>) -> ()
        }
        """)


def test_kernel_bodies_are_their_own_scope() -> None:
    after = cse("""\
        func.func @f(%a: tensor<?xf64>) -> (tensor<?xf64>) {
          %0 = tensor.neg %a : (tensor<?xf64>) -> tensor<?xf64>
          %1 = tensor.kernel %a, %0 (
            {
            ^bb0(%2: tensor<?xf64>, %3: tensor<?xf64>):
              %4 = tensor.neg %2 : (tensor<?xf64>) -> tensor<?xf64>
              %5 = tensor.neg %2 : (tensor<?xf64>) -> tensor<?xf64>
              %6 = tensor.add %4, %5 : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
              %7 = tensor.add %6, %3 : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
              tensor.yield %7 : (tensor<?xf64>) -> ()
            }
          ) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          func.return %1 : (tensor<?xf64>) -> ()
        }
        """)
    assert after.count("tensor.neg") == 2  # one outside, one inside: never shared
    assert "%5 = tensor.add %4, %4" in after


def test_identical_kernels_are_not_merged() -> None:
    text = """\
        func.func @f(%a: f64) -> (f64, f64) {
          %0 = tensor.kernel %a (
            {
            ^bb0(%1: f64):
              tensor.yield %1 : (f64) -> ()
            }
          ) : (f64) -> f64
          %2 = tensor.kernel %a (
            {
            ^bb0(%3: f64):
              tensor.yield %3 : (f64) -> ()
            }
          ) : (f64) -> f64
          func.return %0, %2 : (f64, f64) -> ()
        }
        """
    unchanged(text)
