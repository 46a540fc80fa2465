"""The front end's view of the active plugins: every question it asks them.

Answers are memoized per context (hooks are pure); the hook caller routes each
question to the plugin claiming the module it is about (`ppy_core.interface.hooks`).
A hook that raises has already been turned into an E1900 diagnostic by the hook
caller and answers None here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.plugin import (
    AttributeContext,
    CallAnswer,
    CallContext,
    ClassContext,
    Converge,
    DecoratorContext,
    DecoratorSemantics,
    FunctionContext,
    OperatorContext,
    Report,
    SubscriptContext,
)
from ppy_core.interface.specs import LoweringSpec
from ppy_core.ir.types import TensorType, Type


class HookCaller(Protocol):
    """What the oracle needs from `ppy_core.interface.hooks`: the first non-None answer
    of a hook, asked of the plugins in the order the question's modules route it, every
    plugin's answer to a registration hook, and where plugins' diagnostics go."""

    def first(self, hook: str, ctx: object) -> Any: ...

    def collect(self, hook: str) -> list[tuple[str, Any]]: ...

    def relay(self, diagnostic: Diagnostic) -> None: ...


class Oracle:
    """Typed questions to the plugins active for one module.

    `report` is what the contexts the front end builds carry: a plugin reporting
    through it reaches the compile's diagnostics (the hook caller's `relay`)."""

    def __init__(self, hooks: HookCaller) -> None:
        self.hooks = hooks
        self.report: Report = hooks.relay
        self._memo: dict[tuple[str, Any], Any] = {}
        self._external: dict[str, Type] | None = None
        self._speculative: dict[str, TensorType] | None = None
        self._runtimes: dict[str, object | None] = {}

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

    def speculative_arrays(self) -> Mapping[str, TensorType]:
        """Library -> the array type its plugin lets an unannotated leaf be assumed to be."""
        if self._speculative is None:
            found: dict[str, TensorType] = {}
            for _plugin, answer in self.hooks.collect("speculative_array"):
                if isinstance(answer, TensorType) and answer.library:
                    found.setdefault(answer.library, answer)
            self._speculative = found
        return self._speculative

    def takes_views(self, library: str) -> bool:
        """Whether `library`'s runtime adapter takes views (`RuntimeAdapter.takes_views`):
        then a site passes its views' names and the adapter takes the views itself."""
        return bool(getattr(self._runtime(library), "takes_views", False))

    def store_elements(self, library: str) -> frozenset[str]:
        """The element kinds `library`'s runtime adapter stores into targets
        (`RuntimeAdapter.store_elements`); none where no adapter loads."""
        return frozenset(getattr(self._runtime(library), "store_elements", ()))

    def _runtime(self, library: str) -> object | None:
        """`library`'s registered runtime adapter (None where none loads), asked once:
        what the run time can do decides which sites a compile makes, so the front end
        asks here rather than reading the runtime's registry itself."""
        if library not in self._runtimes:
            from ppy_core.runtime.adapter import adapter  # the runtime's registry

            try:
                self._runtimes[library] = adapter(library)
            except LookupError:
                self._runtimes[library] = None
        return self._runtimes[library]

    def class_type(self, ctx: ClassContext) -> Type | None:
        return self._ask("class_type", ctx)

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

    def adjust_call(self, ctx: CallContext) -> CallContext | None:
        answer = self._ask("adjust_call", ctx)
        return answer if isinstance(answer, CallContext) else None

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        return self._ask("tensor_operation", ctx)

    def decorator_semantics(self, ctx: DecoratorContext) -> DecoratorSemantics | None:
        return self._ask("decorator_semantics", ctx)

    def stage(self, ctx: FunctionContext) -> LoweringSpec | None:
        return self.hooks.first("stage", ctx=ctx)


__all__ = ["HookCaller", "Oracle"]
