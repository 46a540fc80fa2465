"""The pluggy-backed hook caller: first answers, collected registrations, E1900."""

from __future__ import annotations

import ast
import inspect
import time
from dataclasses import replace
from typing import Any

import pytest

from ppy_core.diagnostics import Diagnostic, InternalError, Location
from ppy_core.interface.hooks import ANSWER_HOOKS, COLLECT_HOOKS, HookCaller
from ppy_core.interface.plugin import (
    HOOK_NAMES,
    AttributeContext,
    CallAnswer,
    CallContext,
    Converge,
    FunctionContext,
    ModuleContext,
    OperatorContext,
    Plugin,
    SubscriptContext,
)
from ppy_core.ir.types import F64, I64, OpaqueType, TensorType, TupleType


class Alpha(Plugin):
    name = "alpha"
    modules = ("alpha",)

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        if ctx.callee == "alpha.sin":
            return Converge("tensor.unary", F64, {"op": "sin"})
        return None

    def register_passes(self) -> list[str]:
        return ["alpha-pass"]

    def external_types(self) -> dict[str, Any]:
        return {"alpha.Array": F64}


class Beta(Plugin):
    name = "beta"
    modules = ("beta",)

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        return Converge("tensor.unary", I64, {"op": "beta"})

    def operator(self, ctx: OperatorContext) -> Any:
        raise ZeroDivisionError("beta cannot")


class Silent(Plugin):
    name = "silent"


def _ctx(callee: str, location: Location | None = None) -> CallContext:
    return CallContext(callee, (F64,), {}, location=location)


def test_hooks_are_split_into_answers_and_collections() -> None:
    assert set(HOOK_NAMES) == ANSWER_HOOKS | COLLECT_HOOKS
    assert {
        "external_types",
        "register_dialects",
        "register_passes",
        "register_patterns",
        "register_lowerings",
    } <= COLLECT_HOOKS
    assert {"call", "operator", "tensor_operation", "stage", "subscript"} <= ANSWER_HOOKS
    for name in COLLECT_HOOKS:  # a declaration takes no context; a question takes one
        assert "ctx" not in inspect.signature(getattr(Plugin, name)).parameters, name


def test_the_claimant_answers_its_module_whatever_the_plugin_order() -> None:
    # beta answers every tensor_operation and sorts first in the second caller: it must
    # still not answer for alpha's module while alpha has an answer
    for plugins in ([Alpha(), Beta()], [Beta(), Alpha()]):
        hooks = HookCaller(plugins)
        assert hooks.first("tensor_operation", _ctx("alpha.sin")).attributes == {"op": "sin"}


def test_others_are_asked_only_where_the_claimant_has_no_answer() -> None:
    hooks = HookCaller([Beta(), Alpha()])
    assert hooks.first("tensor_operation", _ctx("alpha.cos")).attributes == {"op": "beta"}
    # a question naming no claimed module goes to every plugin, in the order given
    assert hooks.first("tensor_operation", _ctx("other.sin")).attributes == {"op": "beta"}


def test_unanswered_hook_is_none() -> None:
    hooks = HookCaller([Alpha(), Silent()])
    assert hooks.first("call", _ctx("alpha.sin")) is None
    assert HookCaller([]).first("stage", _ctx("x")) is None


def test_collect_returns_non_empty_answers_with_their_plugin() -> None:
    hooks = HookCaller([Alpha(), Beta(), Silent()])
    assert hooks.collect("register_passes") == [("alpha", ["alpha-pass"])]
    assert hooks.collect("external_types") == [("alpha", {"alpha.Array": F64})]
    assert hooks.collect("register_dialects") == []


