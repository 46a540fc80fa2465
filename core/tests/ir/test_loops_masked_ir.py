"""Unit tests of `loops.masked_reduce` (`m = <mask>; v = X[m]; t = v.mean()`): built in
Python, verified, printed and parsed back; malformed trees and operands refused; and
the front end's rule for when the three statements become one op."""

from __future__ import annotations

import ast

import pytest

from ppy_core.compiler.frontend.loops_masked import _triple
from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir import F64, I64, ScalarType, TensorType, core_registry, parse_ir, print_ir, verify
from ppy_core.ir.dialects.builtin import FuncOp, ReturnOp
from ppy_core.ir.dialects.loops_masked import MaskedReduceOp

VECTOR = TensorType(F64, (None,), "numpy")
MATRIX = TensorType(F64, (None, None), "numpy")


def _mean(
    tree: tuple[str, ...], arrays: int = 1, first: TensorType = VECTOR, reduce: str = "mean"
) -> FuncOp:
    """`X[mask].mean()` (`.sum()`) over X, `arrays` mask arrays and two scalars."""
    types = [first, *[VECTOR] * arrays, F64, F64]
    func = FuncOp.build("m", types, [], ["X", *"ABC"[:arrays], "lo", "hi"])
    attrs = {"arrays": arrays, "reduce": reduce, "tree": tree, "py": "f64"}
    func.entry.append(MaskedReduceOp(list(func.args), [ScalarType("f64")], attrs))
    func.entry.append(ReturnOp([]))
    return func


@pytest.mark.parametrize(
    ("tree", "arrays"),
    [
        (("s0", "a0", "le", "a0", "s1", "lt", "and"), 1),
        (("a0", "a1", "ne", "a1", "s0", "gt", "or", "a0", "s1", "eq", "and"), 2),
        (("a0", "s0", "ge"), 1),
    ],
)
@pytest.mark.parametrize("reduce", ["mean", "sum"])
def test_masked_reductions_verify_and_round_trip(tree, arrays, reduce) -> None:
    func = _mean(tree, arrays, reduce=reduce)
    verify(func)
    text = print_ir(func)
    assert "loops.masked_reduce" in text
    assert f'"{reduce}"' in text
    assert print_ir(parse_ir(text, core_registry())) == text


def test_only_means_and_sums() -> None:
    with pytest.raises(InvalidIRError):
        verify(_mean(("a0", "s0", "lt"), reduce="prod"))


@pytest.mark.parametrize(
    "tree",
    [
        ("a0", "s0"),  # two masks left
        ("a0", "lt"),  # pops what was never pushed
        ("a1", "s0", "lt"),  # no second mask array
        ("a0", "s2", "lt"),  # no third scalar
        ("a0", "s0", "xor"),
    ],
)
def test_a_malformed_tree_is_refused(tree) -> None:
    with pytest.raises(InvalidIRError):
        verify(_mean(tree))


def test_operands_are_vectors() -> None:
    with pytest.raises(InvalidIRError):
        verify(_mean(("a0", "s0", "lt"), first=MATRIX))
    func = FuncOp.build("m", [VECTOR, VECTOR, I64], [], ["X", "A", "n"])
    attrs = {"arrays": 2, "reduce": "mean", "tree": ("a0", "a1", "lt"), "py": "f64"}
    func.entry.append(MaskedReduceOp(list(func.args), [ScalarType("f64")], attrs))
    func.entry.append(ReturnOp([]))
    with pytest.raises(InvalidIRError):
        verify(func)  # the second "array" is an int


class _Typer:
    """The module's `import numpy as np`, as the typer resolves names."""

    def qualname(self, node: ast.expr) -> str | None:
        text = ast.unparse(node)
        return "numpy." + text[3:] if text.startswith("np.") else None


def _statements(text: str) -> list[ast.stmt]:
    return ast.parse(text).body


@pytest.mark.parametrize(
    "text",
    [
        "m = np.logical_and(lo <= r, r < hi)\nv = d[m]\nout[i] = v.mean()",
        "m = (r < hi) | (r > 2.0)\nv = d[m]\nt = np.mean(v)",
        "m = r != lo\nv = r[m]\nt = v.mean()",
        "m = r != lo\nv = r[m]\nt = v.sum()",
        "m = (lo < r) & (r <= hi)\nv = d[m]\nt = np.sum(v)",
    ],
)
def test_the_three_statements_as_one(text: str) -> None:
    s0, s1, s2 = _statements(text)
    call = _triple(_Typer(), s0, s1, s2)
    assert call is s2.value  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "text",
    [
        "m = np.logical_and(lo <= r, r < hi)\nv = d[m]\nout[i] = v.mean() + 1.0",  # not whole
        "m = np.logical_and(lo <= r, r < hi)\nv = d[m]\nout[i] = v.prod()",
        "m = lo <= r\nv = d[m]\nout[i] = np.sum(v, 0)",
        "m = lo <= r\nv = d[m]\nout[i] = w.mean()",  # another array's mean
        "m = lo <= r\nv = d[m > 0]\nout[i] = v.mean()",  # the index is no name
        "m = np.exp(r)\nv = d[m]\nout[i] = v.mean()",  # no mask
        "m = lo <= r\nv = m[m]\nout[i] = v.mean()",
        "m = lo <= r\nv = d[m]\nout[i] = v.mean(axis=0)",
    ],
)
def test_other_statements_stay_apart(text: str) -> None:
    s0, s1, s2 = _statements(text)
    assert _triple(_Typer(), s0, s1, s2) is None
