"""Reading an artifact: its manifest and its module code. Imports no compiler code."""

from __future__ import annotations

import json
import marshal
import os
import sys
import tempfile
from pathlib import Path
from types import CodeType
from typing import Any, Final

from ppy_core.diagnostics import CacheError

MANIFEST: Final = "manifest.json"


def write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".manifest-")
    with os.fdopen(fd, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def read_manifest(directory: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise CacheError(
            f"{directory / MANIFEST}: unreadable artifact manifest: {exc}",
            code="E3005",
            hint="rebuild the artifact with `ppy build`",
        ) from None
    if manifest.get("format") != 1:
        raise CacheError(
            f"{directory}: artifact format {manifest.get('format')!r} is not 1",
            code="E3005",
            hint="rebuild the artifact with this version of ppy",
        )
    return manifest


def read_code(directory: Path, manifest: dict[str, Any]) -> CodeType:
    if manifest.get("python") != sys.implementation.cache_tag:
        raise CacheError(
            f"{directory}: built for {manifest.get('python')}, this is "
            f"{sys.implementation.cache_tag}",
            code="E3003",
            hint="rebuild the artifact with this Python",
        )
    try:
        code = marshal.loads((directory / "module.code").read_bytes())
    except (OSError, ValueError, EOFError, TypeError) as exc:
        raise CacheError(
            f"{directory / 'module.code'}: unreadable: {exc}",
            code="E3004",
            hint="rebuild the artifact with `ppy build`",
        ) from None
    if not isinstance(code, CodeType):
        raise CacheError(
            f"{directory / 'module.code'}: not a code object",
            code="E3004",
            hint="rebuild the artifact with `ppy build`",
        )
    return code


__all__ = ["MANIFEST", "write_manifest", "read_manifest", "read_code"]
