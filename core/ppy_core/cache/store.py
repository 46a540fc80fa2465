"""The on-disk compile cache: atomic entries, a per-key build lock, LRU eviction.

Layout under the root (`ppy_core.cache.root`: `[tool.ppy] cache-dir`, else
`PPY_CACHE_DIR`, else `$XDG_CACHE_HOME/ppy`, else `~/.cache/ppy`):

    entries/<key>/      one entry: manifest.json, last_used, files/ (see `files`)
    locks/<key>.lock    the build lock of a key (see `lock`)
    index/<sha>.json    per source: the last key stored and its components
    tmp/, trash/        entries being built, entries being removed
    records/            what is slow to learn, kept while its files are unchanged
                        (`records`: entry points, fingerprints, module keys)
    runs/<hash>/        `ppy run`'s artifacts (`cli.artifacts`)
    functions/          per module, the front end's records of its functions, reused by
                        the next build of an edited module (`functions`)
    <backend>/          a backend's own builds (`root.backend_dir`), e.g. llvm/, torch/

Every folder is created private to the user (0700) and whatever another user owns
(an entry, a lock, a record, a build) is refused with one warning (`trust`, E3006).

`store` builds under the key's lock into `tmp/` and publishes with one rename;
a second process storing the same key waits for the lock and returns the
first one's entry. `lookup` checks sizes every time and hashes once per
process; a corrupt entry is discarded with one `PpyCacheWarning` [E3001] and
reads as a miss. Keys are computed by the caller (sha256 hex digests).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from ppy_core.cache import explain, trust
from ppy_core.cache.files import (
    FILES,
    LAST_USED,
    MANIFEST,
    Corrupt,
    Foreign,
    check_files,
    fsync_dir,
    read_manifest,
    remember_verified,
    remove_tree,
    tree_size,
    write_manifest,
)
from ppy_core.cache.lock import DEFAULT_EXPIRY_S, BuildLock, read_lock, stale_reason
from ppy_core.cache.root import BACKEND_MARKER, default_root, using_root
from ppy_core.cache.trust import private_dir
from ppy_core.diagnostics import CacheError, ConfigError, Diagnostic, InternalError, Location

log = logging.getLogger("ppy.cache")

DEFAULT_MAX_BYTES: Final = 2 * 1024**3
DEFAULT_LOCK_TIMEOUT_S: Final = DEFAULT_EXPIRY_S

_KEY: Final = re.compile(r"[0-9A-Za-z_-][0-9A-Za-z_.-]{0,127}")
_SIZE: Final = re.compile(r"(\d+)\s*([kmgt]?)(?:i?b)?", re.IGNORECASE)
_WARNED: set[tuple[str, int]] = set()


class PpyCacheWarning(UserWarning):
    """A cache entry was unusable (corrupt, truncated) and was discarded."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A published entry: `path` is the directory holding the files the build wrote."""

    key: str
    path: Path
    meta: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """What `ppy cache info` shows."""

    place: Path
    size_bytes: int
    entries: int
    max_bytes: int


