"""DeadCodeElimination: before/after IR text."""

from __future__ import annotations

from textwrap import dedent

from demo_dialect import demo_registry

from ppy_core.compiler.passes import DeadCodeElimination
from ppy_core.ir import (
    PassManager,
    parse_ir,
    print_ir,
)


def dce(before: str) -> str:
    op = parse_ir(dedent(before), demo_registry())
    PassManager([DeadCodeElimination()]).run(op)
    return print_ir(op)


def test_unused_pure_chain_goes_in_one_run() -> None:
    assert dce("""\
        func.func @f(%a: tensor<?xf64>) -> (tensor<?xf64>) {
          %c = builtin.constant {value = 2.0} : () -> f64
          %0 = tensor.mul %a, %c : (tensor<?xf64>, f64) -> tensor<?xf64>
          %1 = tensor.unary %0 {op = "exp"} : (tensor<?xf64>) -> tensor<?xf64>
          %2 = tensor.reduce %1 {op = "add"} : (tensor<?xf64>) -> f64
          %3 = tensor.neg %a : (tensor<?xf64>) -> tensor<?xf64>
          func.return %3 : (tensor<?xf64>) -> ()
        }
        """) == dedent("""\
        func.func @f(%a: tensor<?xf64>) -> (tensor<?xf64>) {
          %0 = tensor.neg %a : (tensor<?xf64>) -> tensor<?xf64>
          func.return %0 : (tensor<?xf64>) -> ()
        }
        """)


def test_ops_with_effects_stay_even_when_unused() -> None:
    text = dedent("""\
        func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> () {
          %0 = func.call %a {callee = "print"} : (tensor<?xf32>) -> none
          %1 = demo.write %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
          %2 = linalg.det %a {target = "numpy.linalg.det"} : (tensor<?xf32>) -> f32
          func.return : () -> ()
        }
        """)
    assert dce(text) == text


def test_inputs_of_kept_effectful_ops_stay() -> None:
    after = dce("""\
        func.func @f(%a: tensor<?xf32>) -> () {
          %0 = tensor.neg %a : (tensor<?xf32>) -> tensor<?xf32>
          %1 = func.call %0 {callee = "print"} : (tensor<?xf32>) -> none
          func.return : () -> ()
        }
        """)
    assert "tensor.neg" in after


def test_dead_kernel_and_its_inputs_go_live_kernel_body_is_cleaned() -> None:
    assert dce("""\
        func.func @f(%a: tensor<?xf64>) -> (tensor<?xf64>) {
          %0 = tensor.abs %a : (tensor<?xf64>) -> tensor<?xf64>
          %1 = tensor.kernel %0 (
            {
            ^bb0(%2: tensor<?xf64>):
              tensor.yield %2 : (tensor<?xf64>) -> ()
            }
          ) : (tensor<?xf64>) -> tensor<?xf64>
          %3 = tensor.kernel %a (
            {
            ^bb0(%4: tensor<?xf64>):
              %5 = tensor.neg %4 : (tensor<?xf64>) -> tensor<?xf64>
              %6 = tensor.abs %4 : (tensor<?xf64>) -> tensor<?xf64>
              tensor.yield %6 : (tensor<?xf64>) -> ()
            }
          ) : (tensor<?xf64>) -> tensor<?xf64>
          func.return %3 : (tensor<?xf64>) -> ()
        }
        """) == dedent("""\
        func.func @f(%a: tensor<?xf64>) -> (tensor<?xf64>) {
          %0 = tensor.kernel %a (
            {
            ^bb0(%1: tensor<?xf64>):
              %2 = tensor.abs %1 : (tensor<?xf64>) -> tensor<?xf64>
              tensor.yield %2 : (tensor<?xf64>) -> ()
            }
          ) : (tensor<?xf64>) -> tensor<?xf64>
          func.return %0 : (tensor<?xf64>) -> ()
        }
        """)


def test_functions_and_terminators_are_never_removed() -> None:
    text = dedent("""\
        builtin.module {
          func.func @unused() -> () {
            func.return : () -> ()
          }
        }
        """)
    assert dce(text) == text
