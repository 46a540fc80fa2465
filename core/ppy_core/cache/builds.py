"""Backends' build files (objects, shared libraries): hashed when built, checked
before reuse.

A backend keeps its builds in its own folder under the cache root
(`root.backend_dir`) and reuses them across processes; a shared library found there
is code the runtime will load. So `root.publish_file`/`publish_bytes` record each
file's sha256 beside it when it is published (`.NAME.sha256`), and a backend asks
`verify_build` before reusing one and copies with `verified_copy` into an entry:
a file whose hash differs (edited, truncated, replaced), that has no record, or that
another user owns or others may write is not used (one E3008 or E3006 warning) and
the backend builds it again. Verdicts are kept per process, per (path, device,
inode, size, mtime, ctime).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import warnings
from pathlib import Path

from ppy_core.cache import trust

_CHUNK = 1 << 20
_VERIFIED: dict[tuple[str, int, int, int, int, int], bool] = {}
_WARNED: set[str] = set()


class BuildWarning(UserWarning):
    """A backend's build file failed its check; it is rebuilt, never loaded."""


def digest_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def hash_path(path: Path) -> Path:
    """Where the hash of build file `path` is recorded."""
    return path.with_name(f".{path.name}.sha256")


def record_build(path: Path, digest: str | None = None) -> None:
    """Record the sha256 of the build file `path` (computed unless given)."""
    value = digest or digest_file(path)
    record = hash_path(path)
    tmp = record.with_name(f"{record.name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, trust.PRIVATE_FILE)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(fd, trust.PRIVATE_FILE)  # whatever the umask
        handle.write(value)
    os.replace(tmp, record)


def _warn(path: Path, why: str) -> None:
    if str(path) in _WARNED:
        return
    _WARNED.add(str(path))
    warnings.warn(
        f"ppy: build file {path} {why}; it is not used and is built again  [E3008]\n"
        "  hint: if this repeats, remove the folder (`ppy cache clear`)",
        BuildWarning,
        stacklevel=3,
    )


def verify_build(path: Path) -> bool:
    """Whether build file `path` exists, is the user's own, and has the sha256
    recorded when it was built. False (with one warning if it exists) otherwise."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    stamp = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _VERIFIED.get(stamp)
    if known is not None:
        return known
    if trust.owned_by_other(st):
        trust.refuse(path, "build file")
        ok = False
    elif trust.others_may_write(st) or not trust.private(path.parent):
        _warn(path, "could have been changed by another user")
        ok = False
    else:
        try:
            recorded = hash_path(path).read_text().strip()
        except OSError:
            recorded = ""
        ok = bool(recorded) and digest_file(path) == recorded
        if not ok:
            _warn(path, "has no recorded hash" if not recorded else "differs from its hash")
    _VERIFIED[stamp] = ok
    return ok


def verified_copy(source: Path, target: Path) -> None:
    """Copy build file `source` to `target` after checking it (`verify_build`);
    OSError when it fails the check (the caller builds it again, or leaves the site
    to Python)."""
    if not verify_build(Path(source)):
        raise OSError(f"{source} failed its check against the hash recorded when built")
    shutil.copyfile(source, target)
    trust.private_file(target)


__all__ = [
    "BuildWarning",
    "digest_file",
    "hash_path",
    "record_build",
    "verified_copy",
    "verify_build",
]