def test_raising_hook_is_E1900_naming_plugin_and_hook_and_counts_as_none() -> None:
    reported: list[Diagnostic] = []
    hooks = HookCaller([Beta(), Alpha()], report=reported.append)
    where = Location("model.ppy", 3, 7)
    assert hooks.first("operator", OperatorContext("Add", (F64, F64), location=where)) is None
    assert hooks.first("operator", OperatorContext("Add", (F64, F64), location=where)) is None
    assert len(hooks.diagnostics) == 1  # the same failure at the same place is said once
    diagnostic = hooks.diagnostics[0]
    assert reported == [diagnostic]
    assert diagnostic.code == "E1900"
    assert "plugin 'beta'" in diagnostic.message
    assert "hook operator" in diagnostic.message
    assert "ZeroDivisionError: beta cannot" in diagnostic.message
    assert diagnostic.location == where


def test_a_raising_plugin_does_not_stop_the_next_one() -> None:
    class Raiser(Plugin):
        name = "raiser"

        def tensor_operation(self, ctx: CallContext) -> Converge | None:
            raise KeyError(ctx.callee)

        def register_passes(self) -> list[str]:
            raise ValueError("no passes today")

    hooks = HookCaller([Raiser(), Alpha()])
    assert hooks.first("tensor_operation", _ctx("alpha.sin")) is not None  # alpha's, first
    assert hooks.first("tensor_operation", _ctx("alpha.cos")) is None  # then the raiser's
    assert hooks.collect("register_passes") == [("alpha", ["alpha-pass"])]
    assert [d.code for d in hooks.diagnostics] == ["E1900", "E1900"]


def test_wrong_kind_of_call_is_an_internal_error() -> None:
    hooks = HookCaller([Alpha()])
    with pytest.raises(InternalError):
        hooks.first("register_passes", _ctx("x"))
    with pytest.raises(InternalError):
        hooks.collect("call")


def test_the_same_plugin_twice_is_refused() -> None:
    from ppy_core.diagnostics import PluginError

    with pytest.raises(PluginError) as raised:
        HookCaller([Alpha(), Alpha()])
    assert raised.value.code == "E1906"


def test_only_overridden_hooks_are_registered() -> None:
    hooks = HookCaller([Silent(), Alpha()])
    impls = {
        name: [i.plugin_name for i in getattr(hooks.manager.hook, name).get_hookimpls()]
        for name in HOOK_NAMES
    }
    assert impls["tensor_operation"] == ["alpha"]
    assert impls["call"] == []


ALPHA_ARRAY = TensorType(F64, None, "alpha")
BETA_ARRAY = TensorType(F64, None, "beta")


class Greedy(Plugin):
    """A third-party plugin sorting before everyone, answering every question."""

    name = "aaa"
    modules = ("aaalib",)

    def operator(self, ctx: OperatorContext) -> Any:
        return Converge("tensor.binary", F64, {"op": "greedy"})

    def attribute_type(self, ctx: AttributeContext) -> Any:
        return I64

    def instance_attribute(self, ctx: AttributeContext) -> Any:
        return I64

    def subscript(self, ctx: SubscriptContext) -> Any:
        return I64


class Owner(Plugin):
    """Knows its library's arrays; claims two libraries (as jax claims jax and flax)."""

    name = "owner"
    modules = ("alpha", "alphax")

    def operator(self, ctx: OperatorContext) -> Any:
        if I64 not in ctx.operands and any(isinstance(t, TensorType) for t in ctx.operands):
            return Converge("tensor.binary", ALPHA_ARRAY, {"op": "add"})
        return None

    def attribute_type(self, ctx: AttributeContext) -> Any:
        return F64 if ctx.owner == "alpha" and ctx.name == "pi" else None

    def instance_attribute(self, ctx: AttributeContext) -> Any:
        return F64 if ctx.name == "real" else None

    def subscript(self, ctx: SubscriptContext) -> Any:
        return ALPHA_ARRAY if ctx.qualname == "alpha.Array" else None


class BetaOwner(Plugin):
    name = "betaowner"
    modules = ("beta",)

    def operator(self, ctx: OperatorContext) -> Any:
        return Converge("tensor.binary", BETA_ARRAY, {"op": "add"})


