"""Unit tests of `loops.vector`'s fills, copies and negations (adi's
`v[0, 1:N - 1] = 1.0`, `q[1:N - 1, 0] = v[0, 1:N - 1]`, `-A[i, :]`): built in
Python, verified, printed and parsed back; malformed ones refused."""

from __future__ import annotations

import pytest

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir import F64, I64, TensorType, core_registry, parse_ir, print_ir, verify
from ppy_core.ir.dialects.builtin import FuncOp, ReturnOp
from ppy_core.ir.dialects.loops_vector import VectorOp

MATRIX = TensorType(F64, (None, None), "numpy")


def _fill() -> FuncOp:
    """`C[i, lo:hi] = s`: the target is the only view."""
    func = FuncOp.build("fill", [MATRIX, I64, I64, I64, F64], [], list("Cilhs"))
    C, i, lo, hi, s = func.args
    func.entry.append(
        VectorOp([C, i, lo, hi, s], [], {"op": "set", "views": ("is",), "tree": ("s0",)})
    )
    func.entry.append(ReturnOp([]))
    return func


def _copy(tree: tuple[str, ...], op: str = "set") -> FuncOp:
    """`C[i, lo:hi] = tree over A[lo:hi, i]`."""
    func = FuncOp.build("copy", [MATRIX, MATRIX, I64, I64, I64], [], list("CAilh"))
    C, A, i, lo, hi = func.args
    parts = [C, A, i, lo, hi, lo, hi, i]
    func.entry.append(VectorOp(parts, [], {"op": op, "views": ("is", "si"), "tree": tree}))
    func.entry.append(ReturnOp([]))
    return func


@pytest.mark.parametrize("build", [_fill, lambda: _copy(("v1",)), lambda: _copy(("v1", "neg"))])
def test_fills_copies_and_negations_verify_and_round_trip(build) -> None:
    func = build()
    verify(func)
    text = print_ir(func)
    assert print_ir(parse_ir(text, core_registry())) == text


@pytest.mark.parametrize("tree", [("neg",), ("neg", "v1"), ("v1", "neg", "neg", "add")])
def test_a_negation_needs_one_operand(tree: tuple[str, ...]) -> None:
    with pytest.raises(InvalidIRError):
        verify(_copy(tree))


def test_a_statement_needs_its_target() -> None:
    func = FuncOp.build("none", [F64], [], ["s"])
    func.entry.append(VectorOp([func.args[0]], [], {"op": "set", "views": (), "tree": ("s0",)}))
    func.entry.append(ReturnOp([]))
    with pytest.raises(InvalidIRError):
        verify(func)
