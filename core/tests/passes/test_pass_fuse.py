"""FuseElementwise: before/after IR text."""

from __future__ import annotations

from textwrap import dedent

from demo_dialect import demo_registry

from ppy_core.compiler.passes import FuseElementwise
from ppy_core.ir import (
    PassManager,
    parse_ir,
    print_ir,
)


def fuse(before: str) -> str:
    op = parse_ir(dedent(before), demo_registry())
    PassManager([FuseElementwise()]).run(op)
    after = print_ir(op)
    PassManager([FuseElementwise()]).run(op)
    assert print_ir(op) == after, "fusing twice must change nothing"
    return after


def unchanged(text: str) -> None:
    assert fuse(text) == dedent(text)


def test_whole_expression_becomes_one_kernel_with_constants_copied_in() -> None:
    assert fuse("""\
        func.func @site_0(%a: tensor<?xf64>, %b: tensor<?xf64>, %x: f64) -> (tensor<?xf64>) {
          %two = builtin.constant {value = 2.0} : () -> f64
          %0 = tensor.mul %a, %two : (tensor<?xf64>, f64) -> tensor<?xf64>
          %1 = tensor.unary %b {op = "sin"} : (tensor<?xf64>) -> tensor<?xf64>
          %2 = tensor.add %0, %1 : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          %m = tensor.compare %2, %x {pred = "gt"} : (tensor<?xf64>, f64) -> tensor<?xi1>
          %r = tensor.select %m, %2, %x : (tensor<?xi1>, tensor<?xf64>, f64) -> tensor<?xf64>
          func.return %r : (tensor<?xf64>) -> ()
        }
        """) == dedent("""\
        func.func @site_0(%a: tensor<?xf64>, %b: tensor<?xf64>, %x: f64) -> (tensor<?xf64>) {
          %r = tensor.kernel %a, %b, %x (
            {
            ^bb0(%0: tensor<?xf64>, %1: tensor<?xf64>, %2: f64):
              %two = builtin.constant {value = 2.0} : () -> f64
              %3 = tensor.mul %0, %two : (tensor<?xf64>, f64) -> tensor<?xf64>
              %4 = tensor.unary %1 {op = "sin"} : (tensor<?xf64>) -> tensor<?xf64>
              %5 = tensor.add %3, %4 : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
              %m = tensor.compare %5, %2 {pred = "gt"} : (tensor<?xf64>, f64) -> tensor<?xi1>
              %6 = tensor.select %m, %5, %2 : (tensor<?xi1>, tensor<?xf64>, f64) -> tensor<?xf64>
              tensor.yield %6 : (tensor<?xf64>) -> ()
            }
          ) : (tensor<?xf64>, tensor<?xf64>, f64) -> tensor<?xf64>
          func.return %r : (tensor<?xf64>) -> ()
        }
        """)


def test_results_of_other_ops_are_inputs_and_reduce_is_fused() -> None:
    assert fuse("""\
        func.func @f(%a: tensor<?x?xf64>) -> (f64) {
          %p = linalg.inv %a {target = "numpy.linalg.inv"} : (tensor<?x?xf64>) -> tensor<?x?xf64>
          %0 = tensor.abs %p : (tensor<?x?xf64>) -> tensor<?x?xf64>
          %1 = tensor.reduce %0 {op = "max"} : (tensor<?x?xf64>) -> f64
          func.return %1 : (f64) -> ()
        }
        """) == dedent("""\
        func.func @f(%a: tensor<?x?xf64>) -> (f64) {
          %p = linalg.inv %a {target = "numpy.linalg.inv"} : (tensor<?x?xf64>) -> tensor<?x?xf64>
          %0 = tensor.kernel %p (
            {
            ^bb0(%1: tensor<?x?xf64>):
              %2 = tensor.abs %1 : (tensor<?x?xf64>) -> tensor<?x?xf64>
              %3 = tensor.reduce %2 {op = "max"} : (tensor<?x?xf64>) -> f64
              tensor.yield %3 : (f64) -> ()
            }
          ) : (tensor<?x?xf64>) -> f64
          func.return %0 : (f64) -> ()
        }
        """)


