"""Reading and parsing a module: every failure is a coded diagnostic."""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ppy_core.diagnostics import Error, Location


@dataclass(frozen=True, slots=True)
class Source:
    path: Path
    text: str
    data: bytes
    tree: ast.Module


def read_source(path: Path, data: bytes | None = None) -> Source:
    """Read and parse `path`; E0001 if unreadable, E0002 on a syntax error. With `data`
    (the bytes the cache key was computed from), the file is not read again: an edit
    between keying and building must never be cached under the old key."""
    try:
        data = path.read_bytes() if data is None else data
        text = importlib.util.decode_source(data)  # honours a coding cookie, as Python does
    except (OSError, UnicodeDecodeError, SyntaxError, LookupError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise Error(
            f"{path}: cannot be read: {reason}",
            code="E0001",
            hint="check the path, and that the file is UTF-8 text or declares its encoding",
            location=Location(str(path)),
        ) from None
    try:
        tree = ast.parse(data, filename=str(path))
    except SyntaxError as exc:
        where = Location(str(path), exc.lineno or 0, exc.offset or 0)
        raise Error(
            f"invalid syntax: {exc.msg}",
            code="E0002",
            location=where,
            hint="fix the syntax; the file must be valid Python 3.11",
        ) from None
    return Source(path, text, data, tree)


__all__ = ["Source", "read_source"]
