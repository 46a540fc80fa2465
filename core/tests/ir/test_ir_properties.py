"""Property tests: types, attribute values and random tensor functions survive
print -> parse -> print unchanged, and what verifies before verifies after."""

from __future__ import annotations

import math
import struct
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ppy_core.ir import (
    NONE,
    UNKNOWN,
    Block,
    ColumnType,
    OpaqueType,
    Operation,
    Region,
    ScalarType,
    TensorType,
    TupleType,
    Type,
    Value,
    core_registry,
    parse_ir,
    print_attribute,
    print_ir,
    verify,
)
from ppy_core.ir.dialects.builtin import ConstantOp, FuncOp, ModuleOp, ReturnOp
from ppy_core.ir.dialects.tensor import (
    BINARY_OPS,
    PREDICATES,
    REDUCTIONS,
    UNARY_FUNCTIONS,
    AbsOp,
    CastOp,
    CompareOp,
    KernelOp,
    NegOp,
    ReduceOp,
    SelectOp,
    UnaryOp,
    YieldOp,
)
from ppy_core.ir.types import SCALAR_KINDS

REGISTRY = core_registry()
SETTINGS = settings(max_examples=60, deadline=None)

# -- strategies ----------------------------------------------------------------
scalars = st.sampled_from(SCALAR_KINDS).map(ScalarType)
dims = st.one_of(st.none(), st.integers(0, 2**40), st.text(max_size=6))
tensors = st.builds(
    TensorType,
    scalars,
    st.none() | st.tuples() | st.lists(dims, max_size=4).map(tuple),
    st.sampled_from(["", "numpy", "torch"]) | st.text(max_size=5),
)
leaf_types = st.one_of(
    scalars,
    tensors,
    st.builds(ColumnType, scalars, st.booleans()),
    st.just(NONE),
    st.just(UNKNOWN),
    st.builds(OpaqueType, st.text(max_size=8)),
)
types = st.recursive(
    leaf_types,
    lambda inner: st.lists(inner, max_size=3).map(lambda ts: TupleType(tuple(ts))),
    max_leaves=6,
)

special_floats = st.sampled_from(
    [
        0.0,
        -0.0,
        math.inf,
        -math.inf,
        math.nan,
        -math.nan,
        5e-324,
        -5e-324,
        2.2250738585072014e-308,
        1.7976931348623157e308,
        1e16,
        1e-7,
        0.1,
        1 / 3,
    ]
)
nan_payloads = st.integers(1, 2**52 - 1).map(
    lambda m: struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000000 | m))[0]
)
floats = st.one_of(st.floats(), special_floats, nan_payloads)
leaf_attributes = st.one_of(
    st.none(),
    st.booleans(),
    st.integers() | st.integers(-(2**70), 2**70),
    floats,
    st.text(),
    st.sampled_from(['"', "\\", '\\"', "//", "é\u2028"]),
    types,
)
attributes = st.recursive(
    leaf_attributes,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(
            st.text(max_size=5) | st.sampled_from(["a", "op", "true", "_x1"]), inner, max_size=4
        ),
    ),
    max_leaves=12,
)


