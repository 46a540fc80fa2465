"""Contract checks for a plugin's or backend's own tests.

Every plugin and backend distribution owes the core the same things: each entry
point names a factory that creates a Plugin (Backend) of that name speaking the
core's interface; first-party ones match the core's table; the fingerprint has a
stated format, is stable across processes, and says `=none` when the library is
missing; importing the package imports no library. A distribution's
`tests/test_contract.py` states its specifics and either subclasses
ContractSuite (every check, once per entry point) or calls the checks itself:

    from ppy_core import testing

    DIST = testing.Distribution.of(__file__)  # the folder holding pyproject.toml

    def test_importing_the_runtime_imports_no_library() -> None:
        testing.check_lazy_imports(DIST, ("vecmath",), modules=("vecmath_ppy.runtime",))

    def test_fingerprint() -> None:
        testing.check_fingerprint(DIST, "plugins", "vecmath", r"v1:vecmath=\\S+")

A group is "plugins" or "backends" (the entry-point group without `ppy.`). A
failed check raises ContractError, an AssertionError (so any runner reports a
failure), naming the distribution, the entry point and what differs. Checks that
need a fresh interpreter start one with the distribution's folders and the
`ppy_core` in use first on PYTHONPATH.

Importing this module imports neither pytest nor any library or plugin; pytest is
imported only to skip (`check_discovered` when the distribution is not installed,
ContractSuite's fingerprint test when `requires` is missing).
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final, Literal

from ppy_core.interface.backend import INTERFACE as BACKEND_INTERFACE
from ppy_core.interface.backend import Backend
from ppy_core.interface.discovery import (
    FIRST_PARTY,
    FIRST_PARTY_BACKENDS,
    FirstParty,
    discover,
    normalize,
)
from ppy_core.interface.plugin import INTERFACE as PLUGIN_INTERFACE
from ppy_core.interface.plugin import Plugin
from ppy_core.runtime.adapter import RuntimeAdapter
from ppy_core.runtime.adapter import registry as runtime_registry
from ppy_core.testing.session import kernels_missing, private_cache, project_folder
from ppy_core.testing.ways import ThreeWays, three_ways

Group = Literal["plugins", "backends"]
NONE_FINGERPRINT: Final = r"v\d+:\w+=none"  # what a fingerprint says without its library
TIMEOUT_S: Final = 300  # for one fresh interpreter
_CORE_FOLDER: Final = Path(__file__).resolve().parents[1]  # holds the ppy_core in use

# Run in a fresh interpreter: block libraries, import modules, create entry points,
# print (as JSON) their fingerprints and which of the named libraries got imported.
_CHILD: Final = """\
import importlib, json, sys

ask = json.loads(sys.argv[1])
blocked = set(ask["blocked"])


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None


for loaded in [m for m in sys.modules if m.partition(".")[0] in blocked]:
    del sys.modules[loaded]
sys.meta_path.insert(0, Blocker())
for module in ask["modules"]:
    importlib.import_module(module)
fingerprints = {}
for key, value in ask["entries"]:
    module, _, attr = value.partition(":")
    made = getattr(importlib.import_module(module), attr)()
    made.name, getattr(made, "modules", ())
    if ask["fingerprint"] and hasattr(made, "fingerprint"):  # runtime adapters have none
        fingerprints[key] = made.fingerprint()
