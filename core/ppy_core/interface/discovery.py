"""Discovery and enablement of plugins and backends.

Entry points of the groups `ppy.plugins` and `ppy.backends` are read from the
installed distributions' metadata: nothing is imported to find them. A plugin is
imported only when a project activates it:

* a first-party plugin (FIRST_PARTY: its name, its distribution, the top-level
  modules it claims) when the module being compiled imports one of its modules,
  unless `[tool.ppy.plugins.NAME] enabled = false`;
* any other plugin only when `[tool.ppy.plugins.NAME] enabled = true`.

Every backend installed is enabled; `[tool.ppy] backends = [...]` orders and
restricts them. Problems are diagnostics, never crashes: two plugins claiming one
module (E1901, neither gets it), another interface version (E1903), a failed import
or factory (E1904), a malformed entry point (E1905), one name twice (E1906). A plugin
that cannot be loaded is deactivated with a warning; one that refuses its options
(`Plugin.validate_options`, E1907 naming the key) is not used either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal, cast

from ppy_core.diagnostics import Diagnostic, PluginError

if TYPE_CHECKING:
    import importlib.metadata as md

    # The plugin and backend interfaces (the IR, specs: ~25 ms) and the config load
    # only to load a plugin or backend: reading the entry points needs none of them.
    from ppy_core.interface.backend import Backend
    from ppy_core.interface.plugin import Plugin
    from ppy_core.project.config import Config

PLUGIN_GROUP: Final = "ppy.plugins"
BACKEND_GROUP: Final = "ppy.backends"
RUNTIME_GROUP: Final = "ppy.runtimes"  # runtime adapters, see ppy_core.runtime.adapter
LOADER_GROUP: Final = "ppy.loaders"  # backends' run-time loaders, named by manifests
Kind = Literal["plugin", "backend", "runtime", "loader"]
_GROUPS: Final[Mapping[str, Kind]] = {
    PLUGIN_GROUP: "plugin",
    BACKEND_GROUP: "backend",
    RUNTIME_GROUP: "runtime",
    LOADER_GROUP: "loader",
}


@dataclass(frozen=True, slots=True)
class FirstParty:
    """A plugin or backend shipped by the PPy project."""

    distribution: str
    modules: tuple[str, ...] = ()


FIRST_PARTY: Final[Mapping[str, FirstParty]] = {
    "numpy": FirstParty("ppy-numpy", ("numpy",)),
    "torch": FirstParty("ppy-torch", ("torch",)),
    "jax": FirstParty("ppy-jax", ("jax", "flax", "optax")),
    "pyarrow": FirstParty("ppy-arrow", ("pyarrow",)),
    "pandas": FirstParty("ppy-pandas", ("pandas",)),
    "scipy": FirstParty("ppy-scipy", ("scipy",)),
    "pydantic": FirstParty("ppy-web", ("pydantic",)),
    "uvicorn": FirstParty("ppy-web", ("uvicorn", "fastapi", "starlette")),
}
FIRST_PARTY_BACKENDS: Final[Mapping[str, FirstParty]] = {
    "llvm": FirstParty("ppy-llvm"),
    "cuda": FirstParty("ppy-cuda", ("torch",)),  # it compiles torch sites only
    "aten": FirstParty("ppy-torch", ("torch",)),  # as the class says (Backend.modules):
    "stablehlo": FirstParty("ppy-jax", ("jax",)),  # known before import, so not imported
}
_VALUE: Final = re.compile(r"^[\w.]+\s*:\s*[\w.]+$")


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them (`PPy_Numpy` -> `ppy-numpy`)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry point: `name = value` in `group`, from `distribution` at `version`."""

    kind: Kind
    name: str
    value: str
    distribution: str
    version: str
    first_party: bool
    modules: tuple[str, ...] = ()  # claimed top-level modules, known before import

    @property
    def group(self) -> str:
        return next(group for group, kind in _GROUPS.items() if kind == self.kind)


