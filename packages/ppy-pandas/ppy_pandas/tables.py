"""The tables the `pandas` plugin reads: pandas' classes as IR types, Series operators
and methods as the columnar ops `pyarrow.compute` names, what frames and groups give,
and the calls that do IO or call back.

Plain data; imports no pandas.
"""

from __future__ import annotations

from typing import Final

from ppy_core.ir.types import F64, I1, I64, ColumnType, OpaqueType, ScalarType, Type

LIBRARY: Final = "pandas"
#: A `Series` annotation is taken as float64, the type the kernels fuse; the run-time
#: guard checks the dtype (float64 or double[pyarrow]) and anything else runs pandas.
SERIES: Final = ColumnType(F64, True, LIBRARY)
BOOL_SERIES: Final = ColumnType(I1, True, LIBRARY)


def opaque(name: str) -> OpaqueType:
    """A pandas object the IR does not look inside (a frame, an index, a group)."""
    return OpaqueType(f"pandas.{name}")


FRAME: Final = opaque("DataFrame")
INDEX: Final = opaque("Index")
FRAME_GROUPS: Final = opaque("DataFrameGroupBy")
SERIES_GROUPS: Final = opaque("SeriesGroupBy")
SERIES_LOC: Final = opaque("SeriesIndexer")  # s.loc / s.iloc
FRAME_LOC: Final = opaque("FrameIndexer")  # df.loc / df.iloc
SCALAR: Final = opaque("Scalar")  # an aggregation's answer: a NumPy or Arrow scalar
LIST: Final = OpaqueType("builtins.list")

FRAME_GROUPS_OWNER: Final = "pandas.api.typing.DataFrameGroupBy"
SERIES_GROUPS_OWNER: Final = "pandas.api.typing.SeriesGroupBy"
BOOL_OWNER: Final = "pandas.Series[bool]"
#: `pandas.Series` comes first: methods of a Series are asked as `pandas.Series.<m>`.
EXTERNAL_TYPES: Final[dict[str, Type]] = {
    "pandas.Series": SERIES,
    "pandas.core.series.Series": SERIES,
    # not a class name: methods of a boolean Series are asked as `pandas.Series[bool].m`
    BOOL_OWNER: BOOL_SERIES,
    "pandas.DataFrame": FRAME,
    "pandas.core.frame.DataFrame": FRAME,
    "pandas.Index": INDEX,
    "pandas.RangeIndex": INDEX,
    # first: methods of a group are asked as `pandas.api.typing.DataFrameGroupBy.m`
    FRAME_GROUPS_OWNER: FRAME_GROUPS,
    "pandas.core.groupby.DataFrameGroupBy": FRAME_GROUPS,
    SERIES_GROUPS_OWNER: SERIES_GROUPS,
    "pandas.core.groupby.SeriesGroupBy": SERIES_GROUPS,
}

# -- Series operators and methods -> columnar ops (pyarrow.compute's names) -------------
#: Python operator (ast class name) -> columnar op; `&`/`|` are Kleene, as pandas'
#: Arrow-backed `and_kleene`/`or_kleene` (on NumPy bools, which hold no nulls, the same)
ARITHMETIC: Final = {"Add": "add", "Sub": "sub", "Mult": "mul", "Div": "div"}
COMPARISON: Final = {
    "Gt": "greater",
    "GtE": "greater_equal",
    "Lt": "less",
    "LtE": "less_equal",
    "Eq": "equal",
    "NotEq": "not_equal",
}
LOGICAL: Final = {"BitAnd": "and_kleene", "BitOr": "or_kleene", "BitXor": "xor"}
#: Series methods of one operand that are columnar ops
NULL_TESTS: Final = {
    "isna": "columnar.is_null",
    "isnull": "columnar.is_null",
    "notna": "columnar.is_valid",
    "notnull": "columnar.is_valid",
}
#: Series methods of one operand that are elementwise: name -> columnar.unary op
UNARY_METHODS: Final = {"abs": "abs"}
#: Series methods spelling an operator: name -> (columnar op, operands reversed)
METHOD_OPERATORS: Final[dict[str, tuple[str, bool]]] = {
    "add": ("add", False),
    "sub": ("sub", False),
    "mul": ("mul", False),
    "truediv": ("div", False),
    "div": ("div", False),
    "radd": ("add", True),
    "rsub": ("sub", True),
    "rmul": ("mul", True),
    "rtruediv": ("div", True),
    "gt": ("greater", False),
    "ge": ("greater_equal", False),
    "lt": ("less", False),
    "le": ("less_equal", False),
    "eq": ("equal", False),
    "ne": ("not_equal", False),
}

