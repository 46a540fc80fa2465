"""The columnar dialect: Arrow-style arrays (values plus a validity bit per slot), the
ops pyarrow.compute calls and pandas Series expressions converge onto. Library-neutral:
a column's `library` says whose array it is; the null semantics are Arrow's.

Nulls propagate through every elementwise op (a null operand makes a null slot)
except where an op says otherwise: `and_kleene`/`or_kleene` (Kleene logic),
`select` (a null on the unchosen side is ignored), `fill_null`/`coalesce` (fill),
`is_null`/`is_valid` (never null). NaN is a value, not a null.

%r = columnar.add %a, %b : (column<f64, nullable>, column<f64>) -> column<f64, nullable>
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Dialect, Operation, attribute, operand, result
from ppy_core.ir.types import ColumnType, OpaqueType, ScalarType

Operand = (ColumnType, ScalarType)


class _Elementwise(Operation):
    """An elementwise op: its result is a column when any operand is one."""

    def verify_extra(self) -> None:
        columns = [v for v in self.operands if isinstance(v.type, ColumnType)]
        if not columns:
            self.fail("an elementwise columnar op needs a column operand")
        if not isinstance(self.results[0].type, ColumnType):
            self.fail(f"result must be a column, not {self.results[0].type}")


class _Binary(_Elementwise):
    lhs = operand(Operand)
    rhs = operand(Operand)
    out = result(ColumnType)


def _binary(op_name: str, doc: str) -> type[Operation]:
    return type(
        f"{op_name.title().replace('_', '')}Op",
        (_Binary,),
        {"name": f"columnar.{op_name}", "__doc__": doc},
    )


#: arithmetic; {checked = true} is the `_checked` variant (integer overflow raises)
ARITHMETIC: Final = ("add", "sub", "mul", "div")
COMPARISON: Final = ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal")
#: `and`/`or`/`xor` propagate nulls; the `_kleene` forms follow Kleene logic
LOGICAL: Final = ("and", "or", "xor", "and_kleene", "or_kleene")
BINARY: Final = {
    n: _binary(n, f"%r = columnar.{n} %a, %b : (column<f64>, column<f64>) -> column<...>")
    for n in (*ARITHMETIC, *COMPARISON, *LOGICAL)
}


class UnaryOp(_Elementwise):
    """Elementwise one-operand op (nulls propagate).

    %r = columnar.unary %a {op = "neg"} : (column<f64, nullable>) -> column<f64, nullable>
    """

    name: ClassVar[str] = "columnar.unary"
    source = operand(ColumnType)
    op = attribute(str, one_of=("neg", "abs", "invert"))
    out = result(ColumnType)


class IsNullOp(_Elementwise):
    """Whether each slot is null; never null itself.

    %m = columnar.is_null %a : (column<f64, nullable>) -> column<i1>
    """

    name: ClassVar[str] = "columnar.is_null"
    source = operand(ColumnType)
    out = result(ColumnType)


class IsValidOp(_Elementwise):
    """Whether each slot is valid; never null itself.

    %m = columnar.is_valid %a : (column<f64, nullable>) -> column<i1>
    """

    name: ClassVar[str] = "columnar.is_valid"
    source = operand(ColumnType)
    out = result(ColumnType)


class SelectOp(_Elementwise):
    """Arrow's if_else: a null condition is null; the unchosen side is ignored.

    %r = columnar.select %m, %a, %b : (column<i1>, column<f64>, f64) -> column<f64, nullable>
    """

    name: ClassVar[str] = "columnar.select"
    cond = operand(Operand)
    on_true = operand(Operand)
    on_false = operand(Operand)
    out = result(ColumnType)


class FillNullOp(_Elementwise):
    """Null slots take the fill (cast to the column's type); the result always carries
    a validity bitmap, as Arrow's does.

    %r = columnar.fill_null %a, %v : (column<f64, nullable>, f64) -> column<f64>
    """

    name: ClassVar[str] = "columnar.fill_null"
    source = operand(ColumnType)
    fill = operand(Operand)
    out = result(ColumnType)


class CoalesceOp(_Elementwise):
    """The first non-null of its operands, slot by slot.

    %r = columnar.coalesce %a, %b, %c : (column<f64, nullable>, column<f64>, f64) -> column<f64>
    """

    name: ClassVar[str] = "columnar.coalesce"
    values = operand(Operand, variadic=True)
    out = result(ColumnType)


class CastOp(Operation):
    """A cast to the column type `to` names (Arrow's safe cast: overflow raises).

    %r = columnar.cast %a {to = "f64"} : (column<i64, nullable>) -> column<f64, nullable>
    """

    name: ClassVar[str] = "columnar.cast"
    source = operand(ColumnType)
    to = attribute(str)
    out = result(ColumnType)


class FilterOp(Operation):
    """The slots where the mask is true (a null mask slot drops the row).

    %r = columnar.filter %a, %m : (column<f64, nullable>, column<i1>) -> column<f64, nullable>
    """

    name: ClassVar[str] = "columnar.filter"
    source = operand(ColumnType)
    mask = operand(ColumnType)
    out = result(ColumnType)


class TakeOp(Operation):
    """The slots at the given indices.

    %r = columnar.take %a, %i : (column<f64>, column<i64>) -> column<f64, nullable>
    """

    name: ClassVar[str] = "columnar.take"
    source = operand(ColumnType)
    indices = operand(ColumnType)
    out = result(ColumnType)


class SortIndicesOp(Operation):
    """The permutation that sorts a column (stable; nulls at the end).

    %r = columnar.sort_indices %a : (column<f64, nullable>) -> column<i64>
    """

    name: ClassVar[str] = "columnar.sort_indices"
    source = operand(ColumnType)
    out = result(ColumnType)


class ReduceOp(Operation):
    """A whole-column aggregation that skips nulls (NaN propagates through sum/mean).
    Its result is a number, or the library's scalar object (Arrow's `Scalar`).

    %s = columnar.reduce %a {op = "sum"} : (column<f64, nullable>) -> f64
    """

    name: ClassVar[str] = "columnar.reduce"
    source = operand(ColumnType)
    op = attribute(str, one_of=("sum", "mean", "min", "max", "count"))
    out = result((ScalarType, OpaqueType))


class MapOp(Operation):
    """A fused columnar expression, named by the function it applies.

    %r = columnar.map %a, %b {fn = "site_0"} : (column<f64>, column<f64>) -> column<f64>
    """

    name: ClassVar[str] = "columnar.map"
    fn = attribute(str)
    inputs = operand(Operand, variadic=True)
    out = result(ColumnType)


#: the elementwise ops a fused columnar kernel is made of
ELEMENTWISE: Final = frozenset(
    {*(f"columnar.{n}" for n in BINARY), "columnar.unary", "columnar.select"}
    | {"columnar.fill_null", "columnar.coalesce", "columnar.is_null", "columnar.is_valid"}
)

COLUMNAR: Final = Dialect(
    "columnar",
    [
        *BINARY.values(),
        UnaryOp,
        IsNullOp,
        IsValidOp,
        SelectOp,
        FillNullOp,
        CoalesceOp,
        CastOp,
        FilterOp,
        TakeOp,
        SortIndicesOp,
        ReduceOp,
        MapOp,
    ],
)
