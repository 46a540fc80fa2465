"""Which files of a module's folder passed their check: nothing else is loaded.

A module's folder is a cache entry's `files/` (checked by `cache.files.check_files`
against the entry's sealed manifest) or an artifact's `modules/NAME/` (checked here
against the sizes and sha256s the artifact's top manifest records). Whoever checks
a folder `mark`s what passed; the loaders (`runtime.module`) execute a module's code,
read its manifest or open a kernel's library only when `verified` names that file:
a file that failed, or that no check covered, never runs (its piece runs as Python).

Artifacts: the top manifest's hashes cover every file (launcher, module manifests,
code, kernels, sources); the top manifest itself is covered only by its owner (a
file another user owns is refused) and the folder's permissions: whoever may write
the artifact's manifest may change what it runs, as with any program's files.

Runtime-safe and light: `os`, `stat` and the cache's `trust`.
"""

from __future__ import annotations

import os
import stat

from ppy_core.cache import trust

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

#: folder -> the names (POSIX paths relative to it) that passed their check
_VERIFIED: dict[str, frozenset[str]] = {}
#: files that failed and were already named in a warning (one warning, not one per site)
_REPORTED: set[str] = set()
#: absolute path -> the identity (device, inode, size, mtime, ctime) of the file its
#: check read: a site binds its kernel at its first call, maybe long after the check,
#: and opens it only while the file is still the one that passed (`changed`)
_STAMPS: dict[str, tuple[int, ...]] = {}
#: absolute path -> the sha256 its check compared it with (see `recorded`)
_SHAS: dict[str, str] = {}


def stamp(st: os.stat_result) -> tuple[int, ...]:
    """A file's identity: any write, rename over it or chmod changes one of these."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def mark(
    directory: Path | str,
    names: Mapping[str, Any] | frozenset[str] | set[str],
    stamps: Mapping[str, tuple[int, ...]] | None = None,
) -> None:
    """Record that the files `names` under `directory` passed their check; `stamps`:
    their identities as the check saw them (`stamp`; a name without one, or already
    known by its path, keeps the known one, else it is taken now)."""
    folder = os.path.abspath(directory)
    _VERIFIED[folder] = frozenset(names)
    for name in names:
        path = os.path.join(folder, name)
        info = names.get(name) if isinstance(names, dict) else None
        if isinstance(info, dict) and isinstance(info.get("sha256"), str):
            _SHAS[path] = info["sha256"]
        seen = stamps.get(name) if stamps else None
        if seen is not None:
            _STAMPS[path] = seen
        elif path not in _STAMPS:
            try:
                _STAMPS[path] = stamp(os.stat(path))
            except OSError:
                _STAMPS[path] = ()


def recorded(path: Path | str) -> str | None:
    """The sha256 the file at `path` passed its check against (None: not known)."""
    return _SHAS.get(os.path.abspath(path))


def changed(directory: Path | str, names: list[str]) -> str | None:
    """The first of `names` under `directory` that did not pass its check, or is no
    longer the file that passed (its identity changed since); None when all hold.
    A `stat` per file: cheap enough for each site's first call."""
    folder = os.path.abspath(directory)
    good = _VERIFIED.get(folder, frozenset())
    for name in names:
        if name not in good:
            return name
        path = os.path.join(folder, name)
        try:
            now = stamp(os.stat(path))
        except OSError:
            now = ()  # missing now: unchanged only if it was missing when marked
        if _STAMPS.get(path) != now:
            return name
    return None


def verified(directory: Path | str) -> frozenset[str]:
    """The files under `directory` that passed their check (none if it was never checked)."""
    return _VERIFIED.get(os.path.abspath(directory), frozenset())


def report(path: Path | str) -> bool:
    """Whether the failure of the file at `path` is still to be reported (True once)."""
    key = os.path.abspath(path)
    if key in _REPORTED:
        return False
    _REPORTED.add(key)
    return True


def safe_name(rel: object) -> bool:
    """Whether `rel` is a relative POSIX path that stays inside its folder."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel or "\0" in rel:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def check_tree(root: Path, files: object) -> tuple[set[str], dict[str, str]]:
    """(names that match, {name: why not} for those that do not) of the files the
    manifest listing `files` records under `root`: each must be a regular file the
    user owns, nobody else may write, of the recorded size and sha256."""
    good: set[str] = set()
    bad: dict[str, str] = {}
    if not isinstance(files, dict):
        return good, {"manifest.json": "it records no file hashes"}
    for rel, info in files.items():
        if not safe_name(rel):
            bad[str(rel)] = "its name leaves the artifact"
            continue
        if not (
            isinstance(info, dict)
            and type(info.get("size")) is int
            and isinstance(info.get("sha256"), str)
        ):
            bad[rel] = "its record is malformed"
            continue
        path = root / rel
        try:
            st = os.lstat(path)
        except OSError:
            bad[rel] = "it is missing"
            continue
        if not stat.S_ISREG(st.st_mode):
            bad[rel] = "it is not a regular file"
        elif trust.owned_by_other(st):
            trust.refuse(path, "artifact file")
            bad[rel] = "it is owned by another user"
        elif trust.others_may_write(st):
            bad[rel] = "others may write it"
        elif st.st_size != info["size"]:
            bad[rel] = f"it is {st.st_size} bytes, the manifest says {info['size']}"
        elif _sha256_file(path) != info["sha256"]:
            bad[rel] = "it does not match the sha256 recorded when it was built"
        else:
            good.add(rel)
            _STAMPS[os.path.abspath(path)] = stamp(st)
            _SHAS[os.path.abspath(path)] = info["sha256"]
    return good, bad


def _sha256_file(path: Path) -> str:
    """The file's sha256 in hex, with the interpreter's own sha256 (`cache.files` and
    `hashlib` cost a launcher ~2 ms and ~3 ms to import; the digest is the same)."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found,no-redef]
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment]
    digest = sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()  # type: ignore[no-any-return]


def mark_modules(root: Path, folders: list[str], good: set[str]) -> None:
    """`mark` each module folder of an artifact with its files that passed."""
    for folder in folders:
        prefix = folder.rstrip("/") + "/"
        mark(root / folder, {rel[len(prefix) :] for rel in good if rel.startswith(prefix)})


__all__ = [
    "changed",
    "check_tree",
    "mark",
    "stamp",
    "mark_modules",
    "recorded",
    "report",
    "safe_name",
    "verified",
]
