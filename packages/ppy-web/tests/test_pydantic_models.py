"""pydantic models typed from source: Field constraints as integer ranges in every
spelling, the constructor apart from the validated output, and construction with
constants judged as pydantic judges it (checked against pydantic itself)."""

from __future__ import annotations

import ast
import types
from pathlib import Path
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.typer import Typer
from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.hooks import HookCaller
from ppy_core.interface.plugin import NOT_CONSTANT, AttributeContext, CallContext
from ppy_core.ir.types import F64, I64, UNKNOWN, OpaqueType, RangeType
from ppy_core.project.scope import scan_module
from ppy_web.models import STR
from ppy_web.pydantic_plugin import PydanticPlugin

SOURCE = """\
from typing import Annotated, ClassVar

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, conint


class Spellings(BaseModel):
    a: Annotated[int, Field(ge=0, le=100)]
    b: int = Field(ge=0, le=100)
    c: int = Field(gt=0, lt=10)
    d: conint(ge=-5, lt=5)
    e: Annotated[int, annotated_types.Ge(3)]
    f: PositiveInt
    g: Annotated[int, Field(ge=0)] = Field(le=7, default=1)
    h: int = Field(gt=0.0, lt=3.0)
    plain: int = 0
    ratio: float = Field(ge=0.0, le=1.0, default=0.5)
    label: str = "x"
    limit: ClassVar[int] = 3


class Order(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    count: int = Field(ge=0, le=100, alias="n")
    sku: str
    note: str = Field(default="", validation_alias="memo")


class StrictOrder(Order):
    model_config = ConfigDict(strict=True, extra="forbid")
    priority: Annotated[int, Field(ge=1, le=3)] = 1
"""

RANGES = {
    "a": (0, 100),
    "b": (0, 100),
    "c": (1, 9),
    "d": (-5, 4),
    "e": (3, None),
    "f": (1, None),
    "g": (0, 7),
    "h": (1, 2),
}


@pytest.fixture(scope="module")
def learned() -> tuple[PydanticPlugin, types.ModuleType]:
    tree = ast.parse(SOURCE)
    plugin = PydanticPlugin()
    plugin.learn(tree, "shop", scan_module(tree, Path("shop.py")).imports)
    module = types.ModuleType("shop")
    exec(compile(SOURCE, "shop.py", "exec", dont_inherit=True), module.__dict__)
    return plugin, module


def attribute(plugin: PydanticPlugin, model: str, name: str) -> Any:
    return plugin.instance_attribute(AttributeContext(name, owner_type=OpaqueType(model)))


@pytest.mark.parametrize("field", sorted(RANGES))
def test_every_spelling_is_an_integer_range(learned: Any, field: str) -> None:
    plugin, module = learned
    lo, hi = RANGES[field]
    assert attribute(plugin, "shop.Spellings", field) == RangeType(I64, lo, hi)
    # pydantic's own verdict on every integer around the bounds agrees with the range
    ok = dict.fromkeys(RANGES, 1) | {"f": 1, "e": 3, "d": 0, "h": 1}
    for value in range(-12, 120):
        args = ok | {field: value}
        try:
            module.Spellings(**args)
            accepted = True
        except pydantic.ValidationError:
            accepted = False
        assert accepted == RangeType(I64, lo, hi).contains(value), (field, value)


def test_unconstrained_fields_keep_their_types(learned: Any) -> None:
    plugin, _ = learned
    assert attribute(plugin, "shop.Spellings", "plain") == I64
    assert attribute(plugin, "shop.Spellings", "ratio") == F64  # no integer range on floats
    assert attribute(plugin, "shop.Spellings", "label") == STR
    assert attribute(plugin, "shop.Spellings", "limit") is None  # ClassVar: not a field
    assert attribute(plugin, "shop.Spellings", "nope") is None


def test_constructor_is_distinct_from_output(learned: Any) -> None:
    plugin, module = learned
    model = plugin.models["shop.Order"]
    # output: attribute names, refined types
    assert model.output() == {"count": RangeType(I64, 0, 100), "sku": STR, "note": STR}
    # constructor: the alias (and the name, populate_by_name), required-ness, laxness
    ctor = {p.keyword: (p.field, p.required, p.strict) for p in model.constructor()}
    assert ctor == {
        "n": ("count", True, False),
        "count": ("count", True, False),
        "sku": ("sku", True, False),
        "memo": ("note", False, False),
        "note": ("note", False, False),
    }
    # pydantic agrees: the alias builds, the output has the field's name, lax coerces
    built = module.Order(n="7", sku="a", memo="m")
    assert (built.count, built.note) == (7, "m")
    assert module.Order(count=7, sku="a", note="x").note == "x"
    strict = {p.keyword: p.strict for p in plugin.models["shop.StrictOrder"].constructor()}
    assert strict["n"]
    assert strict["priority"]
    # the inherited fields come first, then the subclass's; config merges with the base's
    assert list(plugin.models["shop.StrictOrder"].output()) == ["count", "sku", "note", "priority"]
    assert plugin.models["shop.StrictOrder"].populate_by_name
    assert module.StrictOrder(count=1, sku="a").count == 1


def call(plugin: PydanticPlugin, callee: str, **kw: Any) -> tuple[Any, list[Diagnostic]]:
    seen: list[Diagnostic] = []
    ctx = CallContext(
        callee,
        (),
        dict.fromkeys(kw, I64),
        kw_constants=dict(kw.items()),
        report=seen.append,
    )
    return plugin.call(ctx), seen