def default_max_bytes() -> int:
    """`PPY_CACHE_MAX_BYTES` (a byte count, `K`/`M`/`G`/`T` suffixes allowed), else 2 GiB."""
    text = os.environ.get("PPY_CACHE_MAX_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    match = _SIZE.fullmatch(text)
    if match is None:
        raise ConfigError(
            f"PPY_CACHE_MAX_BYTES: {text!r} is not a size",
            hint="write a byte count such as 2000000000 or 2G",
        )
    scale = 1024 ** " kmgt".index(match[2].lower() or " ")
    return int(match[1]) * scale


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise InternalError(
            f"cache key {key!r} is not a valid key",
            hint="keys are hex digests (sha256) of the key's components",
        )


def _unwritable(key: str, exc: OSError) -> CacheError:
    return CacheError(
        f"cache entry {key} cannot be written: {exc}",
        code="E3001",
        hint="set PPY_CACHE_DIR to a writable directory with free space",
    )


def refuse_foreign_root(root: Path) -> None:
    """CacheError E3006 when the cache root exists and is another user's (or others may
    write into it and it cannot be made private): nothing is built into it."""
    if os.path.isdir(root) and not trust.private(root):
        raise CacheError(
            f"the cache folder {root} is not yours alone; nothing is built or run from it",
            code="E3006",
            hint="use a cache of your own: set PPY_CACHE_DIR (or [tool.ppy] cache-dir) "
            "to a folder you own",
        )


class Cache:
    """The compile cache at `root`, holding at most about `max_bytes` of entries."""

    def __init__(
        self,
        root: Path | None = None,
        max_bytes: int | None = None,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
    ) -> None:
        self.root = Path(root) if root is not None else default_root()
        self.max_bytes = max_bytes if max_bytes is not None else default_max_bytes()
        self.lock_timeout = lock_timeout
        self._entries = self.root / "entries"
        self._locks = self.root / "locks"
        self._index = self.root / "index"
        self._tmp = self.root / "tmp"
        self._trash = self.root / "trash"
        self._records = self.root / "records"  # see `records`: derived, safe to drop

    # -- reading ---------------------------------------------------------------------------

    def lookup(self, key: str) -> Entry | None:
        """The valid entry for `key` (and mark it used), or None.

        A corrupt entry is discarded with one PpyCacheWarning [E3001] and is a miss.
        """
        _check_key(key)
        entry_dir = self._entries / key
        try:
            st = os.lstat(entry_dir)
        except OSError:
            return None
        if trust.owned_by_other(st):  # nothing another user wrote runs: a miss
            trust.refuse(entry_dir, "cache entry")
            return None
        if not trust.private_chain(self.root, entry_dir / FILES):
            return None  # a folder on the way is another user's (E3006): a miss
        try:
            manifest = read_manifest(entry_dir, key)
            check_files(entry_dir, manifest)
        except Foreign as exc:
            trust.refuse(entry_dir / FILES / exc.reason, "file of a cache entry")
            return None
        except Corrupt as exc:
            self._discard(entry_dir, st, exc.reason)
            return None
        with contextlib.suppress(OSError):  # a read-only cache still serves entries
            (entry_dir / LAST_USED).touch()
        return Entry(key, entry_dir / FILES, MappingProxyType(manifest["meta"]))

    def _discard(self, entry_dir: Path, seen: os.stat_result, reason: str) -> None:
        try:
            now = os.stat(entry_dir)
        except OSError:
            return  # evicted while we read it: a plain miss
        if (now.st_dev, now.st_ino) != (seen.st_dev, seen.st_ino):
            return  # replaced while we read it: a plain miss
        try:
            remove_tree(entry_dir, self._trash)
        except OSError as exc:
            log.debug("cannot remove corrupt entry %s: %s", entry_dir, exc)
        if (str(entry_dir), seen.st_ino) in _WARNED:
            return
        _WARNED.add((str(entry_dir), seen.st_ino))
        diagnostic = Diagnostic(
            "E3001",
            f"cache entry is corrupt ({reason}); it was discarded and will be rebuilt",
            location=Location(str(entry_dir)),
            severity="warning",
        )
        warnings.warn(diagnostic.render(), PpyCacheWarning, stacklevel=3)

    def _lock(self, key: str) -> BuildLock:
        return BuildLock(self._locks / f"{key}.lock", self.lock_timeout)

    # -- writing ---------------------------------------------------------------------------

    def store(
        self,
        key: str,
        build: Callable[[Path], Mapping[str, Any]],
        *,
        source_id: str,
        components: Mapping[str, str],
    ) -> Entry:
        """Build and publish the entry for `key`, or return the one another process built.

        `build(tmpdir)` writes the entry's files into tmpdir and returns its meta
        (JSON-able). If it raises, nothing is published and the exception propagates.
        """
        _check_key(key)
        refuse_foreign_root(self.root)
        lock = self._lock(key)
        entry = self._wait_for(key, lock)
        built = False
        if entry is None:
            try:
                entry = self.lookup(key)
                if entry is None:
                    entry, built = self._build(key, build), True
            finally:
                lock.release()
        explain.record(self._index, source_id, key, components)
        if built:
            self._evict(keep=key)
        return entry

    def _wait_for(self, key: str, lock: BuildLock) -> Entry | None:
        """None once we hold `lock`; or the entry another holder published meanwhile."""
        manifest = self._entries / key / MANIFEST
        while not lock.acquire(until=manifest.is_file):
            entry = self.lookup(key)
            if entry is not None:
                return entry
            # The entry published meanwhile failed its checks and was discarded: wait on.
        return None

    def _build(self, key: str, build: Callable[[Path], Mapping[str, Any]]) -> Entry:
        """Run `build` in a staging directory and publish what it wrote."""
        try:
            private_dir(self._tmp)
            stage = Path(tempfile.mkdtemp(prefix=f"{key}.{os.getpid()}.", dir=self._tmp))
            (stage / FILES).mkdir()
        except OSError as exc:
            raise _unwritable(key, exc) from exc
        try:
            with using_root(self.root):  # backends keep their builds beside the entries
                meta = build(stage / FILES)  # its exceptions propagate as they are
            if not isinstance(meta, Mapping):
                raise InternalError(
                    f"cache build for {key} returned {type(meta).__name__}, not a mapping of meta"
                )
            try:
                manifest = write_manifest(stage, key, meta)
                return self._publish(stage, key, manifest)
            except OSError as exc:
                raise _unwritable(key, exc) from exc
            except (TypeError, ValueError) as exc:
                raise InternalError(f"cache entry {key} cannot be written: {exc}") from exc
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def _publish(self, stage: Path, key: str, manifest: Mapping[str, Any]) -> Entry:
        final = self._entries / key
        private_dir(self._entries)
        for _attempt in range(2):
            try:
                os.rename(stage, final)
            except OSError:
                existing = self.lookup(key)  # someone broke our stale lock and won
                if existing is not None:
                    return existing
                # what is there failed the lookup: corrupt (discarded by it already), or
                # holding another user's files (refused, E3006): ours replaces it, the
                # refused one is moved aside into the cache's trash
                with contextlib.suppress(OSError):
                    remove_tree(final, self._trash)
                continue
            fsync_dir(self._entries)
            remember_verified(final, manifest)
            return Entry(key, final / FILES, MappingProxyType(manifest["meta"]))
        raise CacheError(
            f"cache entry {final} cannot be published",
            code="E3001",
            hint="check that the cache directory is writable",
        )

    # -- size ------------------------------------------------------------------------------

    def _scan(self) -> list[tuple[int, int, str, Path]]:
        """(last used ns, bytes, key, dir) of every entry."""
        found = []
        try:
            listing = list(os.scandir(self._entries))
        except OSError:
            return []
        for item in listing:
            if not item.is_dir(follow_symlinks=False):
                continue
            path = Path(item.path)
            try:
                used = os.stat(path / LAST_USED).st_mtime_ns
            except OSError:
                used = item.stat(follow_symlinks=False).st_mtime_ns
            found.append((used, tree_size(path), item.name, path))
        return found

    def _evict(self, keep: str) -> None:
        """Remove least recently used entries until the total fits `max_bytes`."""
        entries = self._scan()
        total = sum(size for _, size, _, _ in entries)
        if total <= self.max_bytes:
            return
        for _used, size, key, path in sorted(entries):
            if total <= self.max_bytes:
                break
            if key == keep or self._lock(key).held_by_other():
                continue
            if remove_tree(path, self._trash):
                log.debug("evicted cache entry %s (%d bytes)", key, size)
                total -= size
        self._sweep()

    def _sweep(self) -> None:
        """Remove leftovers: removals cut short, builds and locks of dead processes."""
        shutil.rmtree(self._trash, ignore_errors=True)
        cutoff = time.time() - self.lock_timeout
        for folder, suffix in ((self._tmp, ""), (self._locks, ".lock")):
            try:
                listing = list(os.scandir(folder))
            except OSError:
                continue
            for item in listing:
                path = Path(item.path)
                if suffix:
                    seen = read_lock(path)
                    if seen is not None and stale_reason(seen[0], seen[1], self.lock_timeout):
                        path.unlink(missing_ok=True)
                elif item.stat(follow_symlinks=False).st_mtime < cutoff:
                    shutil.rmtree(path, ignore_errors=True)

    def info(self) -> CacheInfo:
        """The cache's place, the bytes and the number of its entries, its size cap."""
        entries = self._scan()
        return CacheInfo(
            self.root, sum(size for _, size, _, _ in entries), len(entries), self.max_bytes
        )

    def clear(self) -> int:
        """Remove every entry and the miss index; return how many entries were removed."""
        removed = sum(remove_tree(path, self._trash) for _, _, _, path in self._scan())
        shutil.rmtree(self._index, ignore_errors=True)
        shutil.rmtree(self._records, ignore_errors=True)
        self._sweep()
        return removed

    def build_folders(self) -> list[Path]:
        """The other folders under the root: each backend's own builds (`backend_dir`)
        and `ppy run`'s artifacts. Entries never point into them: they are rebuilt."""
        own = {self._entries, self._locks, self._index, self._tmp, self._trash, self._records}
        try:
            found = sorted(p for p in self.root.iterdir() if p.is_dir() and p not in own)
        except OSError:
            return []
        # only what ppy made: `runs/` and the folders `backend_dir` marked, never a
        # folder of the user's that happens to sit in the cache root
        return [
            p
            for p in found
            if not p.is_symlink() and (p.name == "runs" or os.path.isfile(p / BACKEND_MARKER))
        ]

    def clear_builds(self) -> list[str]:
        """Remove every build folder (see `build_folders`); the names removed."""
        return [p.name for p in self.build_folders() if remove_tree(p, self._trash)]

    # -- explaining ------------------------------------------------------------------------

    def explain_miss(self, key: str, source_id: str, components: Mapping[str, str]) -> str:
        """Why `key` for `source_id` is (or would be) a miss, in one line.

        "no entry for this file yet", or the components that changed since the last
        store for this source ("source changed", "plugin numpy fingerprint changed: A -> B").
        """
        _check_key(key)
        previous = explain.recorded(self._index, source_id)
        present = (self._entries / key / "manifest.json").is_file()
        return explain.explain(previous, key, components, present)


__all__ = [
    "Cache",
    "Entry",
    "CacheInfo",
    "PpyCacheWarning",
    "default_root",
    "default_max_bytes",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_LOCK_TIMEOUT_S",
]