def _op(*operands: Any) -> OperatorContext:
    return OperatorContext("Add", operands)


def test_operators_go_to_the_library_of_their_operands() -> None:
    hooks = HookCaller([Greedy(), Owner(), BetaOwner()])
    assert hooks.first("operator", _op(ALPHA_ARRAY, ALPHA_ARRAY)).result == ALPHA_ARRAY
    assert hooks.first("operator", _op(ALPHA_ARRAY, F64)).result == ALPHA_ARRAY  # a scalar
    assert hooks.first("operator", _op(BETA_ARRAY, F64)).result == BETA_ARRAY
    # library-neutral operands: nobody's module, everybody is asked in order
    assert hooks.first("operator", _op(F64, F64)).attributes == {"op": "greedy"}
    # where the claimant has no answer, the others are asked
    assert hooks.first("operator", _op(ALPHA_ARRAY, I64)).attributes == {"op": "greedy"}
    assert hooks.first("operator", _op(OpaqueType("alpha.dtype"), F64)).attributes == {
        "op": "greedy"
    }


def test_operands_of_two_libraries_converge_nowhere_unless_one_plugin_claims_both() -> None:
    hooks = HookCaller([Greedy(), Owner(), BetaOwner()])
    assert hooks.first("operator", _op(ALPHA_ARRAY, BETA_ARRAY)) is None  # Python runs it
    alphax = TensorType(F64, None, "alphax")
    assert hooks.first("operator", _op(ALPHA_ARRAY, alphax)).result == ALPHA_ARRAY
    pair = TupleType((ALPHA_ARRAY, BETA_ARRAY))
    assert hooks.first("operator", _op(pair, F64)) is None


def test_attributes_and_subscripts_are_routed_by_owner() -> None:
    hooks = HookCaller([Greedy(), Owner()])
    assert hooks.first("attribute_type", AttributeContext("pi", owner="alpha")) == F64
    assert hooks.first("attribute_type", AttributeContext("e", owner="alpha")) == I64
    owned = AttributeContext("real", owner_type=ALPHA_ARRAY)
    assert hooks.first("instance_attribute", owned) == F64
    annotation = SubscriptContext(None, qualname="alpha.Array", in_annotation=True)
    assert hooks.first("subscript", annotation) == ALPHA_ARRAY
    assert hooks.first("subscript", SubscriptContext(ALPHA_ARRAY, (ALPHA_ARRAY,))) == I64


def test_method_calls_route_by_their_class_module_and_builtins_by_their_arguments() -> None:
    asked: list[str] = []

    class Recorder(Plugin):
        name = "aab"

        def call(self, ctx: CallContext) -> Any:
            asked.append(ctx.callee)
            return None

    class Knows(Plugin):
        name = "knows"
        modules = ("alpha",)

        def call(self, ctx: CallContext) -> Any:
            return CallAnswer(F64)

    hooks = HookCaller([Recorder(), Knows()])
    assert hooks.first("call", CallContext("alpha.ndarray.sum", (ALPHA_ARRAY,), {})) is not None
    assert hooks.first("call", CallContext("builtins.abs", (ALPHA_ARRAY,), {})) is not None
    assert asked == []  # the claimant answered both: the other was never asked
    assert hooks.route(CallContext("builtins.abs", (ALPHA_ARRAY,), {})) == {"alpha"}
    assert hooks.route(CallContext("!tensor.sum", (F64,), {}, receiver=ALPHA_ARRAY)) == {"alpha"}


def test_a_contested_module_is_answered_by_neither_claimant() -> None:
    class RivalA(Plugin):
        name = "rivala"
        modules = ("shared", "alib")

        def call(self, ctx: CallContext) -> Any:
            return CallAnswer(F64)

    class RivalB(RivalA):
        name = "rivalb"
        modules = ("shared",)

    class Bystander(Plugin):
        name = "zzz"

        def call(self, ctx: CallContext) -> Any:
            return CallAnswer(I64)

    claims = {"alib": "rivala"}  # E1901 left "shared" to nobody
    hooks = HookCaller([RivalA(), RivalB(), Bystander()], claims=claims)
    assert hooks.first("call", _ctx("shared.f")).result == I64
    assert hooks.first("call", _ctx("alib.f")).result == F64