def test_construction_with_constants(learned: Any) -> None:
    plugin, _ = learned
    answer, seen = call(plugin, "shop.Order", n=5, sku="a")
    assert answer.result == OpaqueType("shop.Order")
    assert seen == []
    assert "Callback" in answer.effects  # validators may be the user's code
    _, seen = call(plugin, "shop.Order", n=-1, sku="a")
    assert [d.code for d in seen] == ["E1050"]
    assert "shop.Order" not in seen[0].message
    assert "Order(n=-1)" in seen[0].message
    assert "i64{0..100}" in seen[0].message
    assert seen[0].hint
    _, seen = call(plugin, "shop.Order", n="101", sku="a")  # lax: the text is the int 101
    assert [d.code for d in seen] == ["E1050"]
    _, seen = call(plugin, "shop.Order", n=1, sku="a", colour="red")
    assert [d.code for d in seen] == ["E1051"]  # extra="forbid"
    _, seen = call(plugin, "shop.Order", sku="a")
    assert [d.code for d in seen] == ["E1052"]
    assert "n" in seen[0].message
    _, seen = call(plugin, "shop.StrictOrder", n="5", sku="a")
    assert [d.code for d in seen] == ["E1053"]
    _, seen = call(plugin, "shop.StrictOrder", n=True, sku="a")  # strict: a bool is no int
    assert [d.code for d in seen] == ["E1053"]
    _, seen = call(plugin, "shop.StrictOrder", n=2, sku="a", priority=4)
    assert [d.code for d in seen] == ["E1050"]
    assert call(plugin, "shop.Unknown", n=1) == (None, [])


CONSTANTS = st.one_of(
    st.integers(-300, 300),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-300, 300).map(str),
    st.text(max_size=4),
    st.just(-0.0),
    st.just(5e-324),
    st.just(1e300),
)


@settings(max_examples=300, deadline=None)
@given(
    model=st.sampled_from(["shop.Order", "shop.StrictOrder"]),
    n=CONSTANTS,
    priority=st.one_of(st.none(), CONSTANTS),
    extra=st.booleans(),
)
def test_a_report_means_pydantic_refuses(
    learned: Any, model: str, n: Any, priority: Any, extra: bool
) -> None:
    """Every report is a ValidationError pydantic raises; and an int out of range, or
    of the wrong type under strict, is always reported (no false silence there)."""
    plugin, module = learned
    kw: dict[str, Any] = {"n": n, "sku": "a"}
    if priority is not None and model == "shop.StrictOrder":
        kw["priority"] = priority
    if extra:
        kw["colour"] = "red"
    _, seen = call(plugin, model, **kw)
    try:
        getattr(module, model.rpartition(".")[2])(**kw)
        refused = False
    except pydantic.ValidationError:
        refused = True
    if seen:
        assert refused, (kw, seen)
    strict = model == "shop.StrictOrder"
    ints = [v for v in kw.values() if isinstance(v, int) and not isinstance(v, bool)]
    if refused and (extra or (len(ints) == len(kw) - 1 and not isinstance(n, bool) and strict)):
        assert seen, kw


def test_not_constant_arguments_are_not_judged(learned: Any) -> None:
    plugin, _ = learned
    ctx = CallContext(
        "shop.Order", (), {"n": I64, "sku": STR}, kw_constants={"n": NOT_CONSTANT, "sku": "a"}
    )
    seen: list[Diagnostic] = []
    ctx = CallContext(ctx.callee, (), ctx.kwargs, kw_constants=ctx.kw_constants, report=seen.append)
    assert plugin.call(ctx) is not None
    assert seen == []


def test_positional_arguments_are_refused(learned: Any) -> None:
    plugin, module = learned
    seen: list[Diagnostic] = []
    ctx = CallContext("shop.Order", (I64,), {}, constants=(1,), report=seen.append)
    plugin.call(ctx)
    assert [d.code for d in seen] == ["E1051", "E1052"]
    with pytest.raises(TypeError):
        module.Order(1)


def test_the_core_typer_reads_the_refinement(learned: Any) -> None:
    """Through the core's typer: `order.count` where `order: Order` is the range."""
    plugin, _ = learned
    oracle = Oracle(HookCaller([plugin], claims={"pydantic": "pydantic"}))
    typer = Typer(oracle, {"Order": "shop.Order"}, "shop.py")
    order = typer.annotation(ast.parse("Order", mode="eval").body)
    assert order == OpaqueType("shop.Order")
    typer.env["order"] = order
    count = typer.expr(ast.parse("order.count", mode="eval").body, {})
    assert count == RangeType(I64, 0, 100)
    assert count.text() == "i64{0..100}"
    built = typer.expr(ast.parse("Order(n=3, sku='a')", mode="eval").body, {})
    assert built == OpaqueType("shop.Order")
    assert typer.expr(ast.parse("order.missing", mode="eval").body, {}) == UNKNOWN


def test_model_methods_are_typed(learned: Any) -> None:
    plugin, module = learned
    for method, expected in [
        ("model_validate", OpaqueType("shop.Order")),
        ("model_copy", OpaqueType("shop.Order")),
        ("model_dump", OpaqueType("builtins.dict")),
        ("model_dump_json", STR),
        ("model_json_schema", OpaqueType("builtins.dict")),
    ]:
        answer = plugin.call(CallContext(f"shop.Order.{method}", (), {}))
        assert answer is not None
        assert answer.result == expected, method
    order = module.Order(n=1, sku="ab")
    assert type(order.model_dump()) is dict
    assert type(order.model_dump_json()) is str
    assert type(order.model_copy()) is module.Order