#: whole-Series methods, typed and left to pandas, with the pyarrow.compute function
#: each is (the name `ppy explain` shows); they do not converge: their index and
#: dtype rules are pandas' own, and an elementwise tree under them still fuses
SERIES_METHODS: Final[dict[str, tuple[str, Type]]] = {
    "sort_values": ("sort_indices+take", SERIES),
    "sort_index": ("sort_indices+take", SERIES),
    "astype": ("cast", SERIES),
    "copy": ("copy", SERIES),
    "sum": ("sum", SCALAR),
    "mean": ("mean", SCALAR),
    "min": ("min", SCALAR),
    "max": ("max", SCALAR),
    "count": ("count", I64),
    "std": ("stddev", SCALAR),
    "var": ("variance", SCALAR),
    "median": ("approximate_median", SCALAR),
    "cumsum": ("cumulative_sum", SERIES),
    "unique": ("unique", OpaqueType("numpy.ndarray")),
    "value_counts": ("value_counts", SERIES),
    "dropna": ("drop_null", SERIES),
    "to_numpy": ("to_numpy", OpaqueType("numpy.ndarray")),
    "groupby": ("group_by", SERIES_GROUPS),
}
#: DataFrame methods: name -> (Arrow's name for the operation, result type)
FRAME_METHODS: Final[dict[str, tuple[str, Type]]] = {
    "assign": ("append_column", FRAME),
    "sort_values": ("sort_indices+take", FRAME),
    "fillna": ("fill_null", FRAME),
    "isna": ("is_null", FRAME),
    "notna": ("is_valid", FRAME),
    "astype": ("cast", FRAME),
    "merge": ("Table.join", FRAME),
    "join": ("Table.join", FRAME),
    "groupby": ("Table.group_by", FRAME_GROUPS),
    "sum": ("sum", SERIES),
    "mean": ("mean", SERIES),
    "min": ("min", SERIES),
    "max": ("max", SERIES),
    "count": ("count", SERIES),
    "dropna": ("drop_null", FRAME),
    "head": ("slice", FRAME),
    "copy": ("copy", FRAME),
    "eval": ("expression", SERIES),
}
#: grouped aggregation: TableGroupBy.aggregate's hash_* kernels
GROUP_METHODS: Final[dict[str, tuple[str, Type]]] = {
    name: (f"hash_{arrow}", FRAME)
    for name, arrow in (
        ("sum", "sum"),
        ("mean", "mean"),
        ("min", "min"),
        ("max", "max"),
        ("count", "count"),
        ("size", "count_all"),
    )
}
#: module functions: name -> (Arrow's name, result type)
FUNCTIONS: Final[dict[str, tuple[str, Type]]] = {
    "pandas.concat": ("concat_tables", FRAME),
    "pandas.merge": ("Table.join", FRAME),
    "pandas.isna": ("is_null", BOOL_SERIES),
    "pandas.notna": ("is_valid", BOOL_SERIES),
    "pandas.Series": ("array", SERIES),
    "pandas.DataFrame": ("table", FRAME),
}
#: methods that run a Python callable per element, row or group
CALLBACKS: Final = frozenset({"apply", "map", "transform", "agg", "aggregate", "pipe", "applymap"})
#: attributes of a Series / frame
SERIES_ATTRIBUTES: Final[dict[str, Type]] = {
    "index": INDEX,
    "name": OpaqueType("builtins.object"),
    "dtype": opaque("Dtype"),
    "size": I64,
    "array": opaque("ExtensionArray"),
    "values": opaque("ArrayLike"),
    "loc": SERIES_LOC,
    "iloc": SERIES_LOC,
    "hasnans": I1,
}
FRAME_ATTRIBUTES: Final[dict[str, Type]] = {
    "index": INDEX,
    "columns": INDEX,
    "dtypes": SERIES,
    "shape": OpaqueType("builtins.tuple"),
    "size": I64,
    "loc": FRAME_LOC,
    "iloc": FRAME_LOC,
}


def is_io(callee: str) -> bool:
    """`pandas.read_*` and any `.to_*` writer (to_csv, to_parquet, ...) read or write
    files (`to_numpy`/`to_list` do not)."""
    if callee.startswith("pandas.read_"):
        return True
    owner, _, method = callee.rpartition(".")
    return (
        owner.startswith("pandas.")
        and method.startswith("to_")
        and method
        not in (
            "to_numpy",
            "to_list",
            "to_dict",
            "to_frame",
        )
    )


def value_kind(t: Type) -> str | None:
    """'f64' or 'i1' for a pandas Series or a number/bool scalar, None otherwise."""
    if isinstance(t, ColumnType) and t.library == LIBRARY:
        return t.value.kind
    if isinstance(t, ScalarType) and t.kind in ("f64", "i64"):
        return "f64"
    if isinstance(t, ScalarType) and t.kind == "i1":
        return "i1"
    return None


__all__ = [
    "ARITHMETIC",
    "BOOL_SERIES",
    "CALLBACKS",
    "COMPARISON",
    "EXTERNAL_TYPES",
    "FRAME",
    "FRAME_LOC",
    "SERIES_LOC",
    "FRAME_METHODS",
    "FUNCTIONS",
    "GROUP_METHODS",
    "LIBRARY",
    "LOGICAL",
    "METHOD_OPERATORS",
    "NULL_TESTS",
    "UNARY_METHODS",
    "SERIES",
    "SERIES_METHODS",
    "is_io",
    "value_kind",
]