def canonical(value: Any) -> Any:
    """A form where equal means the same bits (NaN payloads, -0.0, True vs 1)."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, float):
        return ("f", struct.pack("<d", value))
    if isinstance(value, int | str | Type):
        return (type(value).__name__, value)
    if isinstance(value, tuple | list):
        return ("t", tuple(canonical(v) for v in value))
    return ("d", tuple((k, canonical(v)) for k, v in value.items()))


# -- types and attributes ------------------------------------------------------
@SETTINGS
@given(types)
def test_type_round_trips_through_a_signature(t: Type) -> None:
    func = FuncOp.build("f", [t], [t], ["a"])
    func.entry.append(ReturnOp([func.args[0]]))
    module = ModuleOp.empty()
    module.body.block.append(func)
    text = print_ir(module)
    again = parse_ir(text, REGISTRY)
    verify(again)
    assert again.body.block.ops[0].args[0].type == t
    assert print_ir(again) == text


@SETTINGS
@given(types)
def test_type_round_trips_as_an_attribute(t: Type) -> None:
    module = parse_ir(f"builtin.module {{t = {print_attribute(t)}}} {{\n}}\n", REGISTRY)
    assert module.attributes["t"] == t


@SETTINGS
@given(attributes)
def test_attribute_value_round_trips(value: Any) -> None:
    module = ModuleOp.empty({"v": value})
    text = print_ir(module)
    again = parse_ir(text, REGISTRY)
    assert canonical(again.attributes["v"]) == canonical(value)
    assert print_ir(again) == text


@SETTINGS
@given(st.dictionaries(st.text(max_size=6), attributes, max_size=4))
def test_attribute_dicts_round_trip_on_a_generic_op(attrs: dict[str, Any]) -> None:
    func = FuncOp.build("f", [], [])
    func.entry.append(ReturnOp([]))
    func.attributes.update({f"x{k}": v for k, v in attrs.items()})
    text = print_ir(func)
    again = parse_ir(text, REGISTRY)
    assert canonical(again.attributes) == canonical(func.attributes)
    assert print_ir(again) == text


# -- random tensor functions ---------------------------------------------------
ELEMENTS = ("f64", "f32", "i64")
NAMES = st.none() | st.sampled_from(["x", "y", "t0", "_", "a"])


def _shaped(like: Type, element: str) -> Type:
    if isinstance(like, TensorType):
        return TensorType(ScalarType(element), like.shape, like.library)
    return ScalarType(element)


def _element(t: Type) -> str:
    return (t.element if isinstance(t, TensorType) else t).kind  # type: ignore[union-attr]


def _draw_op(draw: st.DrawFn, pool: list[Value]) -> Operation | None:
    kind = draw(
        st.sampled_from(
            ["binary", "neg", "abs", "unary", "compare", "select", "reduce", "constant", "cast"]
        )
    )
    a, b = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
    like = a.type if isinstance(a.type, TensorType) else b.type
    if kind == "binary":
        return BINARY_OPS[draw(st.sampled_from(sorted(BINARY_OPS)))](
            [a, b], [_shaped(like, _element(a.type))]
        )
    if kind in ("neg", "abs", "cast"):
        out = _element(a.type) if kind != "cast" else draw(st.sampled_from(ELEMENTS))
        return {"neg": NegOp, "abs": AbsOp, "cast": CastOp}[kind]([a], [_shaped(a.type, out)])
    if kind == "unary":
        fn = draw(st.sampled_from(UNARY_FUNCTIONS))
        return UnaryOp([a], [a.type], {"op": fn})
    if kind == "compare":
        return CompareOp([a, b], [_shaped(like, "i1")], {"pred": draw(st.sampled_from(PREDICATES))})
    if kind == "select":
        conds = [v for v in pool if _element(v.type) == "i1"]
        if not conds:
            return None
        cond = draw(st.sampled_from(conds))
        like = next((v.type for v in (cond, a, b) if isinstance(v.type, TensorType)), a.type)
        return SelectOp([cond, a, b], [_shaped(like, _element(a.type))])
    if kind == "reduce":
        if not isinstance(a.type, TensorType):
            return None
        return ReduceOp(
            [a], [ScalarType(_element(a.type))], {"op": draw(st.sampled_from(REDUCTIONS))}
        )
    element = draw(st.sampled_from(ELEMENTS))
    value = draw(floats if element != "i64" else st.integers(-(2**63), 2**63 - 1))
    return ConstantOp([], [ScalarType(element)], {"value": value})


@st.composite
def tensor_functions(draw: st.DrawFn) -> ModuleOp:
    rank = draw(st.integers(0, 2))
    shape = tuple(draw(st.lists(st.sampled_from([None, 3, "n"]), min_size=rank, max_size=rank)))
    one_type = st.sampled_from((*ELEMENTS, "i1")).flatmap(
        lambda e: st.sampled_from([ScalarType(e), TensorType(ScalarType(e), shape)])
    )
    arg_types = draw(st.lists(one_type, min_size=1, max_size=4))
    func_args = [draw(NAMES) for _ in arg_types]
    in_kernel = draw(st.booleans())
    block = Block(arg_types, arg_names=[draw(NAMES) for _ in arg_types]) if in_kernel else None
    func = FuncOp.build("f", arg_types, [], func_args)
    body = block if block is not None else func.entry
    pool = list(body.args)
    for _ in range(draw(st.integers(1, 10))):
        op = _draw_op(draw, pool)
        if op is not None:
            for r in op.results:
                r.name_hint = draw(NAMES)
            pool.append(body.append(op).result)
    out = draw(st.sampled_from(pool[len(arg_types) :] or pool))
    if block is not None:
        block.append(YieldOp([out]))
        kernel = func.entry.append(KernelOp(func.args, [out.type], regions=[Region([block])]))
        out = kernel.result
    func.entry.append(ReturnOp([out]))
    func.attributes["result_types"] = (out.type,)
    module = ModuleOp.empty()
    module.body.block.append(func)
    return module


@settings(max_examples=80, deadline=None)
@given(tensor_functions())
def test_random_tensor_function_round_trips_and_verifies(module: ModuleOp) -> None:
    verify(module)
    text = print_ir(module)
    again = parse_ir(text, REGISTRY)
    verify(again)
    assert print_ir(again) == text
