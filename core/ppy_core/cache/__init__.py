"""The on-disk compile cache: one root, one build lock, atomic entries, the keys
that address them, and why a lookup missed. Modules: `root` (where the caches live,
atomic publish), `lock` (the build lock), `store` (the Cache), `files`, `explain`,
`keys` (fingerprints, key hashing), `module_key` (one module's key).

Backends use `cache_root`/`backend_dir`, `build_lock` and `publish_*`/
`write_if_changed` from here; they write no lock or root logic of their own."""

from __future__ import annotations

from ppy_core.cache.lock import DEFAULT_EXPIRY_S, BuildLock, build_lock
from ppy_core.cache.root import (
    backend_dir,
    cache_root,
    default_root,
    publish_bytes,
    publish_file,
    using_root,
    write_if_changed,
)

__all__ = [
    "DEFAULT_EXPIRY_S",
    "BuildLock",
    "build_lock",
    "backend_dir",
    "cache_root",
    "default_root",
    "publish_bytes",
    "publish_file",
    "using_root",
    "write_if_changed",
]
