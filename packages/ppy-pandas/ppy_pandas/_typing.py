"""How the `pandas` plugin answers the typing hooks: Series operators and methods onto
columnar ops, frames/indexes/groups typed by what they are, IO and callbacks marked.

A Series tree converges only over float64/bool Series and number literals: what the
kernels fuse. Everything else is typed (so the code around it types) and left to pandas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ppy_core.interface.plugin import (
    NOT_CONSTANT,
    CallAnswer,
    CallContext,
    Converge,
    OperatorContext,
    SubscriptContext,
)
from ppy_core.ir.types import UNKNOWN, ColumnType, OpaqueType, Type
from ppy_pandas import tables as T

#: a Python int literal is exactly a float64 only up to 2**53
EXACT_INT: Final = 2**53
IO: Final = frozenset({"IO"})
CALLBACK: Final = frozenset({"Callback"})


def _series(t: Type) -> bool:
    return isinstance(t, ColumnType) and t.library == T.LIBRARY


def _kinds(args: Sequence[Type], constants: Sequence[Any]) -> list[str] | None:
    """Each operand's kind ('f64'/'i1'), or None when one is not a Series or a number
    literal the kernel takes exactly, or when no operand is a Series."""
    kinds: list[str] = []
    for i, t in enumerate(args):
        value = constants[i] if i < len(constants) else NOT_CONSTANT
        if value is None or isinstance(value, str):
            return None
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > EXACT_INT:
            return None
        kind = T.value_kind(t)
        if kind is None:
            return None
        kinds.append(kind)
    if not any(_series(t) for t in args):
        return None
    return kinds


def binary(op: str, args: Sequence[Type], constants: Sequence[Any]) -> Converge | None:
    """A columnar binary op (`add`, `greater`, `and_kleene`...) over two operands."""
    kinds = _kinds(args, constants)
    if kinds is None or len(kinds) != 2:
        return None
    if op in T.ARITHMETIC.values():
        # on the Arrow backing pandas turns a NaN an arithmetic op produces into <NA>
        # (its `_arith_method`); the NumPy-model twin ignores the attribute
        ok = set(kinds) == {"f64"}
        return Converge(f"columnar.{op}", T.SERIES, {"nan_null": True}) if ok else None
    if op in T.COMPARISON.values():
        return Converge(f"columnar.{op}", T.BOOL_SERIES) if set(kinds) == {"f64"} else None
    if set(kinds) == {"i1"}:  # &, |, ^ of two boolean Series
        return Converge(f"columnar.{op}", T.BOOL_SERIES)
    return None


def operator(ctx: OperatorContext) -> Converge | None:
    """`a * b`, `a > 0.5`, `m & n`, `-a`, `~m` over Series."""
    op = ctx.op
    if op in ("USub", "Invert"):
        kinds = _kinds(ctx.operands, ctx.constants)
        want = "f64" if op == "USub" else "i1"
        if kinds != [want] or not _series(ctx.operands[0]):
            return None
        name = "neg" if op == "USub" else "invert"
        return Converge("columnar.unary", ctx.operands[0], {"op": name})
    name = T.ARITHMETIC.get(op) or T.COMPARISON.get(op) or T.LOGICAL.get(op)
    return binary(name, ctx.operands, ctx.constants) if name else None


def series_method(ctx: CallContext) -> Converge | None:
    """`s.fillna(v)`, `s.isna()`, `s.notna()`, `s.abs()`, `s.mul(t)`... -> columnar op."""
    method = ctx.callee.rpartition(".")[2]
    args, consts = ctx.args, ctx.constants
    if ctx.kwargs or not args or not _series(args[0]):
        return None
    if method in T.NULL_TESTS and len(args) == 1:
        return Converge(T.NULL_TESTS[method], T.BOOL_SERIES)
    if method in T.UNARY_METHODS and len(args) == 1 and args[0].value.kind == "f64":
        return Converge("columnar.unary", T.SERIES, {"op": T.UNARY_METHODS[method]})
    if method == "fillna" and len(args) == 2:
        kinds = _kinds(args, consts)
        # a Series fill aligns on its index (pandas' rule): only a number fills here
        ok = kinds == ["f64", "f64"] and not _series(args[1])
        return Converge("columnar.fill_null", T.SERIES) if ok else None
    if method in T.METHOD_OPERATORS and len(args) == 2:
        op, reverse = T.METHOD_OPERATORS[method]
        if reverse:
            return binary(op, args[::-1], consts[::-1])
        return binary(op, args, consts)
    return None


def call(ctx: CallContext) -> CallAnswer | None:
    """Result type and effects of a pandas call or method."""
    callee = ctx.callee
    if T.is_io(callee):
        return CallAnswer(UNKNOWN, effects=IO)
    owner, _, method = callee.rpartition(".")
    if method in T.CALLBACKS and owner in _OWNERS:
        return CallAnswer(_OWNERS[owner], effects=CALLBACK)
    if owner in ("pandas.Series", T.BOOL_OWNER):
        converge = series_method(ctx)
        if converge is not None:
            return CallAnswer(converge.result)
        found = T.SERIES_METHODS.get(method)
        if method == "fillna":  # with a Series, a keyword or a non-number fill
            return CallAnswer(T.SERIES)
        return CallAnswer(found[1]) if found else None
    table = {
        "pandas.DataFrame": T.FRAME_METHODS,
        T.FRAME_GROUPS_OWNER: T.GROUP_METHODS,
        T.SERIES_GROUPS_OWNER: T.GROUP_METHODS,
    }.get(owner)
    if table is not None:
        found = table.get(method)
        if found is None:
            return None
        result = found[1]
        if owner == T.SERIES_GROUPS_OWNER and result == T.FRAME:
            result = T.SERIES  # a grouped Series aggregates to a Series
        return CallAnswer(result)
    found = T.FUNCTIONS.get(callee)
    return CallAnswer(found[1]) if found else None


#: whose `apply`/`map`/`transform`... call back into Python (the result: unknown)
_OWNERS: Final[dict[str, Type]] = dict.fromkeys(
    ("pandas.Series", T.BOOL_OWNER, "pandas.DataFrame", T.FRAME_GROUPS_OWNER),
    UNKNOWN,
) | {T.SERIES_GROUPS_OWNER: UNKNOWN}


def attribute(owner: Type) -> dict[str, Type] | None:
    """The attribute table of a Series or a frame."""
    if _series(owner):
        return T.SERIES_ATTRIBUTES
    if owner == T.FRAME:
        return T.FRAME_ATTRIBUTES
    if isinstance(owner, OpaqueType) and owner in (T.FRAME_GROUPS, T.SERIES_GROUPS):
        return {}
    return None


def subscript(ctx: SubscriptContext) -> Type | None:
    """`df["a"]` a Series, `df[["a", "b"]]` / `df[mask]` a frame, `s[mask]` a Series,
    `df.loc[mask]` a frame; `pd.Series[float]` / `pd.Series[bool]` annotations."""
    if ctx.in_annotation:
        if ctx.qualname not in ("pandas.Series", "pandas.core.series.Series"):
            return None
        element = ctx.index_names[0] if ctx.index_names else None
        return {"builtins.float": T.SERIES, "builtins.bool": T.BOOL_SERIES}.get(str(element))
    value, index = ctx.value, ctx.index
    key = index[0] if len(index) == 1 else UNKNOWN
    boolean = _series(key) and key.value.kind == "i1"
    if value == T.FRAME:
        if boolean or key == T.LIST:
            return T.FRAME
        return T.SERIES  # one column label
    if _series(value) and boolean:
        return value  # boolean indexing (the mask aligns on the index: pandas' rule)
    if value == T.FRAME_LOC and boolean:
        return T.FRAME
    if value == T.SERIES_LOC and boolean:
        return T.SERIES
    return None


__all__ = ["attribute", "binary", "call", "operator", "series_method", "subscript"]
