"""Typing and naming: Arrow's classes as IR types with their representation
attributes, the curated pyarrow.compute surface onto columnar ops (by operand
types), the IO modules ending a site, `to_numpy`'s type."""

from __future__ import annotations

import pytest

from ppy_arrow import tables as T
from ppy_arrow.plugin import ArrowPlugin
from ppy_core.interface.plugin import NOT_CONSTANT, AttributeContext, CallContext
from ppy_core.ir.types import F64, I1, I64, UNKNOWN, ColumnType, OpaqueType, TensorType

PLUGIN = ArrowPlugin()
F, B, INT = T.F64_COLUMN, T.BOOL_COLUMN, T.I64_COLUMN


def converge(name: str, *args, constants=()):
    consts = tuple(constants) or (NOT_CONSTANT,) * len(args)
    return PLUGIN.tensor_operation(CallContext(f"pyarrow.compute.{name}", tuple(args), {}, consts))


def test_classes_are_typed_as_arrow() -> None:
    types = PLUGIN.external_types()
    assert types["pyarrow.Array"] == ColumnType(F64, True, "pyarrow")
    assert types["pyarrow.BooleanArray"] == ColumnType(I1, True, "pyarrow")
    for name in ("ChunkedArray", "Table", "RecordBatch", "Schema", "Field", "DataType"):
        assert types[f"pyarrow.{name}"] == OpaqueType(f"pyarrow.{name}")
    assert next(iter(types)) == "pyarrow.Array"  # methods are asked as pyarrow.Array.<m>


@pytest.mark.parametrize(
    ("owner", "name", "expected"),
    [
        (F, "null_count", I64),
        (F, "offset", I64),
        (F, "type", OpaqueType("pyarrow.DataType")),
        (OpaqueType("pyarrow.ChunkedArray"), "num_chunks", I64),
        (OpaqueType("pyarrow.ChunkedArray"), "chunks", OpaqueType("builtins.list")),
        (OpaqueType("pyarrow.Table"), "num_rows", I64),
        (OpaqueType("pyarrow.Table"), "schema", OpaqueType("pyarrow.Schema")),
        (OpaqueType("pyarrow.RecordBatch"), "num_rows", I64),
        (OpaqueType("pyarrow.Field"), "nullable", I1),
        (F, "no_such_attribute", None),
    ],
)
def test_representation_attributes(owner, name, expected) -> None:
    assert PLUGIN.instance_attribute(AttributeContext(name, owner_type=owner)) == expected


def test_buffers_and_to_numpy() -> None:
    answer = PLUGIN.call(CallContext("pyarrow.Array.buffers", (F,), {}, receiver=F))
    assert answer is not None
    assert answer.result == OpaqueType("builtins.list")
    answer = PLUGIN.call(CallContext("pyarrow.Array.to_numpy", (F,), {}, receiver=F))
    assert answer is not None
    assert answer.result == TensorType(F64, (None,), "numpy")


@pytest.mark.parametrize(
    ("name", "args", "op", "result"),
    [
        ("add", (F, F), "columnar.add", F),
        ("multiply_checked", (F, F64), "columnar.mul", F),
        ("divide", (INT, INT), "columnar.div", INT),  # named; int64 is left to Arrow
        ("greater", (F, F), "columnar.greater", B),
        ("and_kleene", (B, B), "columnar.and_kleene", B),
        ("or_", (B, B), "columnar.or", B),
        ("invert", (B,), "columnar.unary", B),
        ("is_null", (F,), "columnar.is_null", ColumnType(I1, False, "pyarrow")),
        ("if_else", (B, F, F), "columnar.select", F),
        ("fill_null", (F, I64), "columnar.fill_null", F),
        ("coalesce", (F, F, F64), "columnar.coalesce", F),
        ("sum", (F,), "columnar.reduce", OpaqueType("pyarrow.Scalar")),
        ("filter", (F, B), "columnar.filter", F),
        ("take", (F, INT), "columnar.take", F),
        ("sort_indices", (F,), "columnar.sort_indices", ColumnType(I64, False, "pyarrow")),
    ],
)
def test_compute_converges_onto_columnar(name, args, op, result) -> None:
    found = converge(name, *args)
    assert found is not None
    assert found.op == op
    assert found.result == result
    if name.endswith("_checked"):
        assert found.attributes["checked"] is True


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("add", (F, B)),  # a boolean in arithmetic: Arrow's business
        ("and_kleene", (B, F)),
        ("add", (F64, F64)),  # no column: not ours
        ("if_else", (F, F, F)),  # a float condition
        ("no_such_function", (F,)),
    ],
)
def test_what_does_not_converge(name, args) -> None:
    assert converge(name, *args) is None


def test_cast_needs_a_literal_target() -> None:
    found = converge("cast", F, UNKNOWN, constants=(NOT_CONSTANT, "int64"))
    assert found is not None
    assert found.attributes == {"to": "i64"}
    assert found.operands == (0,)
    assert converge("cast", F, UNKNOWN) is None


def test_null_scalars_and_huge_ints_are_left_to_arrow() -> None:
    assert converge("add", F, UNKNOWN, constants=(NOT_CONSTANT, None)) is None
    assert converge("add", F, I64, constants=(NOT_CONSTANT, 2**60)) is None


@pytest.mark.parametrize(
    "callee", ["pyarrow.parquet.read_table", "pyarrow.csv.read_csv", "pyarrow.dataset.dataset"]
)
def test_io_modules_carry_io(callee) -> None:
    answer = PLUGIN.call(CallContext(callee, (), {}))
    assert answer is not None
    assert answer.effects == frozenset({"IO"})


def test_io_call_never_sits_inside_a_site(project) -> None:
    from ppy_core.compiler.cached import compile_file, load_manifest

    path = project / "arrow_io.py"
    path.write_text(
        "import pyarrow as pa\nimport pyarrow.compute as pc\nimport pyarrow.parquet as pq\n\n"
        "def f(a: pa.Array, p: str):\n"
        "    return pc.add(pc.multiply(a, pq.read_table(p).num_rows), a)\n\n"
        "def g(a: pa.Array):\n"
        "    return pc.add(a, a)\n",
        encoding="utf-8",
    )
    manifest = load_manifest(compile_file(path).entry)
    texts = [site["text"] for site in manifest["expr_sites"]]
    assert texts == ["pc.add(a, a)"], texts  # f's tree holds an IO call: no site


def test_column_types_print_and_parse_back_with_their_library() -> None:
    from ppy_core.ir import core_registry, parse_ir, print_ir
    from ppy_core.ir.types import ColumnType

    text = (
        'func.func @s(%a: column<f64, nullable, "pyarrow">, %m: column<i1, "pyarrow">) '
        '-> (column<f64, nullable, "pyarrow">) {\n'
        "  %0 = columnar.select %m, %a, %a : "
        '(column<i1, "pyarrow">, column<f64, nullable, "pyarrow">, '
        'column<f64, nullable, "pyarrow">) -> column<f64, nullable, "pyarrow">\n'
        '  func.return %0 : (column<f64, nullable, "pyarrow">) -> ()\n'
        "}"
    )
    parsed = parse_ir(text, core_registry())
    again = print_ir(parsed)
    assert print_ir(parse_ir(again, core_registry())) == again
    func = parsed if hasattr(parsed, "body") else parsed.regions[0].block.ops[0]
    assert func.body.blocks[0].args[1].type == ColumnType(I1, False, "pyarrow")
