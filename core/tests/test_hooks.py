"""The pluggy-backed hook caller: first answers, collected registrations, E1900."""

from __future__ import annotations

from typing import Any

import pytest

from ppy_core.diagnostics import Diagnostic, InternalError, Location
from ppy_core.interface.hooks import ANSWER_HOOKS, COLLECT_HOOKS, HookCaller
from ppy_core.interface.plugin import HOOK_NAMES, CallContext, Converge, OperatorContext, Plugin
from ppy_core.ir.types import F64, I64


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
    } == COLLECT_HOOKS


def test_first_non_none_answer_in_plugin_order() -> None:
    hooks = HookCaller([Alpha(), Beta()])
    assert hooks.first("tensor_operation", _ctx("alpha.sin")).attributes == {"op": "sin"}
    assert hooks.first("tensor_operation", _ctx("other")).attributes == {"op": "beta"}
    reversed_order = HookCaller([Beta(), Alpha()])
    assert reversed_order.first("tensor_operation", _ctx("alpha.sin")).attributes == {"op": "beta"}


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
    assert hooks.first("tensor_operation", _ctx("alpha.sin")) is not None
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