imported = [m for m in ask["libraries"] if m in sys.modules]
print(json.dumps({"fingerprints": fingerprints, "imported": imported}))
"""


class ContractError(AssertionError):
    """A distribution breaks its contract with the core; the message says where."""


@dataclass(frozen=True, slots=True)
class Distribution:
    """A plugin or backend distribution in source form: `root` holds its
    pyproject.toml; `path` lists the folders a fresh interpreter needs first on its
    path to import it (default: `root`). Its package must be importable by the
    test process too (installed, or on sys.path)."""

    root: Path
    path: tuple[Path, ...] = ()

    @classmethod
    def of(cls, test_file: str | os.PathLike[str]) -> Distribution:
        """The distribution whose `tests/` folder holds `test_file` (pass `__file__`)."""
        return cls(Path(test_file).resolve().parents[1])

    @property
    def project(self) -> Mapping[str, Any]:
        """The `[project]` table of its pyproject.toml."""
        text = (self.root / "pyproject.toml").read_text(encoding="utf-8")
        project: Mapping[str, Any] = tomllib.loads(text)["project"]
        return project

    @property
    def name(self) -> str:
        """Its distribution name, as written (`ppy-numpy`)."""
        return str(self.project["name"])

    def entry_points(self) -> dict[tuple[str, str], str]:
        """(group, name) -> `module:factory`, for every `ppy.*` group it declares."""
        tables: Mapping[str, Mapping[str, str]] = self.project.get("entry-points", {})
        return {
            (group.removeprefix("ppy."), name): value
            for group, table in tables.items()
            if group.startswith("ppy.")
            for name, value in table.items()
        }

    def value(self, group: Group, name: str) -> str:
        """The `module:factory` of entry point `name` in `ppy.<group>`."""
        value = self.entry_points().get((group, name))
        _expect(value is not None, f"{_who(self, group, name)}: not in its pyproject.toml")
        return str(value)

    def create(self, group: Group, name: str) -> Any:
        """Load the entry point's factory in this process and call it."""
        factory = md.EntryPoint(name, self.value(group, name), f"ppy.{group}").load()
        _expect(callable(factory), f"{_who(self, group, name)}: {factory!r} is not callable")
        return factory()

    def python(self, code: str, *args: str) -> str:
        """Run `code` (with `args` in sys.argv) in a fresh interpreter; its stdout."""
        folders = [*(self.path or (self.root,)), _CORE_FOLDER]
        env_path = os.environ.get("PYTHONPATH", "")
        search = os.pathsep.join([*map(str, folders), *filter(None, [env_path])])
        try:
            done = subprocess.run(
                [sys.executable, "-c", code, *args],
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": search},
                timeout=TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ContractError(
                f"{self.name}: a fresh interpreter ran over {TIMEOUT_S} s"
            ) from None
        _expect(done.returncode == 0, f"{self.name}: a fresh interpreter failed:\n{done.stderr}")
        return done.stdout


def check_entry_points(dist: Distribution, expected: Iterable[tuple[str, str]]) -> None:
    """`dist` declares exactly the entry points `expected`, as (group, name) pairs."""
    declared, wanted = set(dist.entry_points()), set(expected)
    _expect(
        declared == wanted,
        f"{dist.name}: declares entry points {sorted(declared - wanted)} not expected, "
        f"lacks {sorted(wanted - declared)}",
    )


def check_entry_point(
    dist: Distribution, group: Group, name: str, *, factory: str | None = None
) -> Plugin | Backend:
    """Entry point `name` resolves to a factory (exactly `factory`, when given) that
    creates a Plugin (Backend) called `name` speaking the core's interface; returns it."""
    who = _who(dist, group, name)
    value = dist.value(group, name)
    _expect(factory in (None, value), f"{who}: names {value!r}, not {factory!r}")
    made: Plugin | Backend = dist.create(group, name)
    base, interface = (
        (Plugin, PLUGIN_INTERFACE) if group == "plugins" else (Backend, BACKEND_INTERFACE)
    )
    _expect(
        isinstance(made, base),
        f"{who}: {value} made a {type(made).__name__}, not a {base.__name__}",
    )
    _expect(made.name == name, f"{who}: {value} made one called {made.name!r}")
    _expect(
        made.interface == interface,
        f"{who}: speaks interface {made.interface!r}, the core {interface}",
    )
    return made


def check_claims(dist: Distribution, name: str, modules: Iterable[str]) -> None:
    """Plugin `name` claims exactly the top-level modules `modules`, in that order."""
    who, wanted = _who(dist, "plugins", name), tuple(modules)
    claimed = tuple(dist.create("plugins", name).modules)
    _expect(claimed == wanted, f"{who}: claims {claimed}, not {wanted}")
    nested = [m for m in claimed if "." in m]
    _expect(not nested, f"{who}: claims {nested}, which are not top-level modules")


def check_first_party(dist: Distribution, group: Group, name: str) -> None:
    """The core's first-party table lists `name` as `dist`'s, claiming what it claims."""
    known, who = _first_party(group, name), _who(dist, group, name)
    if known is None:
        raise ContractError(f"{who}: not in ppy_core.interface.discovery's first-party table")
    _expect(
        known.distribution == normalize(dist.name),
        f"{who}: the first-party table says it comes from {known.distribution}",
    )
    if group == "plugins":
        check_claims(dist, name, known.modules)


def check_detected(dist: Distribution, group: Group, name: str) -> Mapping[str, str]:
    """`detected()` says something, all of it text; returns it."""
    detected: Mapping[str, str] = dist.create(group, name).detected()
    who = _who(dist, group, name)
    _expect(bool(detected), f"{who}: detected() is empty")
    odd = {k: v for k, v in detected.items() if not (isinstance(k, str) and isinstance(v, str))}
    _expect(not odd, f"{who}: detected() holds items that are not text: {odd!r}")
    return detected


def check_fingerprint(
    dist: Distribution, group: Group, name: str, pattern: str | re.Pattern[str]
) -> str:
    """The fingerprint matches `pattern` in full and is the same from a second
    instance and from a fresh interpreter; returns it."""
    who = _who(dist, group, name)
    fingerprint: str = dist.create(group, name).fingerprint()
    _expect(
        re.fullmatch(pattern, fingerprint) is not None,
        f"{who}: fingerprint {fingerprint!r} does not match {_text(pattern)!r}",
    )
    again = dist.create(group, name).fingerprint()
    _expect(again == fingerprint, f"{who}: fingerprint {fingerprint!r}, then {again!r}")
    fresh = _fresh(dist, {"entries": [(group, name)], "fingerprint": True})
    elsewhere = fresh["fingerprints"][f"{group}/{name}"]
    _expect(
        elsewhere == fingerprint,
        f"{who}: fingerprint {fingerprint!r} here, {elsewhere!r} in a fresh interpreter",
    )
    return fingerprint


def check_fingerprint_without(
    dist: Distribution,
    group: Group,
    name: str,
    blocked: Iterable[str],
    pattern: str | re.Pattern[str] = NONE_FINGERPRINT,
) -> str:
    """In a fresh interpreter where the libraries `blocked` cannot be imported (a
    meta-path finder refuses them), the fingerprint matches `pattern`, by default
    `vN:LIB=none`; returns it."""
    ask = {"entries": [(group, name)], "blocked": sorted(blocked), "fingerprint": True}
    fingerprint: str = _fresh(dist, ask)["fingerprints"][f"{group}/{name}"]
    _expect(
        re.fullmatch(pattern, fingerprint) is not None,
        f"{_who(dist, group, name)}: without {ask['blocked']}, fingerprint {fingerprint!r} "
        f"does not match {_text(pattern)!r}",
    )
    return fingerprint


def check_lazy_imports(
    dist: Distribution,
    libraries: Iterable[str],
    *,
    modules: Iterable[str] = (),
    fingerprint: bool = False,
) -> None:
    """In a fresh interpreter, importing `modules`, then creating every entry point's
    object (and asking its fingerprint, when `fingerprint`), imports none of the
    modules `libraries` (checked by name in sys.modules)."""
    # a `ppy.loaders` entry point is a function the runtime calls when an artifact's
    # site names it (its library is in use then), not a factory: it is not created
    ask = {
        "modules": list(modules),
        "entries": [e for e in dist.entry_points() if e[0] != "loaders"],
        "libraries": list(libraries),
        "fingerprint": fingerprint,
    }
    imported = _fresh(dist, ask)["imported"]
    did = "creating its plugins and backends" + (" and their fingerprints" if fingerprint else "")
    _expect(not imported, f"{dist.name}: {did} imports {imported}")


def check_runtime_adapter(dist: Distribution, name: str, *, factory: str | None = None) -> None:
    """`ppy.runtimes` entry point `name` (a library) resolves to a factory (exactly
    `factory`, when given) that creates a RuntimeAdapter called `name`; where `dist` is
    installed, the core's registry finds it with that value."""
    who = f"{dist.name}: runtime adapter {name!r}"
    value = dist.entry_points().get(("runtimes", name))
    _expect(value is not None, f"{who}: not in its pyproject.toml")
    _expect(factory in (None, value), f"{who}: names {value!r}, not {factory!r}")
    made = md.EntryPoint(name, str(value), "ppy.runtimes").load()()
    _expect(
        isinstance(made, RuntimeAdapter),
        f"{who}: {value} made a {type(made).__name__}, not a RuntimeAdapter",
    )
    _expect(made.name == name, f"{who}: {value} made one called {made.name!r}")
    try:
        md.distribution(dist.name)
    except md.PackageNotFoundError:
        return  # not installed here: there is no metadata to find it in
    entry = runtime_registry(refresh=True).runtimes.get(name)
    _expect(
        entry is not None and normalize(entry.distribution) == normalize(dist.name),
        f"{who}: the installed metadata does not register it (reinstall {dist.name})",
    )
    _expect(entry.value == value, f"{who}: installed as {entry.value!r}, not {value!r}")  # type: ignore[union-attr]


def check_discovered(dist: Distribution, group: Group, name: str) -> None:
    """Discovery, reading the installed metadata, finds the entry point as `dist`'s,
    with its pyproject's value, first-party exactly when the core's table says so.
    Skips the test (pytest) when `dist` is not installed."""
    found = discover(refresh=True)
    entry = (found.plugins if group == "plugins" else found.backends).get(name)
    if entry is None:
        import pytest

        pytest.skip(f"{dist.name} is not installed in this environment")
    who = _who(dist, group, name)
    _expect(
        normalize(entry.distribution) == normalize(dist.name),
        f"{who}: installed by {entry.distribution}",
    )
    value = dist.value(group, name)
    _expect(entry.value == value, f"{who}: installed as {entry.value!r}, declared {value!r}")
    known = _first_party(group, name)
    first_party = known is not None and known.distribution == normalize(dist.name)
    _expect(
        entry.first_party == first_party,
        f"{who}: discovered with first_party={entry.first_party}, the table says {first_party}",
    )


def check_dialects(plugin: Any, text: str) -> Any:
    """`plugin`'s dialects make `text` (IR using their ops) parse: unknown to the core
    alone, parsed, verified and printed back unchanged once `register_dialects()` is in
    the registry, each dialect named after the plugin or an IR the plugin owns. Returns
    the parsed operation for the caller's own assertions."""
    from ppy_core.diagnostics import InvalidIRError
    from ppy_core.ir import core_registry, parse_ir, print_ir, verify

    who = f"plugin {getattr(plugin, 'name', type(plugin).__name__)!r}"
    dialects = tuple(plugin.register_dialects())
    _expect(bool(dialects), f"{who}: register_dialects() returned none")
    try:
        parse_ir(text, core_registry())
    except InvalidIRError:
        pass
    else:
        raise ContractError(f"{who}: the text parses without the plugin's dialects")
    registry = core_registry()
    for dialect in dialects:
        registry.register(dialect)
    op = parse_ir(text, registry)
    verify(op)
    printed = print_ir(op)
    _expect(printed == text, f"{who}: the text printed back differs:\n{printed}")
    return op


class ContractSuite:
    """The checks above as pytest tests, once per entry point (ids like
    `[plugins-numpy]`): subclass it as `TestContract` and state the specifics.

        class TestContract(testing.ContractSuite):
            dist = testing.Distribution.of(__file__)
            entries = (("plugins", "numpy", r"v1:numpy=\\S+"),)  # (group, name, pattern)
            libraries = ("numpy",)  # importing the package imports none of these
            blocked = ("numpy",)  # without these, every fingerprint says `=none`
            requires = "numpy"  # the fingerprint test skips without it
            runtimes = ("numpy",)  # its `ppy.runtimes` adapters (see ppy_core.runtime.adapter)

    A test that does not apply is set to None in the subclass, with a comment why.
    Third-party distributions set `first_party = False`."""

    dist: ClassVar[Distribution]
    entries: ClassVar[Sequence[tuple[Group, str, str]]] = ()
    libraries: ClassVar[tuple[str, ...]] = ()
    blocked: ClassVar[tuple[str, ...]] = ()
    requires: ClassVar[str | None] = None
    first_party: ClassVar[bool] = True
    runtimes: ClassVar[tuple[str, ...]] = ()  # `ppy.runtimes` adapters it registers
    loaders: ClassVar[tuple[str, ...]] = ()  # `ppy.loaders` its backends' units name

    def pytest_generate_tests(self, metafunc: Any) -> None:
        """pytest's hook: tests taking `group, name` (and `pattern`) run per entry."""
        names = [n for n in ("group", "name", "pattern") if n in metafunc.fixturenames]
        if names:
            rows = [entry[: len(names)] for entry in self.entries]
            ids = [f"{group}-{name}" for group, name, _ in self.entries]
            metafunc.parametrize(names, rows, ids=ids)

    def test_entry_points_are_exactly_these(self) -> None:
        expected = [(group, name) for group, name, _ in self.entries]
        check_entry_points(
            self.dist,
            [
                *expected,
                *(("runtimes", n) for n in self.runtimes),
                *(("loaders", n) for n in self.loaders),
            ],
        )

    def test_runtime_adapters_create_what_they_name(self) -> None:
        for name in self.runtimes:
            check_runtime_adapter(self.dist, name)

    def test_entry_point_creates_what_it_names(self, group: Group, name: str) -> None:
        check_entry_point(self.dist, group, name)
        if self.first_party:
            check_first_party(self.dist, group, name)

    def test_importing_the_package_imports_no_library(self) -> None:
        check_lazy_imports(self.dist, self.libraries)

    def test_fingerprint_names_the_build_found(self, group: Group, name: str, pattern: str) -> None:
        if self.requires is not None:
            import pytest

            pytest.importorskip(self.requires)
        check_fingerprint(self.dist, group, name, pattern)

    def test_detected_is_text(self, group: Group, name: str) -> None:
        check_detected(self.dist, group, name)

    def test_installed_metadata_is_discovered(self, group: Group, name: str) -> None:
        check_discovered(self.dist, group, name)

    def test_fingerprint_without_the_library_says_none(self, group: Group, name: str) -> None:
        _expect(
            bool(self.blocked),
            f"{type(self).__name__}: name the libraries to block in `blocked`, or set "
            "this test to None",
        )
        check_fingerprint_without(self.dist, group, name, self.blocked)


def _fresh(dist: Distribution, ask: Mapping[str, Any]) -> dict[str, Any]:
    entries = [(f"{group}/{name}", dist.value(group, name)) for group, name in ask["entries"]]
    request: dict[str, Any] = {"blocked": [], "modules": [], "libraries": [], "fingerprint": False}
    request.update({**ask, "entries": entries})
    out = dist.python(_CHILD, json.dumps(request))
    answer: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return answer


def _first_party(group: Group, name: str) -> FirstParty | None:
    return (FIRST_PARTY if group == "plugins" else FIRST_PARTY_BACKENDS).get(name)


def _who(dist: Distribution, group: str, name: str) -> str:
    return f"{dist.name} {group.removesuffix('s')} {name!r}"


def _text(pattern: str | re.Pattern[str]) -> str:
    return pattern if isinstance(pattern, str) else pattern.pattern


def _expect(ok: bool, message: str) -> None:
    if not ok:
        raise ContractError(message)


__all__ = [
    "ContractError",
    "kernels_missing",
    "private_cache",
    "project_folder",
    "ThreeWays",
    "three_ways",
    "Distribution",
    "Group",
    "NONE_FINGERPRINT",
    "TIMEOUT_S",
    "check_entry_points",
    "check_entry_point",
    "check_claims",
    "check_first_party",
    "check_detected",
    "check_fingerprint",
    "check_fingerprint_without",
    "check_lazy_imports",
    "check_discovered",
    "check_runtime_adapter",
    "check_dialects",
    "ContractSuite",
]
