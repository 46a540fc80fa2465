"""What the run path needs of the installed entry points and library builds, cheaply.

A cached start must not scan every distribution's metadata, nor import a plugin to
ask its fingerprint: `interface.discovery.discover` keeps the entry points it read
in a record (`ppy_core.cache.records`) valid while the metadata folders and the ppy
distributions' entry_points.txt are unchanged, and this module reads that record
(a few `stat` calls and one small file). A library build's fingerprint is kept the
same way, keyed by the identity (path, size, mtime, inode) of the plugin's code and
of the library's top-level files, so an artifact's freshness check imports neither
the plugin nor the library. Whenever a record is missing or stale, the slow path
(discovery, loading the plugin) runs once and writes it again.

A name is looked up only in what the metadata registers: nothing a manifest names is
imported unless an installed distribution registers it.
"""

from __future__ import annotations

import collections  # (imported by `site` already: no cost on a start)
import contextlib
import os
import sys

from ppy_core.cache import records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

#: one registered entry point as the discovery record keeps it (per table, a list of
#: these fields in this order): the record's schema, here only. `interface.discovery`
#: writes rows with `row_data` and reads them back with `parse_row`, as `table` does;
#: `value` is the entry point's "module:factory", `modules` the top-level modules claimed
Row = collections.namedtuple(
    "Row", ("kind", "name", "value", "distribution", "version", "first_party", "modules")
)
_TABLES = {"plugin": "plugins", "backend": "backends", "runtime": "runtimes", "loader": "loaders"}
_rows: dict[tuple[str, ...], dict[str, dict[str, Row]]] = {}


class Unregistered(LookupError):
    """A manifest names a loader or adapter no installed distribution registers: it is
    refused (E3007), never imported, and that part of the program runs as Python."""


def may_hold_metadata(entry: str) -> bool:
    """Whether a sys.path entry may hold distribution metadata: a folder with a
    `*.dist-info`/`*.egg-info` in it, or anything that is not a readable folder."""
    try:
        names = os.listdir(entry or ".")
    except OSError:
        return True
    return any(name.endswith((".dist-info", ".egg-info")) for name in names)


def search_path(path: Sequence[str] | None = None) -> tuple[str, ...]:
    """The entries of `path` (default sys.path) that may hold metadata."""
    return tuple(p for p in (sys.path if path is None else path) if may_hold_metadata(p))


def discovery_record(search: tuple[str, ...]) -> str:
    """The name of the record of the entry points found on `search`."""
    return f"discovery:{sys.executable}:{search!r}"


def table(kind: str) -> dict[str, Row]:
    """The registered entries of `kind` ("plugin", "backend", "runtime", "loader") by
    name: from the discovery record when it is valid, else from a metadata scan."""
    search = search_path()
    found = _rows.get(search)
    if found is None:
        data = records.read(discovery_record(search))
        if not isinstance(data, dict):
            from ppy_core.interface.discovery import as_record, discover  # writes the record

            data = as_record(discover())
        found = {k: _parse(data.get(t, [])) for k, t in _TABLES.items()}
        _rows[search] = found
    return found[kind]


def parse_row(data: Sequence[Any]) -> Row:
    """A record's row, each field of its type: TypeError or ValueError where `data` is
    no row (a record written by another version)."""
    kind, name, value, distribution, version, first_party, modules = data
    return Row(
        str(kind),
        str(name),
        str(value),
        str(distribution),
        str(version),
        bool(first_party),
        tuple(str(m) for m in modules),
    )


def row_data(row: Row) -> list[object]:
    """`row` as the record's plain data (JSON)."""
    return [*row[:-1], list(row.modules)]


def _parse(rows: list[list[Any]]) -> dict[str, Row]:
    out: dict[str, Row] = {}
    for r in rows:
        try:
            row = parse_row(r)
        except (TypeError, ValueError):
            continue
        out[row.name] = row
    return out


