"""Who may have written what the cache holds: the cache holds code the runtime runs.

Every folder ppy caches in is created private to the user (0700), and whatever is
found there (an entry, a lock, a record, a backend's build, a `ppy run` artifact)
is used only when the current user owns it: anything owned by someone else is
refused with one coded warning per path (E3006), and nothing from it runs.

Runtime-safe and light: `os`, `stat` and `warnings` only (a launcher imports it).
"""

from __future__ import annotations

import os
import warnings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

PRIVATE = 0o700
_WARNED: set[str] = set()


class ForeignWarning(UserWarning):
    """A cache path owned by another user was refused; nothing from it runs."""


def current_uid() -> int:
    """The user whose files the cache trusts (a function, so a test can pretend)."""
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid is not None else -1


def owned_by_other(st: os.stat_result) -> bool:
    """Whether a file's owner is not the current user (never on Windows: no uids)."""
    uid = current_uid()
    return uid >= 0 and st.st_uid != uid


def refuse(path: str | Path, what: str) -> None:
    """Warn once per path: `what` at `path` belongs to another user and is not used."""
    key = str(path)
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(
        f"ppy: {path}: {what} owned by another user is refused; nothing from it runs  "
        f"[E3006]\n  hint: use a cache of your own (PPY_CACHE_DIR, [tool.ppy] cache-dir), "
        "or remove it",
        ForeignWarning,
        stacklevel=3,
    )


def trusted(path: str | Path, what: str) -> bool:
    """Whether `path` exists and the current user owns it (else one E3006 warning if it
    exists). A symbolic link is judged by itself, not by what it points to."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if owned_by_other(st):
        refuse(path, what)
        return False
    return True


def private_dir(path: Path) -> Path:
    """Create `path` (and its missing parents) readable by the user only (0700), and
    check that the user owns it; a folder owned by another user raises PermissionError
    (after one E3006 warning): the caller treats it as an unusable cache."""
    missing = []
    probe = path
    while not os.path.isdir(probe):
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE)
        except FileExistsError:
            continue
        os.chmod(folder, PRIVATE)  # the umask may have taken bits away, never added
    if not trusted(path, "cache folder"):
        raise PermissionError(f"{path} is owned by another user")
    return path


__all__ = [
    "PRIVATE",
    "ForeignWarning",
    "current_uid",
    "owned_by_other",
    "private_dir",
    "refuse",
    "trusted",
]
