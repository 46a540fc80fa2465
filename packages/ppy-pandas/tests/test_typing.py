"""Typing and naming through the plugin's hooks: pandas' classes as IR types, Series
operators and methods onto columnar ops, frames/groups/indexers typed, IO and
callbacks marked, and what does not converge left to pandas."""

from __future__ import annotations

import pytest

from ppy_core.interface.plugin import (
    NOT_CONSTANT,
    AttributeContext,
    CallContext,
    OperatorContext,
    SubscriptContext,
)
from ppy_core.ir.types import F64, I1, I64, UNKNOWN, ColumnType, OpaqueType
from ppy_pandas import tables as T
from ppy_pandas.plugin import PandasPlugin

PLUGIN = PandasPlugin()
S, M = T.SERIES, T.BOOL_SERIES


def op(name, *operands, constants=()):
    consts = tuple(constants) or (NOT_CONSTANT,) * len(operands)
    return PLUGIN.operator(OperatorContext(name, tuple(operands), consts))


def method(name, *args, constants=(), owner="pandas.Series", **kwargs):
    consts = tuple(constants) or (NOT_CONSTANT,) * len(args)
    return CallContext(f"{owner}.{name}", tuple(args), kwargs, consts, receiver=args[0])


def test_classes_are_typed() -> None:
    types = PLUGIN.external_types()
    assert next(iter(types)) == "pandas.Series"  # methods are asked as pandas.Series.<m>
    assert types["pandas.Series"] == ColumnType(F64, True, "pandas")
    assert types[T.BOOL_OWNER] == ColumnType(I1, True, "pandas")
    assert types["pandas.DataFrame"] == OpaqueType("pandas.DataFrame")
    assert types["pandas.Index"] == OpaqueType("pandas.Index")
    assert types[T.FRAME_GROUPS_OWNER] == OpaqueType("pandas.DataFrameGroupBy")


@pytest.mark.parametrize(
    ("name", "operands", "constants", "expected"),
    [
        ("Add", (S, S), (), ("columnar.add", S)),
        ("Sub", (S, F64), (NOT_CONSTANT, 1.5), ("columnar.sub", S)),
        ("Mult", (I64, S), (2, NOT_CONSTANT), ("columnar.mul", S)),
        ("Div", (S, S), (), ("columnar.div", S)),
        ("Gt", (S, S), (), ("columnar.greater", M)),
        ("NotEq", (S, F64), (NOT_CONSTANT, 0.0), ("columnar.not_equal", M)),
        ("BitAnd", (M, M), (), ("columnar.and_kleene", M)),
        ("BitOr", (M, M), (), ("columnar.or_kleene", M)),
        ("BitXor", (M, M), (), ("columnar.xor", M)),
        ("USub", (S,), (), ("columnar.unary", S)),
        ("Invert", (M,), (), ("columnar.unary", M)),
    ],
)
def test_operators_converge(name, operands, constants, expected) -> None:
    found = op(name, *operands, constants=constants)
    assert (found.op, found.result) == expected
    if expected[0] in ("columnar.add", "columnar.sub", "columnar.mul", "columnar.div"):
        assert found.attributes == {"nan_null": True}  # pandas' Arrow NaN -> <NA> rule


@pytest.mark.parametrize(
    ("name", "operands", "constants"),
    [
        ("Add", (S, M), ()),  # bool arithmetic: pandas' own rules
        ("BitAnd", (S, S), ()),  # & of floats raises in pandas
        ("Mult", (S, I64), (NOT_CONSTANT, 2**60)),  # not exact in float64
        ("Add", (S, UNKNOWN), ()),
        ("Add", (F64, F64), ()),  # no Series
        ("Pow", (S, S), ()),
        ("Add", (S, OpaqueType("builtins.str")), (NOT_CONSTANT, "x")),
    ],
)
def test_operators_left_to_pandas(name, operands, constants) -> None:
    assert op(name, *operands, constants=constants) is None


@pytest.mark.parametrize(
    ("ctx", "expected"),
    [
        (method("fillna", S, I64, constants=(NOT_CONSTANT, 0)), ("columnar.fill_null", S)),
        (method("isna", S), ("columnar.is_null", M)),
        (method("notnull", S), ("columnar.is_valid", M)),
        (method("notna", M, owner=T.BOOL_OWNER), ("columnar.is_valid", M)),
        (method("abs", S), ("columnar.unary", S)),
        (method("mul", S, S), ("columnar.mul", S)),
        (method("rsub", S, F64), ("columnar.sub", S)),
        (method("ge", S, S), ("columnar.greater_equal", M)),
    ],
)
def test_methods_converge(ctx, expected) -> None:
    found = PLUGIN.tensor_operation(ctx)
    assert (found.op, found.result) == expected
    assert PLUGIN.call(ctx).result == expected[1]


