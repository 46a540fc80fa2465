"""Unit tests of the loops dialect's array statements (`loops.vector`,
`loops.index_check`): built in Python, verified, printed and parsed back; malformed
ones refused by the verifier."""

from __future__ import annotations

import pytest

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir import F64, I64, TensorType, core_registry, parse_ir, print_ir, verify
from ppy_core.ir.dialects.builtin import FuncOp, ReturnOp
from ppy_core.ir.dialects.loops_vector import IndexCheckOp, VectorOp

MATRIX = TensorType(F64, (None, None), "numpy")


def _statement(tree: tuple[str, ...], views: tuple[str, ...] = ("is", "si")) -> FuncOp:
    """`C[i, lo:hi] += s * A[lo:hi, k]` as loops IR."""
    func = FuncOp.build("syrk", [MATRIX, MATRIX, I64, I64, I64, F64], [], list("CAijks"))
    C, A, i, lo, hi, s = func.args
    func.entry.append(IndexCheckOp([C, i], [], {"axis": 0}))
    bounds = [i, lo, hi, lo, hi, hi]
    func.entry.append(VectorOp([C, A, *bounds, s], [], {"op": "add", "views": views, "tree": tree}))
    func.entry.append(ReturnOp([]))
    return func


def test_a_statement_verifies_and_round_trips() -> None:
    func = _statement(("s0", "v1", "mul"))
    verify(func)
    text = print_ir(func)
    assert "loops.vector" in text
    assert 'tree = ["s0", "v1", "mul"]' in text
    assert print_ir(parse_ir(text, core_registry())) == text


@pytest.mark.parametrize(
    ("tree", "views"),
    [
        (("s0", "v1"), ("is", "si")),  # two values left
        (("v1", "mul"), ("is", "si")),  # an op without two operands
        (("v2",), ("is", "si")),  # no view 2
        (("v0",), ("is", "si")),  # the target is no operand of E
        (("s1",), ("is", "si")),  # no scalar 1
        (("v1", "pow"), ("is", "si")),  # not an elementwise op of the dialect
        (("v1",), ("ss", "si")),  # a view with two slices
    ],
)
def test_malformed_statements_are_refused(tree: tuple[str, ...], views: tuple[str, ...]) -> None:
    with pytest.raises(InvalidIRError):
        verify(_statement(tree, views))


def test_late_checks_and_elements_count_their_operands() -> None:
    """`C[i, lo:hi] += A[lo:hi, k] * s * A[i, k]`: the element read after the
    operation (loads), and A's view checked by the statement itself (late)."""
    func = FuncOp.build("f", [MATRIX, MATRIX, I64, I64, I64, F64], [], list("CAijks"))
    C, A, i, lo, hi, s = func.args
    attributes = {"op": "add", "views": ("is", "si"), "tree": ("v1", "s0", "mul", "e0", "mul")}
    parts = [C, A, i, lo, hi, lo, hi, hi, s, A, i, hi]
    func.entry.append(VectorOp(parts, [], {**attributes, "loads": (2,), "late": (1,)}))
    func.entry.append(ReturnOp([]))
    verify(func)
    bad = FuncOp.build("g", [MATRIX, MATRIX, I64, I64, I64, F64], [], list("CAijks"))
    bad.entry.append(VectorOp(parts[:-1], [], {**attributes, "loads": (2,), "late": (1,)}))
    bad.entry.append(ReturnOp([]))
    with pytest.raises(InvalidIRError):
        verify(bad)  # one operand short: none is left for the scalar s0