@dataclass(frozen=True, slots=True)
class Discovered:
    """Every entry point found, by name, and what was wrong with the metadata."""

    plugins: Mapping[str, Entry]
    backends: Mapping[str, Entry]
    diagnostics: tuple[Diagnostic, ...] = ()
    runtimes: Mapping[str, Entry] = field(default_factory=dict)  # read by the runtime only
    loaders: Mapping[str, Entry] = field(default_factory=dict)  # read by the runtime only


@dataclass(frozen=True, slots=True)
class Activation:
    """The plugins one module gets: loaded instances (in name order), which plugin
    claims which top-level module, what went wrong, and what was refused and why."""

    plugins: tuple[Plugin, ...] = ()
    claims: Mapping[str, str] = field(default_factory=dict)
    diagnostics: tuple[Diagnostic, ...] = ()
    refused: Mapping[str, str] = field(default_factory=dict)

    def plugin_for(self, module: str) -> Plugin | None:
        """The plugin claiming `module`'s top-level package ("numpy.linalg" -> numpy's)."""
        owner = self.claims.get(module.partition(".")[0])
        return next((p for p in self.plugins if p.name == owner), None)


@dataclass(frozen=True, slots=True)
class BackendSet:
    """The backends in the order to try them, what went wrong, what was refused."""

    backends: tuple[Backend, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    refused: Mapping[str, str] = field(default_factory=dict)


_discovered: dict[tuple[str, ...], Discovered] = {}
_loaded: dict[tuple[Kind, str, str], Plugin | Backend | PluginError] = {}


def discover(path: Sequence[str] | None = None, *, refresh: bool = False) -> Discovered:
    """Read the entry points of every distribution on `path` (default: sys.path).

    Imports nothing. Cached per path (its folders that hold metadata: the script's
    folder `ppy FILE` puts first on sys.path does not cost a second scan), and across
    processes by a record (`ppy_core.cache.records`) kept while those folders and the
    ppy distributions' entry_points.txt are unchanged; `refresh=True` reads the
    metadata again."""
    from ppy_core.runtime import registered

    search = registered.search_path(path)
    if refresh:
        registered.forget()
    if refresh or search not in _discovered:
        _discovered[search] = _recorded(search, refresh)
    return _discovered[search]


def _recorded(search: tuple[str, ...], refresh: bool) -> Discovered:
    from ppy_core.cache import records
    from ppy_core.runtime.registered import discovery_record

    name = discovery_record(search)
    data = None if refresh else records.read(name)
    if isinstance(data, dict):
        try:
            return _from_record(data)
        except (KeyError, TypeError, ValueError):
            pass
    found, files = _read(search)
    records.write(name, [*search, *files], as_record(found))
    return found


def as_record(found: Discovered) -> dict[str, list[list[object]]]:
    """`found` as plain data: the discovery record (its rows' schema: `registered.Row`)."""
    from ppy_core.runtime.registered import Row, row_data

    def entries(table: Mapping[str, Entry]) -> list[list[object]]:
        return [row_data(Row(**{f: getattr(e, f) for f in Row._fields})) for e in table.values()]

    return {
        "plugins": entries(found.plugins),
        "backends": entries(found.backends),
        "runtimes": entries(found.runtimes),
        "loaders": entries(found.loaders),
        "diagnostics": [[d.code, d.message, d.hint] for d in found.diagnostics],
    }


def _from_record(data: Mapping[str, list[list[object]]]) -> Discovered:
    from ppy_core.runtime.registered import parse_row

    def table(rows: list[list[object]]) -> dict[str, Entry]:
        made = (Entry(**parse_row(r)._asdict()) for r in rows)  # Entry's fields are Row's
        return {e.name: e for e in made if e.kind in _GROUPS.values()}

    return Discovered(
        plugins=table(data["plugins"]),
        backends=table(data["backends"]),
        diagnostics=tuple(Diagnostic(str(c), str(m), str(h)) for c, m, h in data["diagnostics"]),
        runtimes=table(data["runtimes"]),
        loaders=table(data["loaders"]),
    )


def _read(search: tuple[str, ...]) -> tuple[Discovered, list[str]]:
    """What the metadata on `search` registers, and the entry_points.txt files read."""
    found: dict[Kind, dict[str, list[Entry]]] = {k: {} for k in _GROUPS.values()}
    diagnostics: list[Diagnostic] = []
    seen: set[str] = set()
    files: list[str] = []
    import importlib.metadata as md  # ~15 ms: only when no record is valid

    for dist in md.distributions(path=list(search)):
        # Parsing METADATA costs ~1 ms a distribution: read it only for the few
        # distributions that declare a ppy entry point.
        if "[ppy." not in (dist.read_text("entry_points.txt") or ""):
            continue
        where = getattr(dist, "_path", None)
        if where is not None:
            files.append(os.path.join(str(where), "entry_points.txt"))
        dist_name = dist.metadata["Name"] or ""
        if not dist_name or normalize(dist_name) in seen:
            continue  # like the import system: the first on the path wins
        seen.add(normalize(dist_name))
        for ep in dist.entry_points:
            kind: Kind | None = _GROUPS.get(ep.group)
            if kind is None:
                continue
            if not _VALUE.match(ep.value):
                diagnostics.append(
                    Diagnostic(
                        "E1905",
                        f"{kind} {ep.name!r} of {dist_name}: entry point {ep.value!r} is "
                        "not 'module:function'",
                        hint=f'write {ep.name} = "package.module:create_{kind}" in {ep.group}',
                    )
                )
                continue
            found[kind].setdefault(ep.name, []).append(_entry(kind, ep, dist_name, dist.version))
    discovered = Discovered(
        plugins=_unique(found["plugin"], diagnostics),
        backends=_unique(found["backend"], diagnostics),
        diagnostics=tuple(diagnostics),
        runtimes=_unique(found["runtime"], diagnostics),
        loaders=_unique(found["loader"], diagnostics),
    )
    return discovered, files


def _entry(kind: Kind, ep: md.EntryPoint, dist_name: str, version: str) -> Entry:
    # a library's runtime adapter ships in its plugin's distribution
    table = FIRST_PARTY_BACKENDS if kind in ("backend", "loader") else FIRST_PARTY
    first = table.get(ep.name)
    is_first = first is not None and first.distribution == normalize(dist_name)
    modules = first.modules if first is not None and is_first else ()
    return Entry(kind, ep.name, ep.value, dist_name, version, is_first, modules)


def _unique(entries: Mapping[str, list[Entry]], diagnostics: list[Diagnostic]) -> dict[str, Entry]:
    unique: dict[str, Entry] = {}
    for name, candidates in sorted(entries.items()):
        if len(candidates) == 1:
            unique[name] = candidates[0]
            continue
        dists = ", ".join(sorted(f"{c.distribution} {c.version}" for c in candidates))
        diagnostics.append(
            Diagnostic(
                "E1906",
                f"{candidates[0].kind} {name!r} is registered by {dists}; none is loaded",
                hint="uninstall all but one of those distributions",
            )
        )
    return unique


def enablement(entry: Entry, config: Config) -> tuple[bool, str]:
    """Whether `config` allows loading `entry`, and why (for `ppy doctor`)."""
    where = f" in {config.path}" if config.path else ""
    if entry.kind == "backend":
        if config.backends is not None and entry.name not in config.backends:
            return False, f"not listed in [tool.ppy] backends{where}"
        return True, "enabled"
    from ppy_core.runtime.registered import plugin_enabled  # the one rule, shared

    said = config.plugin(entry.name).enabled
    enabled, why = plugin_enabled(entry.name, entry.first_party, said, config.path)
    if enabled and entry.first_party:
        return True, f"enabled: activates when a module imports {', '.join(entry.modules)}"
    return enabled, why


def load(entry: Entry) -> Plugin | Backend:
    """Import `entry`, call its factory, check the result; cached per process.

    Raises PluginError: E1904 (import or factory failed), E1903 (another interface
    version), E1905 (not a Plugin/Backend, or its name differs from its entry point)."""
    key = (entry.kind, entry.name, entry.value)
    if key not in _loaded:
        try:
            _loaded[key] = _create(entry)
        except PluginError as exc:
            _loaded[key] = exc
    result = _loaded[key]
    if isinstance(result, PluginError):
        raise result
    return result


def _create(entry: Entry) -> Plugin | Backend:
    from ppy_core.interface.backend import INTERFACE as BACKEND_INTERFACE
    from ppy_core.interface.backend import Backend
    from ppy_core.interface.plugin import INTERFACE as PLUGIN_INTERFACE
    from ppy_core.interface.plugin import Plugin

    who = f"{entry.kind} {entry.name!r} ({entry.distribution} {entry.version})"
    try:
        import importlib.metadata as md

        factory = md.EntryPoint(entry.name, entry.value, entry.group).load()
        instance = factory()
    except Exception as exc:
        raise PluginError(
            f"{who} failed to load: {entry.value} raised {type(exc).__name__}: {exc}",
            hint=f"reinstall or upgrade {entry.distribution}; everything else keeps working",
            code="E1904",
        ) from None
    base: type = Plugin if entry.kind == "plugin" else Backend
    expected = PLUGIN_INTERFACE if entry.kind == "plugin" else BACKEND_INTERFACE
    interface = getattr(instance, "interface", None)
    if interface is None or not isinstance(instance, base):
        raise PluginError(
            f"{who}: {entry.value} returned a {type(instance).__name__}, not a "
            f"ppy_core {base.__name__}",
            hint=f"subclass ppy_core.{entry.kind}s.{base.__name__}",
            code="E1905",
        )
    if interface != expected:
        raise PluginError(
            f"{who} is written against interface {interface!r}; this core speaks "
            f"interface {expected}",
            hint=f"install a release of {entry.distribution} made for interface {expected}",
            code="E1903",
        )
    if instance.name != entry.name:
        raise PluginError(
            f"{who} calls itself {instance.name!r}, not {entry.name!r} as its entry point does",
            hint="make the class's name and the entry point's name the same",
            code="E1905",
        )
    return instance


def activate(
    imported_modules: Iterable[str], config: Config, discovered: Discovered | None = None
) -> Activation:
    """Load the plugins a module importing `imported_modules` gets under `config`."""
    found = discovered or discover()
    tops = {m.partition(".")[0] for m in imported_modules}
    diagnostics: list[Diagnostic] = list(found.diagnostics)
    refused: dict[str, str] = {}
    plugins: list[Plugin] = []
    for name, entry in found.plugins.items():
        enabled, _why = enablement(entry, config)
        if not enabled or (entry.first_party and not tops.intersection(entry.modules)):
            continue
        try:
            instance = cast("Plugin", load(entry))
        except PluginError as exc:
            # Deactivated, not fatal: the code of its library runs as Python.
            diagnostics.append(replace(exc.diagnostic, severity="warning"))
            refused[name] = exc.diagnostic.message
            continue
        problems = _option_problems(instance, config)
        if problems:
            diagnostics.extend(problems)
            refused[name] = problems[0].message
            continue
        plugins.append(instance)
    for name, said in sorted(config.plugins.items()):
        if said.enabled is True and name not in found.plugins:
            diagnostics.append(
                Diagnostic(
                    "E1904",
                    f"plugin {name!r} is enabled in {config.path} but not installed",
                    hint=f"pip install the distribution providing {name!r}, or remove "
                    f"[tool.ppy.plugins.{name}]",
                )
            )
    claims = _claims(plugins, diagnostics)
    return Activation(tuple(plugins), claims, tuple(diagnostics), refused)


def _option_problems(plugin: Plugin, config: Config) -> list[Diagnostic]:
    """The plugin's verdict on its `[tool.ppy.plugins.NAME]` options: E1907 per refused
    key (at its pyproject.toml line), or E1900 if `validate_options` itself failed."""
    options = config.plugin(plugin.name).options
    if not options:
        return []
    try:
        verdict = plugin.validate_options(MappingProxyType(dict(options)))
        bad = {str(key): str(problem) for key, problem in dict(verdict or {}).items()}
    except Exception as exc:
        return [
            Diagnostic(
                "E1900",
                f"plugin {plugin.name!r}: hook validate_options raised "
                f"{type(exc).__name__}: {exc}; the plugin is not used",
                hint="report it to the plugin's authors, or remove its options",
                location=config.option_location(plugin.name, next(iter(options))),
                severity="warning",
            )
        ]
    return [
        Diagnostic(
            "E1907",
            f"tool.ppy.plugins.{plugin.name}.{key}: {problem}",
            hint=f"fix or remove {key!r} in [tool.ppy.plugins.{plugin.name}]; until then "
            f"plugin {plugin.name!r} is not used (its library's code runs as Python)",
            location=config.option_location(plugin.name, key),
        )
        for key, problem in sorted(bad.items())
    ]


def _claims(plugins: Sequence[Plugin], diagnostics: list[Diagnostic]) -> dict[str, str]:
    claimants: dict[str, list[str]] = {}
    for plugin in plugins:
        for module in dict.fromkeys(plugin.modules):
            claimants.setdefault(module, []).append(plugin.name)
    claims: dict[str, str] = {}
    for module, names in sorted(claimants.items()):
        if len(names) == 1:
            claims[module] = names[0]
            continue
        listed = " and ".join(repr(n) for n in sorted(names))
        diagnostics.append(
            Diagnostic(
                "E1901",
                f"module {module!r} is claimed by plugins {listed}; neither is used for it",
                hint="disable all but one with [tool.ppy.plugins.NAME] enabled = false",
            )
        )
    return claims


def load_backends(
    config: Config,
    discovered: Discovered | None = None,
    *,
    imported: frozenset[str] | None = None,
) -> BackendSet:
    """The enabled backends, loaded, in order: `[tool.ppy] backends` when given, else
    the first-party ones (llvm, cuda, aten, stablehlo) then the others by name. With
    `imported` (a module's top-level imports), a first-party backend serving only
    libraries the module does not import is not even imported."""
    found = discovered or discover()
    if config.backends is not None:
        names = list(config.backends)
    else:
        firsts = [n for n in FIRST_PARTY_BACKENDS if n in found.backends]
        names = firsts + sorted(n for n in found.backends if n not in FIRST_PARTY_BACKENDS)
    diagnostics: list[Diagnostic] = list(found.diagnostics)
    backends: list[Backend] = []
    refused: dict[str, str] = {}
    for name in names:
        entry = found.backends.get(name)
        if (
            entry is not None
            and imported is not None
            and entry.modules
            and not imported & set(entry.modules)
        ):
            continue  # irrelevant to this module (Backend.relevant would say so)
        if entry is None:
            refused[name] = "not installed"
            diagnostics.append(
                Diagnostic(
                    "E2003",
                    f"backend {name!r} is listed in [tool.ppy] backends of {config.path} "
                    "but not installed",
                    hint=f"pip install the distribution providing {name!r}, or remove it "
                    "from the list",
                )
            )
            continue
        try:
            instance = load(entry)
        except PluginError as exc:
            diagnostics.append(exc.diagnostic)
            refused[name] = exc.diagnostic.message
            continue
        backends.append(cast("Backend", instance))
    return BackendSet(tuple(backends), tuple(diagnostics), refused)


__all__ = [
    "PLUGIN_GROUP",
    "BACKEND_GROUP",
    "RUNTIME_GROUP",
    "LOADER_GROUP",
    "as_record",
    "FIRST_PARTY",
    "FIRST_PARTY_BACKENDS",
    "FirstParty",
    "Entry",
    "Discovered",
    "Activation",
    "BackendSet",
    "discover",
    "enablement",
    "load",
    "activate",
    "load_backends",
    "normalize",
]
