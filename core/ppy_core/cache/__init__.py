"""The on-disk compile cache: one root, one build lock, atomic entries, the keys
that address them, and why a lookup missed. Modules: `root` (where the caches live,
atomic publish), `lock` (the build lock), `store` (the Cache), `files`, `explain`,
`keys` (fingerprints, key hashing), `module_key` (one module's key), `functions` (a
module's per-function front-end records, reused across its builds).

Backends use `cache_root`/`backend_dir`, `build_lock` and `publish_*`/
`write_if_changed` from here; they write no lock or root logic of their own."""

from __future__ import annotations

import importlib

#: what this package exports, and the submodule each name lives in: imported on first
#: use, so a launcher importing `ppy_core.cache.trust` does not pay for the lock's
#: `socket` and `logging` or the diagnostics
_EXPORTS = {
    "DEFAULT_EXPIRY_S": "lock",
    "BuildLock": "lock",
    "build_lock": "lock",
    "backend_dir": "root",
    "cache_root": "root",
    "default_root": "root",
    "publish_bytes": "root",
    "publish_file": "root",
    "using_root": "root",
    "write_if_changed": "root",
    "verified_copy": "builds",
    "record_build": "builds",
    "verify_build": "builds",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ppy_core.cache' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ppy_core.cache.{module}"), name)


__all__ = sorted(_EXPORTS)