def test_fillna_with_a_series_or_keyword_is_pandas() -> None:
    assert PLUGIN.tensor_operation(method("fillna", S, S)) is None  # aligns on the index
    assert PLUGIN.tensor_operation(method("fillna", S, F64, value=F64)) is None
    assert PLUGIN.call(method("fillna", S, S)).result == S


@pytest.mark.parametrize(
    ("owner", "name", "result"),
    [
        ("pandas.Series", "sum", T.SCALAR),
        ("pandas.Series", "count", I64),
        ("pandas.Series", "sort_values", S),
        ("pandas.Series", "astype", S),
        ("pandas.DataFrame", "merge", T.FRAME),
        ("pandas.DataFrame", "join", T.FRAME),
        ("pandas.DataFrame", "assign", T.FRAME),
        ("pandas.DataFrame", "sort_values", T.FRAME),
        ("pandas.DataFrame", "groupby", T.FRAME_GROUPS),
        ("pandas.DataFrame", "sum", S),
        (T.FRAME_GROUPS_OWNER, "sum", T.FRAME),
        (T.SERIES_GROUPS_OWNER, "mean", S),
    ],
)
def test_whole_column_and_frame_methods_typed(owner, name, result) -> None:
    answer = PLUGIN.call(CallContext(f"{owner}.{name}", (UNKNOWN,), {}))
    assert answer is not None
    assert answer.result == result
    assert answer.effects == frozenset({"Pure"})
    assert PLUGIN.tensor_operation(CallContext(f"{owner}.{name}", (S,), {})) is None


def test_module_functions() -> None:
    assert PLUGIN.call(CallContext("pandas.concat", (UNKNOWN,), {})).result == T.FRAME
    assert PLUGIN.call(CallContext("pandas.merge", (T.FRAME, T.FRAME), {})).result == T.FRAME


@pytest.mark.parametrize(
    "callee",
    [
        "pandas.read_csv",
        "pandas.read_parquet",
        "pandas.DataFrame.to_csv",
        "pandas.Series.to_parquet",
    ],
)
def test_io_ends_a_site(callee) -> None:
    assert PLUGIN.call(CallContext(callee, (), {})).effects == frozenset({"IO"})


@pytest.mark.parametrize("owner", ["pandas.Series", "pandas.DataFrame", T.FRAME_GROUPS_OWNER])
@pytest.mark.parametrize("name", ["apply", "map", "transform"])
def test_callbacks_end_a_site(owner, name) -> None:
    assert PLUGIN.call(CallContext(f"{owner}.{name}", (UNKNOWN,), {})).effects == frozenset(
        {"Callback"}
    )


def test_to_numpy_is_not_io() -> None:
    assert PLUGIN.call(CallContext("pandas.Series.to_numpy", (S,), {})).effects == frozenset(
        {"Pure"}
    )


@pytest.mark.parametrize(
    ("value", "index", "expected"),
    [
        (T.FRAME, OpaqueType("builtins.str"), S),  # df["a"]
        (T.FRAME, OpaqueType("builtins.list"), T.FRAME),  # df[["a", "b"]]
        (T.FRAME, M, T.FRAME),  # df[mask]
        (S, M, S),  # s[mask]
        (T.FRAME_LOC, M, T.FRAME),  # df.loc[mask]
        (T.SERIES_LOC, M, S),  # s.loc[mask]
        (T.SERIES_LOC, I64, None),  # s.loc[label]: a scalar, pandas' business
    ],
)
def test_subscripts(value, index, expected) -> None:
    assert PLUGIN.subscript(SubscriptContext(value, (index,))) == expected


def test_annotations() -> None:
    ctx = SubscriptContext(
        None, qualname="pandas.Series", index_names=("builtins.bool",), in_annotation=True
    )
    assert PLUGIN.subscript(ctx) == M
    ctx = SubscriptContext(
        None, qualname="pandas.Series", index_names=("builtins.float",), in_annotation=True
    )
    assert PLUGIN.subscript(ctx) == S


@pytest.mark.parametrize(
    ("owner", "name", "expected"),
    [
        (S, "index", T.INDEX),
        (S, "loc", T.SERIES_LOC),
        (T.FRAME, "iloc", T.FRAME_LOC),
        (T.FRAME, "columns", T.INDEX),
        (S, "size", I64),
        (S, "nope", None),
    ],
)
def test_attributes(owner, name, expected) -> None:
    assert PLUGIN.instance_attribute(AttributeContext(name, owner_type=owner)) == expected
