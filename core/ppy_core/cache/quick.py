"""A module's cache key without recomputing it, while nothing it came from changed.

`module_key` reads the source and the project files, the configuration, activates
the plugins and the backends (importing them and their libraries) and asks their
fingerprints: the right answer, and ~100 ms. `remember` keeps its result in a record
(`ppy_core.cache.records`) with the identity (path, size, mtime, inode) of every file
it depends on: the source and the project files it imports, every pyproject.toml
that could be the project's (a missing one is recorded missing), the folders holding
the installed distributions (an install, upgrade or removal changes them), the code
of ppy_core and of the plugins and backends used, and their libraries' top-level
files. `quick_key` reads that record back, a few dozen `stat` calls: on a cached
start, `ppy FILE` and `ppy run FILE` import no plugin, no backend and no library
before the program itself does.

Runtime-safe and light (`os`, `sys`, the records).
"""

from __future__ import annotations

import os
import sys

from ppy_core.cache import records

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from ppy_core.cache.module_key import ModuleKey

#: variables that change nothing a compile produces (everything else named PPY_* may)
_RUN_ONLY = frozenset(
    {"PPY_STATS", "PPY_VERIFY", "PPY_FALLBACK", "PPY_DEBUG", "PPY_CACHE_DIR", "PPY_ARTIFACT"}
)


def _name(path: Path | str) -> str:
    env = sorted(
        (k, v) for k, v in os.environ.items() if k.startswith("PPY_") and k not in _RUN_ONLY
    )
    return f"module-key:{path}:{sys.executable}:{sys.implementation.cache_tag}:{env!r}"


def quick_key(path: Path | str) -> tuple[str, str] | None:
    """(the cache key of the module at absolute `path`, the cache root its project
    uses or "" for the default) while every file the key came from is unchanged;
    None when that is not known (then compute `module_key` and `remember` it)."""
    value = records.read(_name(path), records.project_root(str(path)))
    if not isinstance(value, dict):
        return None
    key, root = value.get("key"), value.get("cache_dir", "")
    if not isinstance(key, str) or not isinstance(root, str):
        return None
    return key, root


def entry_files(root: str, key: str) -> Path | None:
    """The files folder of cache entry `key` under `root` ("" for the default root)
    when it passes the cache's checks (the user's own, its folders private, manifest,
    seal, sizes, hashes: the checks of `Cache.lookup`, shared); None otherwise, and
    then `Cache.lookup` (on the compile path) discards a corrupt entry with its
    warning, or refuses another user's. Spares a cached start the store's imports
    (locks, logging, tempfile)."""
    import contextlib
    from pathlib import Path

    from ppy_core.cache import trust
    from ppy_core.cache.files import FILES, LAST_USED, Corrupt, check_files, read_manifest
    from ppy_core.cache.root import default_root

    if not key.isalnum():
        return None
    base = Path(root) if root else default_root()
    entry_dir = base / "entries" / key
    if not trust.trusted(entry_dir, "cache entry") or not trust.private_chain(
        base, entry_dir / FILES
    ):
        return None
    try:
        check_files(entry_dir, read_manifest(entry_dir, key))
    except Corrupt:
        return None
    with contextlib.suppress(OSError):  # the LRU clock, as `Cache.lookup` keeps it
        (entry_dir / LAST_USED).touch()
    return entry_dir / FILES


def cached_entry(path: Path) -> Path | None:
    """The files folder of `path`'s cache entry while its recorded key holds and the
    entry passes the cache's checks; None: compile it (then `remember` the key)."""
    known = quick_key(path)
    return entry_files(known[1], known[0]) if known is not None else None


def _pyprojects(path: Path) -> list[str]:
    """Every place a pyproject.toml could be the module's project's, nearest first."""
    folder, found = os.path.dirname(str(path)), []
    while True:
        found.append(os.path.join(folder, "pyproject.toml"))
        parent = os.path.dirname(folder)
        if parent == folder:
            return found
        folder = parent


def remember(key: ModuleKey) -> None:
    """Record `key` (just computed by `module_key`) with the files it depends on."""
    from ppy_core.runtime.registered import build_files, search_path

    files = [str(key.path), *(str(p) for p in key.project_files.values())]
    files += _pyprojects(key.path) + list(search_path())
    files += records.package_files(getattr(sys.modules.get("ppy_core"), "__file__", None))
    for thing in (*key.activation.plugins, *key.backends):
        files += build_files(type(thing).__module__, tuple(getattr(thing, "modules", ())))
    cache_dir = str(key.config.cache_dir) if key.config.cache_dir else ""
    value = {"key": key.key, "cache_dir": cache_dir}
    records.write(_name(key.path), dict.fromkeys(files), value, records.project_root(str(key.path)))


__all__ = ["cached_entry", "entry_files", "quick_key", "remember"]
