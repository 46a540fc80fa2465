"""Calling the plugins' hooks: pluggy registers them, the router picks who answers.

The hook specifications are generated from `ppy_core.interface.plugin.Plugin`: one per name
in HOOK_NAMES, with the parameters of the base method. Every plugin instance is
registered with each method it overrides as an implementation (the base's no-op
defaults are left out, so they cost nothing); pluggy checks them against the
specifications and calls the collecting hooks (those without a context:
`external_types`, `register_*`), which return every plugin's non-empty answer, with
the plugin's name.

Answer hooks are routed. A question is about the top-level modules it names: a call
about its callee's module (`numpy.sin`, `numpy.ndarray.sum` -> numpy), an attribute
about its owner module or its owner type's library, an operator or a subscript about
the libraries of its operand types (`TensorType.library`). The plugin claiming that
module answers first; the others are asked only when it answers None (so an enabled
third-party plugin sorting before "numpy" never answers NumPy's calls). A question
about two claimed libraries at once (a NumPy array times a torch tensor) goes to a
plugin claiming both, or to nobody: Python runs it. A module two plugins claim
(E1901) is answered by neither. Questions naming no claimed module go to every plugin
in name order. The order per (hook, modules) is computed once.

Each plugin receives contexts carrying its own options (`ctx.options`, from
`[tool.ppy.plugins.NAME]`), and a `report` that reaches the compile's diagnostics
(`relay`: a plugin's diagnostic without a location gets the question's).

A hook that raises is a diagnostic (E1900, naming the plugin and the hook) and
counts as None: one broken plugin never stops a compile.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final

import pluggy

from ppy_core.diagnostics import Diagnostic, InternalError, Location, PluginError
from ppy_core.interface.plugin import (
    HOOK_NAMES,
    AttributeContext,
    CallContext,
    ClassContext,
    DecoratorContext,
    FunctionContext,
    OperatorContext,
    Plugin,
    Report,
    SubscriptContext,
)
from ppy_core.ir.types import OpaqueType, TupleType, Type

PROJECT: Final = "ppy"
# A hook without a context declares something (types, dialects, passes): every plugin's
# answer is collected. A hook with one asks a question: the first answer wins.
COLLECT_HOOKS: Final[frozenset[str]] = frozenset(
    name for name in HOOK_NAMES if "ctx" not in inspect.signature(getattr(Plugin, name)).parameters
)
ANSWER_HOOKS: Final[frozenset[str]] = frozenset(HOOK_NAMES) - COLLECT_HOOKS
NO_MODULES: Final[frozenset[str]] = frozenset()

_spec = pluggy.HookspecMarker(PROJECT)
_impl = pluggy.HookimplMarker(PROJECT)
_log = logging.getLogger(__name__)


def _signature_of(method: Callable[..., Any]) -> Callable[..., Any]:
    """A plain function with `method`'s parameters less `self`, as pluggy reads them
    (a spec that names `self` makes newer pluggy warn for every implementation)."""
    params = list(inspect.signature(method).parameters)[1:]
    if params == ["ctx"]:

        def stand_in(ctx: Any) -> Any:
            return None

    elif not params:

        def stand_in() -> Any:  # type: ignore[misc]
            return None

    else:  # pragma: no cover - every hook takes ctx or nothing
        raise InternalError(
            f"hook {method.__name__} has parameters {params}",
            hint="a hook takes one context object, or nothing",
        )
    stand_in.__name__ = stand_in.__qualname__ = method.__name__
    stand_in.__doc__ = method.__doc__
    return stand_in


@functools.cache
def _specifications() -> type:
    """The hookspec namespace: one specification per Plugin hook."""
    namespace: dict[str, Any] = {"__doc__": "Hook specifications generated from Plugin."}
    for name in HOOK_NAMES:
        method = getattr(Plugin, name)
        namespace[name] = _spec(firstresult=name in ANSWER_HOOKS)(_signature_of(method))
    return type("PluginSpecs", (), namespace)


class HookCaller:
    """The hooks of a set of plugins (usually one module's `Activation.plugins`).

    `claims` maps a top-level module to the plugin claiming it (default: each module
    only one of `plugins` lists); `options` maps a plugin's name to its options.
    `report` receives each diagnostic (E1900, and what plugins report through `relay`)
    as it happens; `diagnostics` keeps them."""

    __slots__ = (
        "_asking",
        "_callers",
        "_claims",
        "_diagnostics",
        "_impls",
        "_listed",
        "_options",
        "_orders",
        "_seen",
        "manager",
        "plugins",
        "report",
    )

    def __init__(
        self,
        plugins: Iterable[Plugin],
        report: Report | None = None,
        *,
        claims: Mapping[str, str] | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.plugins: tuple[Plugin, ...] = tuple(plugins)
        self.report = report
        self._diagnostics: list[Diagnostic] = []
        self._seen: set[tuple[str, str, str, Location | None]] = set()
        self._asking: Location | None = None
        self._listed: dict[str, tuple[str, ...]] = {}
        for plugin in self.plugins:
            for module in dict.fromkeys(plugin.modules):
                self._listed[module] = (*self._listed.get(module, ()), plugin.name)
        if claims is None:
            claims = {m: names[0] for m, names in self._listed.items() if len(names) == 1}
        self._claims: dict[str, str] = dict(claims)
        self._options: dict[str, Mapping[str, Any]] = {
            name: MappingProxyType(dict(given)) for name, given in (options or {}).items() if given
        }
        self._impls: dict[str, dict[str, Callable[[Any], Any]]] = {h: {} for h in ANSWER_HOOKS}
        self._orders: dict[tuple[str, frozenset[str]], tuple[Callable[[Any], Any], ...]] = {}
        self.manager = pluggy.PluginManager(PROJECT)
        self.manager.add_hookspecs(_specifications())
        # pluggy calls the last registered first: register in reverse to try plugins in order.
        for plugin in reversed(self.plugins):
            try:
                self.manager.register(self._implementations(plugin), name=plugin.name)
            except ValueError as exc:
                raise PluginError(
                    f"plugin {plugin.name!r} is given twice to one compile ({exc})",
                    hint="pass each plugin once",
                    code="E1906",
                ) from None
        self._callers: dict[str, Any] = {
            name: getattr(self.manager.hook, name) for name in COLLECT_HOOKS
        }

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Every diagnostic so far (E1900 and the plugins' own reports), each once."""
        return tuple(self._diagnostics)

    def first(self, hook: str, ctx: object, modules: frozenset[str] | None = None) -> Any | None:
        """The first non-None answer of `hook(ctx)` in routed order, or None: nobody knows.

        `modules` overrides the route read from `ctx` (the top-level modules it is about)."""
        if hook not in ANSWER_HOOKS:
            raise InternalError(
                f"hook {hook!r} is not an answer hook",
                hint=f"answer hooks are {', '.join(sorted(ANSWER_HOOKS))}",
            )
        route = self.route(ctx) if modules is None else modules
        order = self._orders.get((hook, route))
        if order is None:
            order = self._orders[(hook, route)] = self._order(hook, route)
        for answer_of in order:
            answer = answer_of(ctx)
            if answer is not None:
                return answer
        return None

    def collect(self, hook: str) -> list[tuple[str, Any]]:
        """Every plugin's non-empty answer to `hook()`, as (plugin name, answer), in order."""
        if hook not in COLLECT_HOOKS:
            raise InternalError(
                f"hook {hook!r} is not a collecting hook",
                hint=f"collecting hooks are {', '.join(sorted(COLLECT_HOOKS))}",
            )
        return list(self._callers[hook]())

    def relay(self, diagnostic: Diagnostic) -> None:
        """A context's `report`: keep a plugin's diagnostic (once) and pass it on; one
        without a location gets the location of the question being answered."""
        if diagnostic.location is None and self._asking is not None:
            diagnostic = dataclasses.replace(diagnostic, location=self._asking)
        key = ("", diagnostic.code, diagnostic.message, diagnostic.location)
        if key in self._seen:
            return
        self._seen.add(key)
        self._diagnostics.append(diagnostic)
        if self.report is not None:
            self.report(diagnostic)

    # -- routing --------------------------------------------------------------
    def route(self, ctx: object) -> frozenset[str]:
        """The claimed (or contested) top-level modules a question is about."""
        if isinstance(ctx, CallContext):
            named = self._known(ctx.callee)
            if named:
                return named
            return self._libraries((ctx.receiver, *ctx.args, *ctx.kwargs.values()))
        if isinstance(ctx, OperatorContext):
            return self._libraries(ctx.operands)
        if isinstance(ctx, AttributeContext):
            if ctx.owner is not None:
                return self._known(ctx.owner)
            return self._libraries((ctx.owner_type,))
        if isinstance(ctx, SubscriptContext):
            if ctx.qualname is not None:
                return self._known(ctx.qualname)
            return self._libraries((ctx.value, *ctx.index))
        if isinstance(ctx, DecoratorContext):
            return self._known(ctx.qualname)
        if isinstance(ctx, ClassContext):
            return frozenset(m for base in ctx.bases for m in self._known(base))
        if isinstance(ctx, FunctionContext):
            return self._libraries((*ctx.params.values(), ctx.returns))
        return NO_MODULES

    def _known(self, qualname: str) -> frozenset[str]:
        top = qualname.partition(".")[0]
        return frozenset((top,)) if top in self._listed else NO_MODULES

    def _libraries(self, types: Iterable[Type | None]) -> frozenset[str]:
        listed = self._listed
        found: list[str] = []
        for t in types:
            library = getattr(t, "library", "")
            if library:  # the common case, an array: no generator, no set
                top = library.partition(".")[0]
                if top in listed:
                    found.append(top)
            elif isinstance(t, OpaqueType | TupleType):
                found.extend(m for m in _libraries_of(t) if m in listed)
        return frozenset(found) if found else NO_MODULES

    def _order(self, hook: str, route: frozenset[str]) -> tuple[Callable[[Any], Any], ...]:
        """Who is asked `hook` about `route`, in order (see the module's docstring)."""
        impls = self._impls[hook]
        contested = {n for m in route if m not in self._claims for n in self._listed.get(m, ())}
        claimants = {self._claims[m] for m in route if m in self._claims}
        if len(claimants) > 1 or claimants & contested:
            return ()  # several libraries, no plugin claiming them all: Python runs it
        names = [*claimants, *(p.name for p in self.plugins if p.name not in claimants)]
        return tuple(impls[n] for n in names if n in impls and n not in contested)

    # -- registration ---------------------------------------------------------
    def _implementations(self, plugin: Plugin) -> object:
        """A namespace holding a guarded implementation per hook `plugin` overrides."""
        impls: dict[str, Any] = {}
        for name in HOOK_NAMES:
            if getattr(type(plugin), name, None) is getattr(Plugin, name) and name not in vars(
                plugin
            ):
                continue  # the base's no-op: nothing to call
            guarded = self._guard(plugin.name, name, getattr(plugin, name))
            impls[name] = _impl(guarded)
            if name in ANSWER_HOOKS:
                self._impls[name][plugin.name] = guarded
        return type(
            f"{type(plugin).__name__}Hooks",
            (),
            {name: staticmethod(fn) for name, fn in impls.items()},
        )

    def _guard(self, plugin: str, hook: str, method: Callable[..., Any]) -> Callable[..., Any]:
        if hook in COLLECT_HOOKS:

            def collected() -> Any:
                try:
                    answer = method()
                except Exception as exc:
                    self._failed(plugin, hook, exc, None)
                    return None
                return (plugin, answer) if answer else None

            guarded: Callable[..., Any] = collected
        else:
            options = self._options.get(plugin)

            def answered(ctx: Any) -> Any:
                if options is not None:
                    ctx = _with_options(ctx, options)
                self._asking = getattr(ctx, "location", None)
                try:
                    return method(ctx)
                except Exception as exc:
                    self._failed(plugin, hook, exc, ctx)
                    return None
                finally:
                    self._asking = None

            guarded = answered
        guarded.__wrapped__ = method  # type: ignore[attr-defined]
        guarded.__name__ = guarded.__qualname__ = hook
        return guarded

    def _failed(self, plugin: str, hook: str, exc: Exception, ctx: object) -> None:
        location = getattr(ctx, "location", None)
        key = (plugin, hook, f"{type(exc).__name__}: {exc}", location)
        if key in self._seen:
            return
        self._seen.add(key)
        _log.debug("plugin %s: hook %s raised", plugin, hook, exc_info=exc)
        diagnostic = Diagnostic(
            "E1900",
            f"plugin {plugin!r}: hook {hook} raised {type(exc).__name__}: {exc}",
            hint=f"treated as not known to {plugin!r}; report it to the plugin's authors, or "
            f"disable it with [tool.ppy.plugins.{plugin}] enabled = false",
            location=location if isinstance(location, Location) else None,
            severity="warning",
        )
        self._diagnostics.append(diagnostic)
        if self.report is not None:
            self.report(diagnostic)


def _libraries_of(t: Type | None) -> Iterable[str]:
    """The top-level modules whose object a value of type `t` is."""
    library = getattr(t, "library", "")
    if library:
        yield library.partition(".")[0]
    elif isinstance(t, OpaqueType) and "." in t.name:
        yield t.name.partition(".")[0]
    elif isinstance(t, TupleType):
        for element in t.elements:
            yield from _libraries_of(element)


def _with_options(ctx: Any, options: Mapping[str, Any]) -> Any:
    """`ctx` as one plugin sees it: carrying that plugin's options."""
    if isinstance(ctx, FunctionContext):
        module = dataclasses.replace(ctx.module, options=options)
        return dataclasses.replace(ctx, options=options, module=module)
    if dataclasses.is_dataclass(ctx) and hasattr(ctx, "options"):
        return dataclasses.replace(ctx, options=options)
    return ctx


__all__ = ["HookCaller", "ANSWER_HOOKS", "COLLECT_HOOKS", "NO_MODULES", "PROJECT"]
