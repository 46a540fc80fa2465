"""Packs of per-function front-end records: one file per module path.

    <root>/functions/<sha256(path)[:32]>.pack

A pack maps each function key (`compiler.function_keys`) to that function's record
(`compiler.function_records`), marshalled as a plain dict of str -> bytes. A build
reads its module's pack once and, when done, publishes the records it used in its
place: one read and one write per build however many functions the module has,
and a pack never holds more than one version of the module's functions.

The folder is a backend build folder (`root.backend_dir`: private, marked, removed
by `ppy cache clear`), and a pack is published with its sha256 recorded and checked
before it is read (`builds.verify_build`), like a backend's shared library: a pack
edited, truncated, or writable by others reads as empty (one E3008 or E3006
warning) and the build types every function again.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
from collections.abc import Mapping
from pathlib import Path

from ppy_core.cache.builds import verify_build
from ppy_core.cache.root import backend_dir, publish_bytes

log = logging.getLogger(__name__)

FOLDER = "functions"
#: a pack larger than this is not read (a module's records are some KB per function)
MAX_PACK_BYTES = 256 << 20


def pack_path(module_path: str) -> Path:
    name = hashlib.sha256(module_path.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return backend_dir(FOLDER) / f"{name}.pack"


def read_pack(module_path: str) -> dict[str, bytes]:
    """The records last stored for the module at `module_path` ({} if none is usable)."""
    try:
        path = pack_path(module_path)
        if not os.path.exists(path) or not verify_build(path):
            return {}
        if os.path.getsize(path) > MAX_PACK_BYTES:
            return {}
        data = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError) as exc:
        log.debug("function records of %s not read: %s", module_path, exc)
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, bytes)}


def write_pack(module_path: str, records: Mapping[str, bytes]) -> None:
    """Publish `records` as the module's pack (atomically; a failure to write costs
    the next build its reuse, never this build)."""
    try:
        publish_bytes(pack_path(module_path), marshal.dumps(dict(records)))
    except (OSError, ValueError) as exc:
        log.debug("function records of %s not written: %s", module_path, exc)


__all__ = ["FOLDER", "MAX_PACK_BYTES", "pack_path", "read_pack", "write_pack"]