def test_each_plugin_gets_its_own_options_in_every_context() -> None:
    seen: dict[str, Any] = {}

    class Tuned(Plugin):
        name = "tuned"
        modules = ("alpha",)

        def call(self, ctx: CallContext) -> Any:
            seen["tuned"] = dict(ctx.options)
            return None

        def stage(self, ctx: FunctionContext) -> Any:
            seen["stage"] = (dict(ctx.options), dict(ctx.module.options))
            return None

    class Plain(Plugin):
        name = "plain"

        def call(self, ctx: CallContext) -> Any:
            seen["plain"] = dict(ctx.options)
            return CallAnswer(F64)

    hooks = HookCaller([Tuned(), Plain()], options={"tuned": {"level": 3}, "plain": {}})
    ctx = _ctx("alpha.f")
    assert hooks.first("call", ctx).result == F64
    assert seen == {"tuned": {"level": 3}, "plain": {}}
    assert dict(ctx.options) == {}  # the front end's context is not changed
    module = ModuleContext("m.py", "m", {})
    func = FunctionContext(ast.parse("def f(): pass").body[0], module, {}, None, 2)  # type: ignore[arg-type]
    hooks.first("stage", func)
    assert seen["stage"] == ({"level": 3}, {"level": 3})
    # options take no part in a context's identity: memoized answers stay memoized
    op = OperatorContext("Add", (F64,))
    assert hash(op) == hash(replace(op, options={"level": 3}))
    assert op == replace(op, options={1: 2})


def test_a_plugin_reports_through_every_context_and_gets_the_question_location() -> None:
    class Reporter(Plugin):
        name = "reporter"
        modules = ("alpha",)

        def operator(self, ctx: OperatorContext) -> Any:
            ctx.report(Diagnostic("E1909", "alpha: '+' on these is deprecated", severity="warning"))
            return None

        def call(self, ctx: CallContext) -> Any:
            where = Location("elsewhere.py", 9, 9)
            ctx.report(Diagnostic("E1909", f"{ctx.callee} is slow", location=where))
            return None

    reported: list[Diagnostic] = []
    hooks = HookCaller([Reporter()], report=reported.append)
    where = Location("model.py", 4, 12)
    ctx = OperatorContext("Add", (ALPHA_ARRAY, F64), location=where, report=hooks.relay)
    hooks.first("operator", ctx)
    hooks.first("operator", ctx)
    hooks.first("call", CallContext("alpha.f", (), {}, location=where, report=hooks.relay))
    assert [d.location for d in reported] == [where, Location("elsewhere.py", 9, 9)]
    assert reported[0].render().startswith("model.py:4:12: warning: alpha: '+' on these")
    assert hooks.diagnostics == tuple(reported)


def test_an_explicit_route_overrides_the_context() -> None:
    hooks = HookCaller([Beta(), Alpha()])
    assert hooks.first("tensor_operation", _ctx("x.sin"), modules=frozenset({"alpha"})) == (
        Converge("tensor.unary", I64, {"op": "beta"})  # alpha has no x.sin: then the others
    )


def test_routing_is_cheap() -> None:
    plugins = [Greedy(), Owner(), BetaOwner(), Alpha(), Beta()]
    hooks = HookCaller(plugins)
    ctx = _op(ALPHA_ARRAY, F64)
    hooks.first("operator", ctx)
    n = 20000
    start = time.perf_counter()
    for _ in range(n):
        hooks.first("operator", ctx)
    per_call = (time.perf_counter() - start) / n
    assert per_call < 50e-6, per_call  # measured ~2 us; the oracle memoizes above this
