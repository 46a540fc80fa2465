"""Unit tests of the loops dialect's reversed views, outer updates and gathers
(`loops.dot` with an "r" view, `loops.flip_update`, `loops.outer_update`,
`loops.gather_dot`): built in Python, verified, printed and parsed back; malformed
ones refused by the verifier."""

from __future__ import annotations

import pytest

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir import F64, I64, ScalarType, TensorType, core_registry, parse_ir, print_ir, verify
from ppy_core.ir.dialects.builtin import FuncOp, ReturnOp
from ppy_core.ir.dialects.loops import DotOp, FlipUpdateOp, GatherDotOp, OuterUpdateOp

VECTOR = TensorType(F64, (None,), "numpy")
MATRIX = TensorType(F64, (None, None), "numpy")
INTS = TensorType(ScalarType("i32"), (None, None), "numpy")
INDICES = TensorType(ScalarType("u32"), (None,), "numpy")


def _round_trip(func: FuncOp, name: str) -> None:
    verify(func)
    text = print_ir(func)
    assert name in text
    assert print_ir(parse_ir(text, core_registry())) == text


def _durbin(views: tuple[str, str] = ("s", "r"), bounds: int = 4) -> FuncOp:
    """`y[lo:hi] += s * np.flip(r[lo:hi])` and `np.dot(np.flip(r[lo:hi]), y[lo:hi])`."""
    func = FuncOp.build("durbin", [VECTOR, VECTOR, I64, I64, F64], [], ["y", "r", "lo", "hi", "s"])
    y, r, lo, hi, s = func.args
    dot = DotOp([r, y, lo, hi, lo, hi], [F64], {"kind": "dot", "views": ("r", "s"), "py": "f64"})
    func.entry.append(dot)
    operands = [y, r, s, *[lo, hi, lo, hi][:bounds]]
    func.entry.append(FlipUpdateOp(operands, [], {"op": "add", "form": "left", "views": views}))
    func.entry.append(ReturnOp([]))
    return func


def test_reversed_views_verify_and_round_trip() -> None:
    _round_trip(_durbin(), "loops.flip_update")


@pytest.mark.parametrize(
    ("views", "bounds"),
    [
        (("s", "s"), 4),  # the source is not reversed
        (("r", "r"), 4),  # the target is
        (("s", "r"), 3),  # a bound missing
        (("ss", "r"), 4),  # a view of another rank
    ],
)
def test_malformed_flip_updates_are_refused(views: tuple[str, str], bounds: int) -> None:
    with pytest.raises(InvalidIRError):
        verify(_durbin(views, bounds))


def _floyd(target: TensorType = INTS, views: tuple[str, str] = ("si", "is")) -> FuncOp:
    """`X[:] = np.minimum(X, np.add.outer(X[:, k], X[k, :]))`."""
    func = FuncOp.build("floyd", [target, I64, I64, I64], [], ["X", "k", "zero", "n"])
    X, k, zero, n = func.args
    bounds = [zero, n, k, k, zero, n]
    func.entry.append(OuterUpdateOp([X, X, X, *bounds], [], {"fn": "minimum", "views": views}))
    func.entry.append(ReturnOp([]))
    return func


def test_outer_updates_verify_and_round_trip() -> None:
    _round_trip(_floyd(), "loops.outer_update")


@pytest.mark.parametrize("views", [("ss", "is"), ("s", "is"), ("si", "ii")])
def test_malformed_outer_updates_are_refused(views: tuple[str, str]) -> None:
    with pytest.raises(InvalidIRError):
        verify(_floyd(views=views))


def _spmv(views: tuple[str, str] = ("s", "s"), data: TensorType = VECTOR) -> FuncOp:
    """`vals @ x[cols]` of a vector view and a gather by a uint32 view."""
    func = FuncOp.build(
        "spmv", [VECTOR, data, INDICES, I64, I64], [], ["vals", "x", "cols", "lo", "hi"]
    )
    vals, x, cols, lo, hi = func.args
    op = GatherDotOp(
        [vals, x, cols, lo, hi, lo, hi],
        [F64],
        {"kind": "matmul", "views": views, "side": "right", "py": "f64"},
    )
    func.entry.append(op)
    func.entry.append(ReturnOp([]))
    return func


def test_gathers_verify_and_round_trip() -> None:
    _round_trip(_spmv(), "loops.gather_dot")
    _round_trip(_spmv(("r", "s")), "loops.gather_dot")  # np.flip of the vector


@pytest.mark.parametrize(
    ("views", "data"),
    [(("s", "r"), VECTOR), (("ss", "s"), VECTOR), (("s", "s"), MATRIX)],
)
def test_malformed_gathers_are_refused(views: tuple[str, str], data: TensorType) -> None:
    with pytest.raises(InvalidIRError):
        verify(_spmv(views, data))
