"""`pyarrow.compute.F(args)` -> the columnar op it converges onto, by operand types.

A call converges only where its operands' types are ones Arrow's own kernel takes
the way the op says (numbers for arithmetic, booleans for logic): anything else is
left to Arrow's dispatch, which may cast or raise in its own ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ppy_arrow import tables as T
from ppy_core.interface.plugin import NOT_CONSTANT, Converge
from ppy_core.ir.types import F64, I1, I64, ColumnType, ScalarType, Type

NUMERIC: Final = frozenset({"f64", "i64"})
#: a Python int literal is cast to float64 exactly only up to 2**53
EXACT_INT: Final = 2**53
CASTS: Final = {"float64": F64, "double": F64, "int64": I64, "bool": I1}


def _kinds(args: Sequence[Type], constants: Sequence[Any]) -> list[str | None] | None:
    """Each operand's value kind; None if one is neither an Arrow column nor a
    number literal/scalar Arrow takes exactly, or if no operand is a column."""
    kinds: list[str | None] = []
    for i, t in enumerate(args):
        kind = T.value_kind(t)
        value = constants[i] if i < len(constants) else NOT_CONSTANT
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > EXACT_INT:
            return None
        if value is None:
            return None  # a null scalar: Arrow nulls every slot; left to Arrow
        kinds.append(kind)
    if None in kinds or not any(isinstance(t, ColumnType) for t in args):
        return None
    return kinds


def _column(kind: str) -> ColumnType:
    return ColumnType(ScalarType(kind), True, T.LIBRARY)


def _numeric(kinds: Sequence[str | None]) -> str | None:
    if not set(kinds) <= NUMERIC:
        return None
    return "f64" if "f64" in kinds else "i64"


def _common(kinds: Sequence[str | None]) -> str | None:
    """The branches' common kind: booleans with booleans, numbers with numbers."""
    if set(kinds) == {"i1"}:
        return "i1"
    return _numeric(kinds)


def converge(name: str, args: Sequence[Type], constants: Sequence[Any]) -> Converge | None:
    """The columnar op `pyarrow.compute.<name>` converges onto, or None."""
    if name == "cast":
        return converge_cast(args, constants)
    kinds = _kinds(args, constants)
    if kinds is None:
        return None
    n = len(kinds)
    if name in T.ARITHMETIC or name in T.CHECKED:
        kind = _numeric(kinds) if n == 2 else None
        if kind is None:
            return None
        attrs = {"checked": True} if name in T.CHECKED else {}
        return Converge(
            f"columnar.{T.ARITHMETIC.get(name) or T.CHECKED[name]}", _column(kind), attrs
        )
    if name in T.COMPARISON:
        ok = n == 2 and _numeric(kinds) is not None
        return Converge(f"columnar.{T.COMPARISON[name]}", T.BOOL_COLUMN) if ok else None
    if name in T.LOGICAL:
        ok = n == 2 and set(kinds) == {"i1"}
        return Converge(f"columnar.{T.LOGICAL[name]}", T.BOOL_COLUMN) if ok else None
    if name in T.UNARY or name in T.UNARY_CHECKED:
        return _unary(name, kinds, args)
    if name in T.NULL_TESTS:
        ok = n == 1 and isinstance(args[0], ColumnType)
        return Converge(T.NULL_TESTS[name], ColumnType(I1, False, T.LIBRARY)) if ok else None
    return _special(name, kinds, args, constants)


def _unary(name: str, kinds: list[str | None], args: Sequence[Type]) -> Converge | None:
    if len(kinds) != 1 or not isinstance(args[0], ColumnType):
        return None
    op = T.UNARY.get(name) or T.UNARY_CHECKED[name]
    ok = kinds[0] == "i1" if op == "invert" else kinds[0] in NUMERIC
    attrs: dict[str, Any] = {"op": op}
    if name in T.UNARY_CHECKED:
        attrs["checked"] = True
    return Converge("columnar.unary", args[0], attrs) if ok else None


def _special(
    name: str, kinds: list[str | None], args: Sequence[Type], constants: Sequence[Any]
) -> Converge | None:
    """if_else, fill_null, coalesce, the aggregations, the whole-column ops."""
    n = len(kinds)
    if name == "if_else" and n == 3 and kinds[0] == "i1":
        kind = _common(kinds[1:])
        return Converge("columnar.select", _column(kind)) if kind else None
    if name == "fill_null" and n == 2 and isinstance(args[0], ColumnType):
        ok = (kinds[0] == "i1" and kinds[1] == "i1") or {kinds[0], kinds[1]} <= NUMERIC
        return Converge("columnar.fill_null", args[0]) if ok else None
    if name == "coalesce" and n >= 1:
        kind = _common(kinds)
        return Converge("columnar.coalesce", _column(kind)) if kind else None
    if name in T.REDUCTIONS and n == 1 and isinstance(args[0], ColumnType):
        return Converge("columnar.reduce", T.opaque("Scalar"), {"op": T.REDUCTIONS[name]})
    if name == "filter" and n == 2 and kinds[1] == "i1" and isinstance(args[1], ColumnType):
        return Converge(T.WHOLE_COLUMN[name], args[0])
    if name == "take" and n == 2 and kinds[1] == "i64" and isinstance(args[1], ColumnType):
        return Converge(T.WHOLE_COLUMN[name], args[0])
    if name == "sort_indices" and n == 1:
        return Converge(T.WHOLE_COLUMN[name], ColumnType(I64, False, T.LIBRARY))
    return None


def converge_cast(args: Sequence[Type], constants: Sequence[Any]) -> Converge | None:
    """`pc.cast(a, "float64")` with a literal target type -> columnar.cast {to}."""
    if len(args) != 2 or not isinstance(args[0], ColumnType) or args[0].library != T.LIBRARY:
        return None
    target = CASTS.get(constants[1]) if isinstance(constants[1], str) else None
    if target is None:
        return None
    return Converge("columnar.cast", _column(target.kind), {"to": target.kind}, operands=(0,))


__all__ = ["converge", "converge_cast"]
