"""Reading an artifact: its manifest and its module code. Imports no compiler code."""

from __future__ import annotations

import marshal
import os
import sys
from types import CodeType

from ppy_core.runtime import jsontext

TYPE_CHECKING = False  # `typing` and ppy_core.diagnostics cost a launcher ~13 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ppy_core.diagnostics import CacheError

MANIFEST = "manifest.json"


def _error(message: str, code: str, hint: str) -> CacheError:
    from ppy_core.diagnostics import CacheError  # only when an artifact is unusable

    return CacheError(message, code=code, hint=hint)


def coded(exc: BaseException) -> bool:
    """Whether `exc` is one of ppy's coded errors, without importing the diagnostics
    (~8 ms on a start): one raised was imported by whoever raised it."""
    diagnostics = sys.modules.get("ppy_core.diagnostics")
    return diagnostics is not None and isinstance(exc, diagnostics.Error)


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    """Write a module's manifest, and beside it its run view (`runview`): what a start
    reads, without the megabytes only `ppy explain` reads."""
    import json
    import tempfile

    from ppy_core.runtime import runview

    raw = json.dumps(manifest, indent=1, sort_keys=True).encode("utf-8")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".manifest-")
    with os.fdopen(fd, "wb") as f:
        f.write(raw)
    os.replace(tmp, path)
    runview.write(path.parent, manifest, raw)


#: the most bytes a manifest or a module's code may have: anything larger is not ppy's
MAX_BYTES = 64 << 20


def read_manifest(directory: Path) -> dict[str, Any]:
    """A module folder's manifest, its shape checked (`check_module`): E3005 otherwise."""
    path = directory / MANIFEST
    try:
        manifest = jsontext.read(path, max_bytes=MAX_BYTES)
    except (OSError, ValueError) as exc:
        raise _invalid(path, f"unreadable artifact manifest: {exc}") from None
    problem = check_module(manifest)
    if problem:
        raise _invalid(path, f"invalid artifact manifest: {problem}")
    return manifest  # type: ignore[no-any-return]


def _invalid(path: Path, message: str) -> CacheError:
    return _error(f"{path}: {message}", "E3005", "rebuild the artifact with `ppy build`")


def _is(value: object, kind: type) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def check_module(manifest: object) -> str:
    """Why a module's manifest is not one the runtime may use ('' when it is): the
    types of everything `runtime.module` reads from it."""
    from ppy_core.runtime.integrity import safe_name

    if not isinstance(manifest, dict):
        return "not an object"
    if manifest.get("format") != 1:
        return f"format {manifest.get('format')!r} is not 1"
    module = manifest.get("module")
    if not (
        isinstance(module, dict)
        and isinstance(module.get("name"), str)
        and isinstance(module.get("path"), str)
    ):
        return "its module has no name or path"
    if not isinstance(manifest.get("python"), str):
        return "it names no Python"
    if not _strings(manifest.get("plugins", [])):
        return "its plugins are not names"
    components = manifest.get("components", {})
    if not isinstance(components, dict) or not all(isinstance(v, str) for v in components.values()):
        return "its components are not strings"
    units: set[int] = set()  # units checked already (a run view shares equal ones)
    for kind in ("function_sites", "expr_sites"):
        sites = manifest.get(kind)
        if not isinstance(sites, list):
            return f"its {kind} are not a list"
        for record in sites:
            if not (
                isinstance(record, dict)
                and _is(record.get("index"), int)
                and isinstance(record.get("id"), str)
                and isinstance(record.get("text", ""), str)
            ):
                return f"a record of its {kind} is malformed"
            unit = record.get("unit")
            if unit is None:
                continue
            if not (
                isinstance(record.get("store") or "", str) and _views(record.get("views") or [])
            ):
                return f"the unit of site {record['id']} is malformed"
            if id(unit) in units:
                continue
            if not (
                isinstance(unit, dict)
                and isinstance(unit.get("data"), dict)
                and _strings(unit.get("files"))
                and all(safe_name(f) for f in unit["files"])
                and isinstance(unit.get("runtime") or "", str)
                and isinstance(unit.get("loader") or "", str)
            ):
                return f"the unit of site {record['id']} is malformed"
            units.add(id(unit))
    return ""


def _views(views: object) -> bool:
    """A site's views (`RuntimeAdapter.takes_views`): [argument index, index or None]."""
    return isinstance(views, list) and all(
        isinstance(v, list) and len(v) == 2 and _is(v[0], int) and isinstance(v[1], list | None)
        for v in views
    )


def check_top(manifest: object) -> str:
    """Why an artifact's top manifest is not usable ('' when it is)."""
    from ppy_core.runtime.integrity import safe_name

    if not isinstance(manifest, dict):
        return "not an object"
    if manifest.get("format") != 1:
        return f"format {manifest.get('format')!r} is not 1"
    modules = manifest.get("modules")
    if not isinstance(modules, dict) or manifest.get("main") not in modules:
        return "it names no main module"
    for name, module in modules.items():
        if not (
            isinstance(name, str)
            and isinstance(module, dict)
            and safe_name(module.get("dir"))
            and isinstance(module.get("source"), str)
            and isinstance(module.get("key", ""), str)
        ):
            return f"its module {name!r} is malformed"
    if not isinstance(manifest.get("files"), dict) or not manifest["files"]:
        return "it records no file hashes (built by an older ppy)"
    return ""


def read_top(root: Path) -> dict[str, Any]:
    """An artifact's top manifest, its shape checked: E3005 otherwise."""
    path = root / MANIFEST
    try:
        manifest = jsontext.read(path, max_bytes=MAX_BYTES)
    except (OSError, ValueError) as exc:
        raise _invalid(path, f"unreadable artifact manifest: {exc}") from None
    problem = check_top(manifest)
    if problem:
        raise _invalid(path, f"invalid artifact manifest: {problem}")
    return manifest  # type: ignore[no-any-return]


def read_code(directory: Path, manifest: dict[str, Any]) -> CodeType:
    if manifest.get("python") != sys.implementation.cache_tag:
        raise _error(
            f"{directory}: built for {manifest.get('python')}, this is "
            f"{sys.implementation.cache_tag}",
            "E3003",
            "rebuild the artifact with this Python",
        )
    try:
        with open(directory / "module.code", "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise ValueError(f"more than {MAX_BYTES} bytes")
        code = marshal.loads(raw)
    except (OSError, ValueError, EOFError, TypeError, RecursionError, MemoryError) as exc:
        raise _error(
            f"{directory / 'module.code'}: unreadable: {exc}",
            "E3004",
            "rebuild the artifact with `ppy build`",
        ) from None
    if not isinstance(code, CodeType):
        raise _error(
            f"{directory / 'module.code'}: not a code object",
            "E3004",
            "rebuild the artifact with `ppy build`",
        )
    return code


__all__ = [
    "MANIFEST",
    "check_module",
    "coded",
    "check_top",
    "read_code",
    "read_manifest",
    "read_top",
    "write_manifest",
]
