"""Unit tests of `loops.vector`'s flat views (deriche's `imgOut[:] = c2 * (y1 + y2)`
over 2-D arrays: every axis "f", no bounds): built in Python, verified, printed and
parsed back; malformed ones refused."""

from __future__ import annotations

import pytest

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir import F64, I64, TensorType, core_registry, parse_ir, print_ir, verify
from ppy_core.ir.dialects.builtin import FuncOp, ReturnOp
from ppy_core.ir.dialects.loops_vector import VectorOp

MATRIX = TensorType(F64, (None, None), "numpy")
CUBE = TensorType(F64, (None, None, None), "numpy")


def _flat(views: tuple[str, ...], types: tuple[TensorType, ...], bounds: int = 0) -> FuncOp:
    """`X[:] = s * (Y + Z)` with the given views, `bounds` ints after the arrays."""
    func = FuncOp.build("flat", [*types, *[I64] * bounds, F64], [], [*"XYZ", *"abcd"[:bounds], "s"])
    *arrays, s = func.args
    tree = ("s0", "v1", "v2", "add", "mul")
    func.entry.append(VectorOp([*arrays, s], [], {"op": "set", "views": views, "tree": tree}))
    func.entry.append(ReturnOp([]))
    return func


@pytest.mark.parametrize(
    ("views", "types"),
    [(("ff", "ff", "ff"), (MATRIX,) * 3), (("fff", "fff", "fff"), (CUBE,) * 3)],
)
def test_flat_views_verify_and_round_trip(views, types) -> None:
    func = _flat(views, types)
    verify(func)
    text = print_ir(func)
    assert '"ff' in text
    assert print_ir(parse_ir(text, core_registry())) == text


def test_a_flat_view_has_every_axis_of_its_array() -> None:
    with pytest.raises(InvalidIRError):
        verify(_flat(("f", "ff", "ff"), (MATRIX,) * 3))


def test_a_view_is_flat_whole_or_has_one_slice() -> None:
    """ "fs" is neither: a flat axis beside a slice."""
    with pytest.raises(InvalidIRError):
        verify(_flat(("fs", "ff", "ff"), (MATRIX,) * 3, bounds=2))
