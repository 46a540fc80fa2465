"""Fingerprints and cache keys.

A cache key is the SHA-256 of a canonical JSON document holding core's version,
the source's digest, the options, the fingerprints of exactly the plugins active
for the module (those whose library it imports) and of the backends, and the
digests of any extra files the build read. `hash()` is never used: it is salted
per process. Keying a module imports nothing its imports do not call for.
"""

from __future__ import annotations

import ast
import enum
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

from ppy_core import __version__
from ppy_core.diagnostics import Diagnostic, InternalError, PluginError

if TYPE_CHECKING:
    from ppy_core.interface.backend import Backend
    from ppy_core.interface.plugin import Plugin

KEY_FORMAT: Final = 1


def installed_version(distribution: str) -> str | None:
    """The installed version of `distribution`, read from its metadata (nothing is
    imported), or None. For fingerprints of libraries a plugin does not import."""
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _fingerprint(kind: str, thing: Plugin | Backend) -> str:
    try:
        value = thing.fingerprint()
    except Exception as exc:
        raise PluginError(
            f"{kind} {thing.name!r}: fingerprint() raised {type(exc).__name__}: {exc}",
            hint=f"without a fingerprint nothing it compiles can be cached; fix or disable {kind} "
            f"{thing.name!r}",
            code="E1904",
        ) from None
    if not isinstance(value, str) or not value:
        raise PluginError(
            f"{kind} {thing.name!r}: fingerprint() returned {value!r}, not a non-empty str",
            hint="a fingerprint is text like 'v1:numpy=2.1.0:simd=...'",
            code="E1905",
        )
    return value


def plugin_fingerprints(plugins: Iterable[Plugin]) -> dict[str, str]:
    """Each plugin's fingerprint by plugin name. Raises PluginError if one fails."""
    return {p.name: _fingerprint("plugin", p) for p in plugins}


def backend_fingerprints(backends: Iterable[Backend]) -> dict[str, str]:
    """Each backend's fingerprint by backend name. Raises PluginError if one fails."""
    return {b.name: _fingerprint("backend", b) for b in backends}


def typing_fingerprint(kind: str, thing: Plugin | Backend) -> str:
    """What decides `thing`'s typing answers, for `ppy check`, read without importing
    its libraries: its name and version and each library it claims, as installed (its
    own code is keyed apart, by `code_ids`). `fingerprint()` describes
    what a build links against (torch's ABI, CUDA, CPU features) and may import the
    library, seconds for torch, which typing does not depend on. A plugin that claims
    no library is asked every time."""
    libraries = tuple(getattr(thing, "modules", ()))
    if not libraries:
        return _fingerprint(kind, thing)
    versions = ":".join(f"{m}={_library_version(m)}" for m in libraries)
    return f"typing:{thing.name}:v{thing.version}:{versions}"


def _library_version(module: str) -> str:
    """An installed module's identity without importing it or parsing metadata (which
    costs more than typing a file): its top-level file's size and mtime."""
    import importlib.util
    import os

    try:
        spec = importlib.util.find_spec(module)
        stat = os.stat(spec.origin) if spec is not None and spec.origin else None
    except (ImportError, ValueError, OSError):
        stat = None
    return f"{stat.st_size}@{stat.st_mtime_ns}" if stat is not None else "none"


def usable_fingerprints(
    kind: str, things: Iterable[Plugin] | Iterable[Backend], *, typing: bool = False
) -> tuple[dict[str, str], list[Diagnostic]]:
    """Each fingerprint by name, leaving out what has none: a plugin or backend whose
    `fingerprint()` raises or returns no text is deactivated for the module (its code
    runs as Python) with one E1908 warning naming it and the exception, so one broken
    distribution never stops a run. `typing`: what typing depends on (`typing_fingerprint`)."""
    found: dict[str, str] = {}
    dropped: list[Diagnostic] = []
    for thing in things:
        try:
            found[thing.name] = (
                typing_fingerprint(kind, thing) if typing else _fingerprint(kind, thing)
            )
        except PluginError as exc:
            undo = (
                f"[tool.ppy.plugins.{thing.name}] enabled = false"
                if kind == "plugin"
                else "[tool.ppy] backends = [...] without it"
            )
            dropped.append(
                Diagnostic(
                    "E1908",
                    f"{exc.diagnostic.message}; {kind} {thing.name!r} is left out of this module",
                    hint="the module runs, as Python where it needed that "
                    f"{kind}; fix or upgrade it, or silence this with {undo}",
                    severity="warning",
                )
            )
    return found, dropped


def fingerprints(plugins: Iterable[Plugin], backends: Iterable[Backend]) -> dict[str, str]:
    """All fingerprints, keyed `plugin:NAME` and `backend:NAME` (names may repeat across
    the two kinds: a package may ship a plugin and a backend of one name)."""
    result = {f"plugin:{n}": fp for n, fp in plugin_fingerprints(plugins).items()}
    result.update({f"backend:{n}": fp for n, fp in backend_fingerprints(backends).items()})
    return result


def _canonical(value: Any, where: str) -> Any:
    """`value` as plain JSON data with one spelling per value (sets sorted, paths as str)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return {"float": repr(value)}
        return value
    if isinstance(value, enum.Enum):
        return _canonical(value.value, where)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, bytes):
        return {"sha256": hashlib.sha256(value).hexdigest()}
    if isinstance(value, Mapping):
        return {str(k): _canonical(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, set | frozenset):
        items = [_canonical(v, where) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    raise InternalError(
        f"cache key option {where} is a {type(value).__name__}, which has no stable spelling",
        hint="pass options as str, int, float, bool, None, lists, sets, or mappings of them",
    )


def cache_key(
    source: bytes,
    options: Mapping[str, Any],
    plugin_fps: Mapping[str, str],
    backend_fps: Mapping[str, str],
    extra_files: Mapping[str, bytes] | None = None,
) -> str:
    """The cache key of one module: hex SHA-256 over a canonical JSON document."""
    document = {
        "format": KEY_FORMAT,
        "core": __version__,
        "source": hashlib.sha256(source).hexdigest(),
        "options": _canonical(dict(options), "options"),
        "plugins": {str(k): str(v) for k, v in plugin_fps.items()},
        "backends": {str(k): str(v) for k, v in backend_fps.items()},
        "files": {str(k): hashlib.sha256(v).hexdigest() for k, v in (extra_files or {}).items()},
    }
    text = json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def imported_modules(source: bytes | str | ast.Module) -> frozenset[str]:
    """The absolute modules a module's source imports anywhere (`import a.b` gives
    "a.b"; `from a import b` gives "a" and "a.b"). Relative imports are left out: they
    are the project's own modules, never a library. Unparseable source gives none."""
    if isinstance(source, ast.Module):
        tree = source
    else:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return frozenset()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names if a.name != "*")
    return frozenset(found)


__all__ = [
    "KEY_FORMAT",
    "fingerprints",
    "plugin_fingerprints",
    "backend_fingerprints",
    "usable_fingerprints",
    "cache_key",
    "imported_modules",
    "installed_version",
]