def test_a_value_needed_outside_stays_outside_as_an_input() -> None:
    assert fuse("""\
        func.func @f(%a: tensor<?xf64>) -> (tensor<?xf64>) {
          %c = builtin.constant {value = -0.0} : () -> f64
          %e = tensor.unary %a {op = "exp"} : (tensor<?xf64>) -> tensor<?xf64>
          %k = func.call %e, %c {callee = "log"} : (tensor<?xf64>, f64) -> none
          %s = tensor.add %e, %c : (tensor<?xf64>, f64) -> tensor<?xf64>
          %r = tensor.mul %s, %s : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
          func.return %r : (tensor<?xf64>) -> ()
        }
        """) == dedent("""\
        func.func @f(%a: tensor<?xf64>) -> (tensor<?xf64>) {
          %c = builtin.constant {value = -0.0} : () -> f64
          %e = tensor.unary %a {op = "exp"} : (tensor<?xf64>) -> tensor<?xf64>
          %k = func.call %e, %c {callee = "log"} : (tensor<?xf64>, f64) -> none
          %r = tensor.kernel %e (
            {
            ^bb0(%0: tensor<?xf64>):
              %1 = builtin.constant {value = -0.0} : () -> f64
              %s = tensor.add %0, %1 : (tensor<?xf64>, f64) -> tensor<?xf64>
              %2 = tensor.mul %s, %s : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
              tensor.yield %2 : (tensor<?xf64>) -> ()
            }
          ) : (tensor<?xf64>) -> tensor<?xf64>
          func.return %r : (tensor<?xf64>) -> ()
        }
        """)


def test_ops_never_move_past_a_write() -> None:
    after = fuse("""\
        func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>) {
          %0 = tensor.neg %a : (tensor<?xf32>) -> tensor<?xf32>
          %w = demo.write %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
          %1 = tensor.abs %0 : (tensor<?xf32>) -> tensor<?xf32>
          func.return %1 : (tensor<?xf32>) -> ()
        }
        """)
    assert after.index("tensor.neg") < after.index("demo.write") < after.index("tensor.kernel")
    assert "tensor.kernel %0 (" in after


def test_ops_move_past_reads() -> None:
    after = fuse("""\
        func.func @f(%a: tensor<?x?xf64>) -> (tensor<?x?xf64>) {
          %0 = tensor.neg %a : (tensor<?x?xf64>) -> tensor<?x?xf64>
          %i = linalg.inv %a {target = "numpy.linalg.inv"} : (tensor<?x?xf64>) -> tensor<?x?xf64>
          %1 = tensor.add %0, %i : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
          func.return %1 : (tensor<?x?xf64>) -> ()
        }
        """)
    assert after.index("linalg.inv") < after.index("tensor.kernel %a, %i (")
    assert after.index("tensor.kernel") < after.index("tensor.neg")


def test_several_returned_values_get_a_kernel_each() -> None:
    after = fuse("""\
        func.func @f(%a: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) {
          %0 = tensor.neg %a : (tensor<?xf64>) -> tensor<?xf64>
          %1 = tensor.abs %0 : (tensor<?xf64>) -> tensor<?xf64>
          %2 = tensor.unary %0 {op = "sqrt"} : (tensor<?xf64>) -> tensor<?xf64>
          func.return %1, %2, %1 : (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) -> ()
        }
        """)
    assert after.count("tensor.kernel") == 2
    assert after.splitlines()[1].strip() == "%0 = tensor.neg %a : (tensor<?xf64>) -> tensor<?xf64>"
    assert "func.return %1, %4, %1" in after


def test_function_whose_result_is_not_a_tensor_op_is_unchanged() -> None:
    unchanged("""\
        func.func @f(%a: tensor<?xf64>) -> (tensor<?xf64>, f64) {
          %0 = builtin.constant {value = 1.0} : () -> f64
          %1 = linalg.inv %a {target = "numpy.linalg.inv"} : (tensor<?xf64>) -> tensor<?xf64>
          func.return %1, %0 : (tensor<?xf64>, f64) -> ()
        }
        """)


def test_columnar_ops_are_not_fused() -> None:
    unchanged("""\
        func.func @f(%a: column<f64>, %b: column<f64>) -> (column<f64>) {
          %0 = columnar.add %a, %b : (column<f64>, column<f64>) -> column<f64>
          func.return %0 : (column<f64>) -> ()
        }
        """)


def test_every_function_of_a_module_is_fused() -> None:
    after = fuse("""\
        builtin.module {
          func.func @f(%a: f64) -> (f64) {
            %0 = tensor.neg %a : (f64) -> f64
            func.return %0 : (f64) -> ()
          }
          func.func @g(%a: f64) -> (f64) {
            %0 = tensor.abs %a : (f64) -> f64
            func.return %0 : (f64) -> ()
          }
        }
        """)
    assert after.count("tensor.kernel") == 2
