"""The tables the `pyarrow` plugin reads: Arrow's classes as IR types, the curated
`pyarrow.compute` surface as columnar ops, and the modules that do IO.

Plain data; imports no PyArrow.
"""

from __future__ import annotations

from typing import Final

from ppy_core.ir.types import F64, I1, I64, ColumnType, OpaqueType, ScalarType, Type

LIBRARY: Final = "pyarrow"
F64_COLUMN: Final = ColumnType(F64, True, LIBRARY)
BOOL_COLUMN: Final = ColumnType(I1, True, LIBRARY)
I64_COLUMN: Final = ColumnType(I64, True, LIBRARY)


def opaque(name: str) -> OpaqueType:
    """An Arrow object the IR does not look inside (a table, a schema, ...)."""
    return OpaqueType(f"pyarrow.{name}")


#: Arrow's classes. `pyarrow.Array` comes first: methods of a column are asked as
#: `pyarrow.Array.<method>`. An `Array` annotation is taken as float64, the type the
#: kernels fuse; the run-time guard checks it and any other array runs pyarrow.
EXTERNAL_TYPES: Final[dict[str, Type]] = {
    "pyarrow.Array": F64_COLUMN,
    "pyarrow.DoubleArray": F64_COLUMN,
    "pyarrow.FloatingPointArray": F64_COLUMN,
    "pyarrow.lib.Array": F64_COLUMN,
    "pyarrow.lib.DoubleArray": F64_COLUMN,
    "pyarrow.BooleanArray": BOOL_COLUMN,
    "pyarrow.lib.BooleanArray": BOOL_COLUMN,
    "pyarrow.Int64Array": I64_COLUMN,
    "pyarrow.lib.Int64Array": I64_COLUMN,
    **{
        f"pyarrow.{name}": opaque(name)
        for name in (
            "ChunkedArray",
            "Table",
            "RecordBatch",
            "Schema",
            "Field",
            "DataType",
            "Buffer",
            "Scalar",
        )
    },
}

#: representation attributes, by the class they are asked on
COLUMN_ATTRIBUTES: Final[dict[str, Type]] = {
    "null_count": I64,
    "offset": I64,
    "nbytes": I64,
    "type": opaque("DataType"),
}
OPAQUE_ATTRIBUTES: Final[dict[str, dict[str, Type]]] = {
    "pyarrow.ChunkedArray": {
        "null_count": I64,
        "num_chunks": I64,
        "nbytes": I64,
        "chunks": OpaqueType("builtins.list"),
        "type": opaque("DataType"),
    },
    "pyarrow.Table": {
        "num_rows": I64,
        "num_columns": I64,
        "nbytes": I64,
        "schema": opaque("Schema"),
        "columns": OpaqueType("builtins.list"),
        "column_names": OpaqueType("builtins.list"),
    },
    "pyarrow.RecordBatch": {
        "num_rows": I64,
        "num_columns": I64,
        "nbytes": I64,
        "schema": opaque("Schema"),
        "columns": OpaqueType("builtins.list"),
    },
    "pyarrow.Schema": {"names": OpaqueType("builtins.list"), "types": OpaqueType("builtins.list")},
    "pyarrow.Field": {
        "name": OpaqueType("builtins.str"),
        "type": opaque("DataType"),
        "nullable": I1,
    },
    "pyarrow.DataType": {"bit_width": I64, "num_fields": I64},
    "pyarrow.Buffer": {"size": I64, "address": I64, "is_cpu": I1, "is_mutable": I1},
    "pyarrow.Scalar": {"is_valid": I1, "type": opaque("DataType")},
}

#: methods of a column: name -> result type
COLUMN_METHODS: Final[dict[str, Type]] = {
    "buffers": OpaqueType("builtins.list"),
    "is_null": BOOL_COLUMN,
    "is_valid": BOOL_COLUMN,
    "slice": F64_COLUMN,
    "to_pylist": OpaqueType("builtins.list"),
}

# -- pyarrow.compute -> columnar ----------------------------------------------------------
ARITHMETIC: Final = {
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
}
CHECKED: Final = {f"{name}_checked": op for name, op in ARITHMETIC.items()}
COMPARISON: Final = {
    n: n for n in ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal")
}
LOGICAL: Final = {
    "and_": "and",
    "or_": "or",
    "xor": "xor",
    "and_kleene": "and_kleene",
    "or_kleene": "or_kleene",
}
UNARY: Final = {"negate": "neg", "abs": "abs", "invert": "invert"}
UNARY_CHECKED: Final = {"negate_checked": "neg", "abs_checked": "abs"}
NULL_TESTS: Final = {"is_null": "columnar.is_null", "is_valid": "columnar.is_valid"}
REDUCTIONS: Final = {"sum": "sum", "mean": "mean", "min": "min", "max": "max", "count": "count"}
#: whole-column ops: named as columnar ops, left to Arrow (no fused kernel)
WHOLE_COLUMN: Final = {
    "filter": "columnar.filter",
    "take": "columnar.take",
    "sort_indices": "columnar.sort_indices",
    "cast": "columnar.cast",
}

#: modules whose calls read or write files: they carry IO and end a site
IO_MODULES: Final = ("pyarrow.parquet", "pyarrow.dataset", "pyarrow.csv", "pyarrow.feather")


def value_kind(t: Type) -> str | None:
    """'f64', 'i1' or 'i64' for an Arrow column or scalar, None for anything else."""
    if isinstance(t, ColumnType) and t.library == LIBRARY:
        return t.value.kind
    if isinstance(t, ScalarType) and t.kind in ("f64", "i64", "i1"):
        return t.kind
    return None


__all__ = [
    "ARITHMETIC",
    "BOOL_COLUMN",
    "CHECKED",
    "COLUMN_ATTRIBUTES",
    "COLUMN_METHODS",
    "COMPARISON",
    "EXTERNAL_TYPES",
    "F64_COLUMN",
    "I64_COLUMN",
    "IO_MODULES",
    "LIBRARY",
    "LOGICAL",
    "NULL_TESTS",
    "OPAQUE_ATTRIBUTES",
    "REDUCTIONS",
    "UNARY",
    "UNARY_CHECKED",
    "WHOLE_COLUMN",
    "value_kind",
]
