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


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    import json
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".manifest-")
    with os.fdopen(fd, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def read_manifest(directory: Path) -> dict[str, Any]:
    try:
        manifest = jsontext.read(directory / MANIFEST)
    except (OSError, ValueError) as exc:
        raise _error(
            f"{directory / MANIFEST}: unreadable artifact manifest: {exc}",
            "E3005",
            "rebuild the artifact with `ppy build`",
        ) from None
    if manifest.get("format") != 1:
        raise _error(
            f"{directory}: artifact format {manifest.get('format')!r} is not 1",
            "E3005",
            "rebuild the artifact with this version of ppy",
        )
    return manifest


def read_code(directory: Path, manifest: dict[str, Any]) -> CodeType:
    if manifest.get("python") != sys.implementation.cache_tag:
        raise _error(
            f"{directory}: built for {manifest.get('python')}, this is "
            f"{sys.implementation.cache_tag}",
            "E3003",
            "rebuild the artifact with this Python",
        )
    try:
        code = marshal.loads((directory / "module.code").read_bytes())
    except (OSError, ValueError, EOFError, TypeError) as exc:
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


__all__ = ["MANIFEST", "write_manifest", "read_manifest", "read_code"]