def forget() -> None:
    """Drop what this process read (after the installed distributions changed)."""
    _rows.clear()


def plugin_enabled(
    name: str, first_party: bool, said: bool | None, config_path: object = None
) -> tuple[bool, str]:
    """Whether plugin `name` may load, and why, given what its project's
    `[tool.ppy.plugins.NAME] enabled` says (`said`, None when unsaid): a first-party
    plugin unless it says false, a third-party one only when it says true."""
    where = f" in {config_path}" if config_path else ""
    if said is False:
        return False, f"disabled by [tool.ppy.plugins.{name}] enabled = false{where}"
    if first_party:
        return True, "enabled"
    if said is True:
        return True, f"enabled by [tool.ppy.plugins.{name}] enabled = true{where}"
    return False, (
        f"third-party, not enabled: add [tool.ppy.plugins.{name}] enabled = true to use it"
    )


def plugin_settings(source: str) -> tuple[str, dict[str, bool | None]]:
    """(its pyproject.toml or "", what it says of each plugin's `enabled`) for the
    project of file `source`; read through a record kept while the file is unchanged.
    ConfigError when the configuration is invalid."""
    pyproject = records.nearest_pyproject(source)
    if pyproject is None:
        return "", {}
    name = f"plugin-settings:{pyproject}"
    known = records.read(name)
    if isinstance(known, dict):
        return pyproject, {str(k): v for k, v in known.items() if v in (True, False, None)}
    from ppy_core.project.config import load_config

    config = load_config(pyproject)
    settings = {n: p.enabled for n, p in config.plugins.items()}
    records.write(name, [pyproject], settings)
    return pyproject, settings


def _origin(module: str) -> str | None:
    """Where top-level `module` is installed, found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module.partition(".")[0])
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.has_location else None


def build_files(value: str, libraries: Sequence[str]) -> list[str]:
    """The files whose identity stands for a plugin's build and its libraries': the
    plugin's package code, and each library's top-level files (an upgrade rewrites
    them). Found by `find_spec`: nothing is imported."""
    files = records.package_files(_origin(value.partition(":")[0].strip()))
    for library in libraries:
        origin = _origin(library)
        if origin is None:
            files.append(f"<missing {library}>")
            continue
        folder = os.path.dirname(origin)
        if os.path.basename(origin).startswith("__init__."):
            with contextlib.suppress(OSError):
                files.extend(sorted(e.path for e in os.scandir(folder) if e.is_file()))
        else:
            files.append(origin)
    return files


def plugin_fingerprint(row: Row) -> str:
    """The fingerprint plugin `row` reports on this machine, from its record while the
    plugin's and its libraries' files are unchanged; else the plugin is loaded and
    asked (RuntimeError saying why when it cannot be). Records are per machine."""
    name, value = row.name, row.value
    machine = os.uname() if hasattr(os, "uname") else ("", "")
    record = f"fingerprint:{row.kind}:{name}:{value}:{row.distribution}:{row.version}:{machine[1]}"
    known = records.read(record)
    if isinstance(known, dict) and isinstance(known.get("fingerprint"), str):
        return str(known["fingerprint"])
    from ppy_core.interface.discovery import discover, load

    entry = discover().plugins.get(name)
    if entry is None:
        raise RuntimeError(f"plugin {name} is not installed")
    try:
        plugin = load(entry)
        fingerprint = plugin.fingerprint()
        libraries = tuple(getattr(plugin, "modules", ())) or row.modules
    except Exception as exc:
        raise RuntimeError(f"plugin {name} failed to load: {exc}") from None
    files = build_files(value, libraries)
    records.write(record, files, {"fingerprint": fingerprint})
    return str(fingerprint)


__all__ = [
    "Row",
    "Unregistered",
    "build_files",
    "discovery_record",
    "forget",
    "may_hold_metadata",
    "parse_row",
    "plugin_enabled",
    "plugin_fingerprint",
    "plugin_settings",
    "row_data",
    "search_path",
    "table",
]
