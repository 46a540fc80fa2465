"""Small records of what is slow to learn and changes only with installed files.

A record is a value (plain data: dicts, lists, strings, numbers, booleans, None)
stored with the identity (path, size, mtime, inode) of the files it was derived
from (a file changed within RACY_NS of the record's writing makes it untrusted, as
git's "racily clean" entries: an edit in the same clock tick keeps the mtime): the
entry points of the installed distributions, the
fingerprint of a library build. While none of those files changed, reading the
record (one small file, a few `stat` calls) replaces the work (a metadata scan,
importing a plugin and its library); when one changed, or the record is missing,
unreadable or owned by another user, the caller recomputes and writes it again.

Records live in `records/` under the cache root, a folder private to the user, in
`marshal`'s format (built into the interpreter: reading one imports nothing, where
`json` costs a start ~2 ms); a record is only ever read by the user who wrote it.
Runtime-safe and light: imports `os`, `marshal` and the cache's `trust` and `root`.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import time

from ppy_core.cache import trust
from ppy_core.cache.root import cache_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path
    from typing import Any

FORMAT = 2
FOLDER = "records"
#: a file changed less than this before its record was written may change again with
#: the same mtime (coarse file-system clocks; 2 s on FAT): such a record is not trusted
RACY_NS = 3_000_000_000
#: the largest record read (one holds a few hundred paths: kilobytes); anything
#: larger, or nested deeper than MAX_DEPTH, is not one ppy wrote: recomputed
MAX_BYTES = 8 << 20
MAX_DEPTH = 32


def identity(paths: Iterable[str]) -> dict[str, list[int] | None]:
    """(size, mtime ns, inode) of each path; None for one that does not exist."""
    found: dict[str, list[int] | None] = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            found[path] = None
        else:
            found[path] = [st.st_size, st.st_mtime_ns, st.st_ino]
    return found


def record_path(name: str, root: Path | None = None) -> Path:
    """Where record `name` lives: a file name made of `name` (any text) hashed."""
    return (root if root is not None else cache_root()) / FOLDER / f"{digest(name)}.rec"


def digest(text: str) -> str:
    """16 hex digits naming `text` (64-bit FNV-1a of its UTF-8): a file name, not a
    check. Not hashlib (OpenSSL costs a launcher ~4 ms) nor zlib (~0.5 ms): a record
    holds its name, so two names sharing a file only cost each other a recompute."""
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def read(name: str, root: Path | None = None) -> Any | None:
    """The value of record `name` while the files it was derived from are unchanged;
    None when it is missing, unreadable, stale or owned by another user (E3006)."""
    base = root if root is not None else cache_root()
    path = record_path(name, base)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if trust.owned_by_other(st):
            trust.refuse(path, "cache record")
            return None
        if st.st_size > MAX_BYTES or trust.others_may_write(st):
            return None
        if not trust.private_chain(base, path.parent):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = marshal.loads(handle.read(MAX_BYTES + 1))
    except (OSError, ValueError, EOFError, TypeError, RecursionError, MemoryError):
        return None
    finally:
        os.close(fd)
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("name") != name:
        return None
    if data.get("racy", True):
        return None  # written right after a change: recompute (and record it again)
    files = data.get("files")
    if not isinstance(files, dict) or not _identities(files) or identity(files) != files:
        return None
    value = data.get("value")
    return value if plain(value) else None


def _identities(files: dict[Any, Any]) -> bool:
    """Whether `files` maps paths to (size, mtime, inode) or None, as `identity` does."""
    for path, seen in files.items():
        if not isinstance(path, str):
            return False
        if seen is not None and not (
            type(seen) is list and len(seen) == 3 and all(type(v) is int for v in seen)
        ):
            return False
    return True


def plain(value: Any) -> bool:
    """Whether `value` is plain data (what `as_plain` writes) nested at most MAX_DEPTH
    deep: iterative, so a hostile record costs its size, not a recursion or a hang
    (marshal's references can make a list that holds itself: it is refused here)."""
    todo, seen = [(value, 0)], set()
    while todo:
        item, level = todo.pop()
        if item is None or type(item) in (bool, int, float, str):
            continue
        if level >= MAX_DEPTH or id(item) in seen:
            return False
        seen.add(id(item))
        if type(item) is list:
            todo.extend((child, level + 1) for child in item)
        elif type(item) is dict:
            if not all(type(k) is str for k in item):
                return False
            todo.extend((child, level + 1) for child in item.values())
        else:
            return False
    return True


def write(name: str, files: Iterable[str], value: Any, root: Path | None = None) -> None:
    """Record `value` as derived from `files` (their identity is taken now). A cache
    that cannot be written just keeps no record: the work is redone next time."""
    path = record_path(name, root)
    found = identity(files)
    recent = time.time_ns() - RACY_NS
    racy = any(v is not None and v[1] > recent for v in found.values())
    with contextlib.suppress(OSError, TypeError, ValueError):
        data = {"format": FORMAT, "name": name, "files": found, "value": as_plain(value)}
        data["racy"] = racy
        raw = marshal.dumps(data)
        trust.private_dir(path.parent)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, trust.PRIVATE_FILE)
            with os.fdopen(fd, "wb") as handle:
                os.fchmod(fd, trust.PRIVATE_FILE)  # whatever the umask
                handle.write(raw)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def as_plain(value: Any) -> Any:
    """`value` as JSON would give it back (tuples as lists); TypeError unless it is
    plain data: a record holds no code object or other marshal-only type."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [as_plain(item) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("record keys are strings")
        return {key: as_plain(item) for key, item in value.items()}
    raise TypeError(f"a record holds plain data, not {type(value).__name__}")


def nearest_pyproject(source: str) -> str | None:
    """`project.config.find_pyproject`'s rule (the nearest pyproject.toml in the
    file's folder or above) without importing the config reader (tomllib: ~10 ms)."""
    folder = os.path.dirname(os.path.realpath(source))
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def project_root(source: str) -> Path:
    """The cache root of the project of file `source`: its `[tool.ppy] cache-dir`,
    else the default root. The configuration is parsed only when its pyproject.toml
    mentions a cache-dir at all, so the usual case costs one small read."""
    from pathlib import Path

    from ppy_core.cache.root import default_root

    pyproject = nearest_pyproject(source)
    if pyproject is not None:
        try:
            with open(pyproject, "rb") as handle:
                mentioned = b"cache-dir" in handle.read()
        except OSError:
            mentioned = False
        if mentioned:
            from ppy_core.project.config import load_config

            try:
                configured = load_config(pyproject).cache_dir
            except Exception:  # an invalid config is reported by the compile, not here
                configured = None
            if configured:
                return Path(configured)
    return default_root()


def package_files(origin: str | None) -> list[str]:
    """The files standing for the code of the package whose `__init__` (or module
    file) is `origin`: for an editable or source checkout every .py/.so/.pyd/.c file
    in it (what an edit changes); for a package installed in site-packages, its
    `__init__` and that folder. Not the package folders: their mtimes move when
    Python writes bytecode beside the code."""
    if not origin:
        return []
    folder = os.path.dirname(origin)
    if os.path.basename(origin).partition(".")[0] != "__init__":
        return [origin]
    site = os.path.dirname(folder)
    if os.path.basename(site) in ("site-packages", "dist-packages") and not os.path.islink(folder):
        # installed from a wheel: an upgrade or reinstall rewrites `__init__` (a new
        # inode) and the folder holding the distributions; no need to stat every file
        return [origin, site]
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        found.extend(
            os.path.join(dirpath, f)
            for f in sorted(filenames)
            if f.endswith((".py", ".so", ".pyd", ".c", ".h", ".cpp"))
        )
    return found


__all__ = [
    "FORMAT",
    "digest",
    "identity",
    "nearest_pyproject",
    "package_files",
    "as_plain",
    "plain",
    "project_root",
    "read",
    "record_path",
    "write",
]
