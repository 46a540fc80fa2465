"""The per-key build lock: an `O_CREAT|O_EXCL` file that expires.

The lock file holds `{"pid", "host", "time", "token"}`. It is stale, and may be
broken by anyone, when it is older than the timeout, when its holder ran on
this host and its pid is gone, or when it stays unreadable for a few seconds
(a holder killed between creating and writing it). A broken lock costs at most
a duplicate build: entries are published by an atomic rename, first one wins.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

log = logging.getLogger("ppy.cache")

UNREADABLE_GRACE_S: Final = 5.0


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
        data = json.loads(text)
        info = LockInfo(int(data["pid"]), str(data["host"]), float(data["time"]), text)
    except (ValueError, KeyError, TypeError):
        return None, now - mtime, text
    return info, now - info.time, text


def stale_reason(info: LockInfo | None, age: float, timeout: float) -> str | None:
    """Why a lock may be broken, or None while it must be respected."""
    if age > timeout:
        return f"it is {age:.0f} s old (timeout {timeout:.0f} s)"
    if info is None:
        return "it is unreadable" if age > UNREADABLE_GRACE_S else None
    if info.host == socket.gethostname() and not pid_alive(info.pid):
        return f"its process {info.pid} is gone"
    return None


class KeyLock:
    """One build lock file; `try_acquire` never blocks, the caller polls."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._token = ""

    def try_acquire(self) -> bool:
        """Take the lock if it is free or stale; OSError if the directory is unusable."""
        if self._create():
            return True
        seen = read_lock(self.path)
        if seen is None:
            return self._create()
        info, age, text = seen
        reason = stale_reason(info, age, self.timeout)
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
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
