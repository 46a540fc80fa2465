"""Who may have written what the cache holds: the cache holds code the runtime runs.

Every folder ppy caches in is created private to the user (0700) and every file it
writes there is the user's alone (0600, 0700 for an executable), whatever the umask;
whatever is found there (an entry, a lock, a record, a backend's build, a `ppy run`
artifact) is used only when the current user owns it: anything owned by someone else
is refused with one coded warning per path (E3006), and nothing from it runs. A
folder of the cache that others may write into is repaired (chmod 0700, one E3010
warning) when it is the user's own; one another user owns is refused (E3006), the
cache root included: what such a folder holds could have been put there by anyone.

Runtime-safe and light: `os`, `stat` and `warnings` only (a launcher imports it).
"""

from __future__ import annotations

import os
import warnings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

PRIVATE = 0o700
PRIVATE_FILE = 0o600
#: the mode bits that let others write into a folder (or a file)
_OTHERS_WRITE = 0o022
_WARNED: set[str] = set()
#: folders this process found (or made) private, by (path, device, inode)
_PRIVATE: set[tuple[str, int, int]] = set()


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
    check that the user owns it and that nobody else may write into it (`private`);
    a folder owned by another user raises PermissionError (after one E3006 warning):
    the caller treats it as an unusable cache."""
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
    if not private(path):
        raise PermissionError(f"{path} is owned by another user")
    return path


def private(path: str | Path) -> bool:
    """Whether the existing folder `path` is the user's own and only the user's to
    write: its mode is repaired (0700, one E3010 warning) when others may write into
    it; False (after one E3006 warning) when another user owns it or it is missing.
    Remembered per process by the folder's identity: one `stat` on a cached start."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    stamp = (str(path), st.st_dev, st.st_ino)
    if stamp in _PRIVATE:
        return True
    if owned_by_other(st):
        refuse(path, "cache folder")
        return False
    if st.st_mode & _OTHERS_WRITE and current_uid() >= 0:
        try:
            os.chmod(path, PRIVATE)
        except OSError:
            refuse_open(path)
            return False
        _warn_repaired(path, st.st_mode)
    _PRIVATE.add(stamp)
    return True


def private_chain(root: str | Path, path: str | Path) -> bool:
    """`private` for the cache root and every existing folder from it down to `path`
    (a folder under it): what a reader checks before it trusts what `path` holds."""
    from pathlib import Path

    root, path = Path(root), Path(path)
    if not private(root):
        return False
    try:
        rel = path.relative_to(root)
    except ValueError:
        return private(path)
    folder = root
    for part in rel.parts:
        folder = folder / part
        if not os.path.isdir(folder):
            return True  # nothing below to read
        if not private(folder):
            return False
    return True


def private_file(path: str | Path) -> None:
    """Make a file ppy wrote the user's alone (0600; 0700 when it is executable),
    whatever the umask let it be created with."""
    mode = os.stat(path).st_mode
    os.chmod(path, PRIVATE if mode & 0o100 else PRIVATE_FILE)


def others_may_write(st: os.stat_result) -> bool:
    """Whether a file's mode lets users other than its owner change it."""
    return current_uid() >= 0 and bool(st.st_mode & _OTHERS_WRITE)


def _warn_repaired(path: str | Path, mode: int) -> None:
    if "mode" in _WARNED:  # one warning per process: the first folder found names it
        return
    _WARNED.add("mode")
    warnings.warn(
        f"ppy: {path}: cache folder was writable by others (mode {mode & 0o777:o}); it is "
        "made private to you (700) and what it holds is checked before use  [E3010]\n"
        "  hint: keep the cache private: do not chmod it, set PPY_CACHE_DIR to a folder "
        "of your own",
        ForeignWarning,
        stacklevel=4,
    )


def refuse_open(path: str | Path) -> None:
    """Warn once: a folder others may write into, whose mode cannot be repaired."""
    key = f"open:{path}"
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(
        f"ppy: {path}: cache folder is writable by others and cannot be made private; "
        "nothing from it runs  [E3010]\n  hint: set PPY_CACHE_DIR to a folder of your own",
        ForeignWarning,
        stacklevel=4,
    )


__all__ = [
    "PRIVATE",
    "PRIVATE_FILE",
    "ForeignWarning",
    "current_uid",
    "others_may_write",
    "owned_by_other",
    "private",
    "private_chain",
    "private_dir",
    "private_file",
    "refuse_open",
    "refuse",
    "trusted",
]
