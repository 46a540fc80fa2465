"""The columnar dialect: Arrow-style arrays with validity, the ops pyarrow.compute
and pandas Series expressions converge onto. Nulls propagate unless an op says not.

%r = columnar.add %a, %b : (column<f64, nullable>, column<f64>) -> column<f64, nullable>
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Dialect, Operation, attribute, operand, result
from ppy_core.ir.types import ColumnType, ScalarType

Operand = (ColumnType, ScalarType)


class _Binary(Operation):
    lhs = operand(Operand)
    rhs = operand(Operand)
    out = result(ColumnType)


def _binary(op_name: str, doc: str) -> type[Operation]:
    return type(
        f"{op_name.title().replace('_', '')}Op",
        (_Binary,),
        {"name": f"columnar.{op_name}", "__doc__": doc},
    )


ARITHMETIC: Final = (
    "add",
    "sub",
    "mul",
    "div",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "equal",
    "not_equal",
    "and_kleene",
    "or_kleene",
)
BINARY: Final = {
    n: _binary(n, f"%r = columnar.{n} %a, %b : (column<f64>, column<f64>) -> column<...>")
    for n in ARITHMETIC
}


class SelectOp(Operation):
    """%r = columnar.select %m, %a, %b : (column<i1>, column<f64>, column<f64>) -> column<f64>"""

    name: ClassVar[str] = "columnar.select"
    cond = operand(Operand)
    on_true = operand(Operand)
    on_false = operand(Operand)
    out = result(ColumnType)


class FillNullOp(Operation):
    """%r = columnar.fill_null %a, %v : (column<f64, nullable>, f64) -> column<f64>"""

    name: ClassVar[str] = "columnar.fill_null"
    source = operand(ColumnType)
    fill = operand(Operand)
    out = result(ColumnType)


class IsNullOp(Operation):
    """%m = columnar.is_null %a : (column<f64, nullable>) -> column<i1>"""

    name: ClassVar[str] = "columnar.is_null"
    source = operand(ColumnType)
    out = result(ColumnType)


class MapOp(Operation):
    """A fused columnar expression, named by the function it applies.

    %r = columnar.map %a, %b {fn = "site_0"} : (column<f64>, column<f64>) -> column<f64>
    """

    name: ClassVar[str] = "columnar.map"
    fn = attribute(str)
    inputs = operand(Operand, variadic=True)
    out = result(ColumnType)


COLUMNAR: Final = Dialect("columnar", [*BINARY.values(), SelectOp, FillNullOp, IsNullOp, MapOp])
