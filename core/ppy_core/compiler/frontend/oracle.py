"""The front end's view of the active plugins: every question it asks them.

Answers are memoized per context (hooks are pure). A hook that raises has already
been turned into an E1900 diagnostic by the hook caller and answers None here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ppy_core.interface.plugin import (
    AttributeContext,
    CallAnswer,
    CallContext,
    Converge,
    DecoratorContext,
    DecoratorSemantics,
    FunctionContext,
    OperatorContext,
    SubscriptContext,
)
from ppy_core.interface.specs import LoweringSpec
from ppy_core.ir.types import Type


class HookCaller(Protocol):
    """What the oracle needs from `ppy_core.interface.hooks`: first non-None answer of a hook,
    and every plugin's answer to a registration hook."""

    def first(self, hook: str, **kwargs: Any) -> Any: ...

    def collect(self, hook: str) -> list[tuple[str, Any]]: ...


class Oracle:
    """Typed questions to the plugins active for one module."""

    def __init__(self, hooks: HookCaller) -> None:
        self.hooks = hooks
        self._memo: dict[tuple[str, Any], Any] = {}
        self._external: dict[str, Type] | None = None

    def _ask(self, hook: str, ctx: Any) -> Any:
        try:
            key = (hook, ctx)
            hash(key)
        except TypeError:
            return self.hooks.first(hook, ctx=ctx)
        if key not in self._memo:
            self._memo[key] = self.hooks.first(hook, ctx=ctx)
        return self._memo[key]

    def external_types(self) -> Mapping[str, Type]:
        if self._external is None:
            merged: dict[str, Type] = {}
            for _plugin, answer in self.hooks.collect("external_types"):
                merged.update(answer or {})
            self._external = merged
        return self._external

    def attribute_type(self, ctx: AttributeContext) -> Type | None:
        return self._ask("attribute_type", ctx)

    def instance_attribute(self, ctx: AttributeContext) -> Type | None:
        return self._ask("instance_attribute", ctx)

    def subscript(self, ctx: SubscriptContext) -> Type | None:
        return self._ask("subscript", ctx)

    def call(self, ctx: CallContext) -> CallAnswer | None:
        return self._ask("call", ctx)

    def operator(self, ctx: OperatorContext) -> Converge | Type | None:
        return self._ask("operator", ctx)

    def call_alias(self, ctx: CallContext) -> str | None:
        return self._ask("call_alias", ctx)

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        return self._ask("tensor_operation", ctx)

    def decorator_semantics(self, ctx: DecoratorContext) -> DecoratorSemantics | None:
        return self._ask("decorator_semantics", ctx)

    def stage(self, ctx: FunctionContext) -> LoweringSpec | None:
        return self.hooks.first("stage", ctx=ctx)


__all__ = ["HookCaller", "Oracle"]
