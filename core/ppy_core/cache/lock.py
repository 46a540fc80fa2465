"""The build lock: an `O_CREAT|O_EXCL` file that expires. The one lock of ppy:
the compile cache takes it per key, every backend takes it per build folder.

The lock file holds `{"pid", "host", "time", "token"}`. It is stale, and may be
broken by anyone, when it is older than its expiry, when its holder ran on this
host and its pid is gone (a builder killed with SIGKILL costs its successor one
poll, not the expiry), or when it stays unreadable for a few seconds (a holder
killed between creating and writing it). A broken lock costs at most a duplicate
build, provided builders publish atomically (`ppy_core.cache.root.publish_*`,
or the cache's rename of a whole entry): the last complete result wins.

    with build_lock(folder / "x.lock"):
        if not done(): build_then_publish()
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ppy_core.cache import trust
from ppy_core.cache.trust import private_dir
from ppy_core.diagnostics import CacheError

log = logging.getLogger("ppy.cache")

UNREADABLE_GRACE_S: Final = 5.0
DEFAULT_EXPIRY_S: Final = 600.0
_POLL_FIRST_S: Final = 0.01
_POLL_MAX_S: Final = 0.25


@dataclass(frozen=True, slots=True)
class LockInfo:
    """What a lock file says about its holder; `text` is its raw content."""

    pid: int
    host: str
    time: float
    text: str


def pid_alive(pid: int) -> bool:
    """Whether `pid` runs on this host (a zombie counts as gone)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def read_lock(path: Path) -> tuple[LockInfo | None, float, str] | None:
    """(holder, age in seconds, raw text) of the lock at `path`; None if there is none.

    The holder is None when the file is empty or garbled; its age then comes
    from the file's mtime, otherwise from the time written in it.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        return None
    except OSError:
        return None, 0.0, ""
    now = time.time()
    try:
        data = json.loads(text[:4096])  # ppy writes ~100 bytes: a longer one is garbled
        info = LockInfo(int(data["pid"]), str(data["host"]), float(data["time"]), text)
    except (ValueError, KeyError, TypeError, RecursionError):
        return None, now - mtime, text
    return info, now - info.time, text


def stale_reason(info: LockInfo | None, age: float, timeout: float) -> str | None:
    """Why a lock may be broken, or None while it must be respected (`timeout`: expiry)."""
    if age > timeout:
        return f"it is {age:.0f} s old (expiry {timeout:.0f} s)"
    if info is None:
        return "it is unreadable" if age > UNREADABLE_GRACE_S else None
    if info.host == socket.gethostname() and not pid_alive(info.pid):
        return f"its process {info.pid} is gone"
    return None


class BuildLock:
    """One build lock file. `try_acquire` never blocks; `acquire` polls it."""

    def __init__(self, path: Path, timeout: float = DEFAULT_EXPIRY_S) -> None:
        self.path = Path(path)
        self.timeout = timeout  # the expiry: older locks are broken whoever holds them
        self._token = ""

    def acquire(self, wait: float | None = None, until: Callable[[], bool] | None = None) -> bool:
        """Block until the lock is ours (True), or until `until()` holds (False: someone
        else finished the work meanwhile). A live holder is waited for at most `wait`
        seconds (default: twice the expiry, by when its lock is stale anyway); then,
        or if the lock's folder is unusable, a CacheError E3002."""
        limit = 2 * self.timeout + 5 if wait is None else wait
        deadline = time.monotonic() + limit
        delay = _POLL_FIRST_S
        while True:
            try:
                if self.try_acquire():
                    return True
            except OSError as exc:
                raise CacheError(
                    f"cannot take the build lock {self.path}: {exc}",
                    code="E3002",
                    hint="set PPY_CACHE_DIR to a writable directory",
                ) from exc
            if until is not None and until():
                return False
            if time.monotonic() > deadline:
                raise CacheError(
                    f"cannot take the build lock {self.path}: still held after {limit:.0f} s",
                    code="E3002",
                    hint=f"remove {self.path} if no ppy runs",
                )
            time.sleep(delay)
            delay = min(delay * 1.5, _POLL_MAX_S)

    def try_acquire(self) -> bool:
        """Take the lock if it is free or stale; OSError if the directory is unusable."""
        if self._create():
            return True
        seen = read_lock(self.path)
        if seen is None:
            return self._create()
        info, age, text = seen
        reason = stale_reason(info, age, self.timeout)
        if not trust.trusted(self.path, "build lock") and os.path.lexists(self.path):
            reason = "it belongs to another user"  # refused (E3006): it holds nothing of ours
        if reason is None:
            return False
        log.warning("breaking stale cache lock %s: %s", self.path, reason)
        self._break(text)
        return self._create()

    def held_by_other(self) -> bool:
        """Whether someone else holds this lock now and it is not stale."""
        seen = read_lock(self.path)
        if seen is None:
            return False
        info, age, text = seen
        if self._token and f'"{self._token}"' in text:
            return False
        return stale_reason(info, age, self.timeout) is None

    def release(self) -> None:
        """Remove the lock if it is still ours (it may have been broken meanwhile)."""
        seen = read_lock(self.path)
        if self._token and seen is not None and f'"{self._token}"' in seen[2]:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        self._token = ""

    def _create(self) -> bool:
        private_dir(self.path.parent)
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return False
        token = secrets.token_hex(8)
        record = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "time": time.time(),
            "token": token,
        }
        try:
            os.write(fd, json.dumps(record).encode())
        finally:
            os.close(fd)
        self._token = token
        return True

    def _break(self, seen_text: str) -> None:
        """Remove the stale lock, unless it was replaced by a live one meanwhile."""
        grave = self.path.with_name(f"{self.path.name}.{secrets.token_hex(6)}.stale")
        try:
            os.rename(self.path, grave)
        except FileNotFoundError:
            return
        try:
            text = grave.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = seen_text
        if text != seen_text:
            with contextlib.suppress(OSError):
                os.link(grave, self.path)  # a fresh lock: put it back if the place is free
        with contextlib.suppress(FileNotFoundError):
            grave.unlink()


@contextlib.contextmanager
def build_lock(
    path: Path, *, expiry: float = DEFAULT_EXPIRY_S, wait: float | None = None
) -> Iterator[BuildLock]:
    """Hold the build lock at `path` for the body of the `with`, then release it.

    Check for the finished result again inside: the holder you waited for may have
    published it. See `BuildLock.acquire` for `wait` and the E3002 error."""
    lock = BuildLock(Path(path), expiry)
    lock.acquire(wait)
    try:
        yield lock
    finally:
        lock.release()


__all__ = [
    "BuildLock",
    "LockInfo",
    "build_lock",
    "pid_alive",
    "read_lock",
    "stale_reason",
    "DEFAULT_EXPIRY_S",
    "UNREADABLE_GRACE_S",
]
