"""Calling the plugins' hooks, through pluggy.

The hook specifications are generated from `ppy_core.interface.plugin.Plugin`: one per name
in HOOK_NAMES, with the parameters of the base method. Every plugin instance is
registered with each method it overrides as an implementation (the base's no-op
defaults are left out, so they cost nothing). Answer hooks return the first
non-None answer, trying the plugins in the order given; `external_types` and the
`register_*` hooks return every plugin's non-empty answer, with the plugin's name.

A hook that raises is a diagnostic (E1900, naming the plugin and the hook) and
counts as None: one broken plugin never stops a compile.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable
from typing import Any, Final

import pluggy

from ppy_core.diagnostics import Diagnostic, InternalError, Location, PluginError
from ppy_core.interface.plugin import HOOK_NAMES, Plugin, Report

PROJECT: Final = "ppy"
COLLECT_HOOKS: Final[frozenset[str]] = frozenset(
    name for name in HOOK_NAMES if name == "external_types" or name.startswith("register_")
)
ANSWER_HOOKS: Final[frozenset[str]] = frozenset(HOOK_NAMES) - COLLECT_HOOKS

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

    `report` receives each E1900 diagnostic as it happens; `diagnostics` keeps them."""

    __slots__ = ("_callers", "_diagnostics", "_seen", "manager", "plugins", "report")

    def __init__(self, plugins: Iterable[Plugin], report: Report | None = None) -> None:
        self.plugins: tuple[Plugin, ...] = tuple(plugins)
        self.report = report
        self._diagnostics: list[Diagnostic] = []
        self._seen: set[tuple[str, str, str, Location | None]] = set()
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
            name: getattr(self.manager.hook, name) for name in HOOK_NAMES
        }

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Every E1900 diagnostic so far, each once."""
        return tuple(self._diagnostics)

    def first(self, hook: str, ctx: object) -> Any | None:
        """The first non-None answer of `hook(ctx)`, or None: no plugin knows."""
        if hook not in ANSWER_HOOKS:
            raise InternalError(
                f"hook {hook!r} is not an answer hook",
                hint=f"answer hooks are {', '.join(sorted(ANSWER_HOOKS))}",
            )
        return self._callers[hook](ctx=ctx)

    def collect(self, hook: str) -> list[tuple[str, Any]]:
        """Every plugin's non-empty answer to `hook()`, as (plugin name, answer), in order."""
        if hook not in COLLECT_HOOKS:
            raise InternalError(
                f"hook {hook!r} is not a collecting hook",
                hint=f"collecting hooks are {', '.join(sorted(COLLECT_HOOKS))}",
            )
        return list(self._callers[hook]())

    def _implementations(self, plugin: Plugin) -> object:
        """A namespace holding a guarded implementation per hook `plugin` overrides."""
        impls: dict[str, Any] = {}
        for name in HOOK_NAMES:
            if getattr(type(plugin), name, None) is getattr(Plugin, name) and name not in vars(
                plugin
            ):
                continue  # the base's no-op: nothing to call
            impls[name] = _impl(self._guard(plugin.name, name, getattr(plugin, name)))
        return type(
            f"{type(plugin).__name__}Hooks",
            (),
            {name: staticmethod(fn) for name, fn in impls.items()},
        )

    def _guard(self, plugin: str, hook: str, method: Callable[..., Any]) -> Callable[..., Any]:
        collect = hook in COLLECT_HOOKS

        def guarded(*args: Any) -> Any:
            try:
                answer = method(*args)
            except Exception as exc:
                self._failed(plugin, hook, exc, args)
                return None
            if collect:
                return (plugin, answer) if answer else None
            return answer

        guarded.__wrapped__ = method  # type: ignore[attr-defined]
        guarded.__name__ = guarded.__qualname__ = hook
        return guarded

    def _failed(self, plugin: str, hook: str, exc: Exception, args: tuple[Any, ...]) -> None:
        location = getattr(args[0], "location", None) if args else None
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


__all__ = ["HookCaller", "ANSWER_HOOKS", "COLLECT_HOOKS", "PROJECT"]
