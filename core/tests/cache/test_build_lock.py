"""The one build lock and the one cache root every backend uses (`ppy_core.cache`).

The lock: a dead holder's lock is broken at once, a live holder is waited for,
an expired lock is broken whoever holds it, a wait has a limit (E3002). The root:
the building cache's root, else PPY_CACHE_DIR; publishing is atomic.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ppy_core.cache import (
    BuildLock,
    backend_dir,
    build_lock,
    cache_root,
    publish_bytes,
    using_root,
    write_if_changed,
)
from ppy_core.cache.store import Cache
from ppy_core.diagnostics import CacheError

HOLD_SCRIPT = """
import sys, time
from pathlib import Path
from ppy_core.cache import build_lock
lock, ready, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])
with build_lock(Path(lock)):
    Path(ready).touch()
    time.sleep(hold)
"""


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def write_lock(path: Path, pid: int, age: float = 0.0) -> None:
    record = {"pid": pid, "host": socket.gethostname(), "time": time.time() - age, "token": "x"}
    path.write_text(json.dumps(record))


def holder(tmp_path: Path, lock: Path, hold: float) -> subprocess.Popen[bytes]:
    """A child process holding `lock` for `hold` seconds (returned once it holds it)."""
    ready = tmp_path / "ready"
    proc = subprocess.Popen([sys.executable, "-c", HOLD_SCRIPT, str(lock), str(ready), str(hold)])
    deadline = time.monotonic() + 30
    while not ready.exists():
        assert proc.poll() is None, "the holder exited early"
        assert time.monotonic() < deadline, "the holder never took the lock"
        time.sleep(0.005)
    return proc


def test_a_dead_holders_lock_is_broken_at_once(tmp_path: Path) -> None:
    path = tmp_path / "k.lock"
    write_lock(path, dead_pid())
    start = time.monotonic()
    with build_lock(path, expiry=600.0):
        assert time.monotonic() - start < 1.0
        assert json.loads(path.read_text())["pid"] == os.getpid()
    assert not path.exists()


def test_a_live_holder_is_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "k.lock"
    proc = holder(tmp_path, path, hold=1.0)
    try:
        assert not BuildLock(path).try_acquire()
        start = time.monotonic()
        with build_lock(path):
            waited = time.monotonic() - start
            assert json.loads(path.read_text())["pid"] == os.getpid()
    finally:
        proc.wait(timeout=30)
    assert 0.5 < waited < 10.0


def test_waiting_past_the_limit_is_E3002(tmp_path: Path) -> None:
    path = tmp_path / "k.lock"
    proc = holder(tmp_path, path, hold=5.0)
    try:
        with pytest.raises(CacheError) as info, build_lock(path, wait=0.3):
            pass
        assert info.value.diagnostic.code == "E3002"
        assert str(path) in info.value.diagnostic.hint
    finally:
        proc.kill()
        proc.wait()


def test_an_expired_lock_is_broken_even_if_its_holder_lives(tmp_path: Path) -> None:
    path = tmp_path / "k.lock"
    write_lock(path, os.getppid(), age=100.0)
    assert BuildLock(path, timeout=50.0).try_acquire()
    write_lock(path, os.getppid(), age=10.0)
    assert not BuildLock(path, timeout=50.0).try_acquire()


def test_acquire_stops_waiting_when_the_work_is_done(tmp_path: Path) -> None:
    path = tmp_path / "k.lock"
    write_lock(path, os.getppid())
    calls: list[float] = []

    def done() -> bool:
        calls.append(time.monotonic())
        return len(calls) >= 3

    assert BuildLock(path).acquire(wait=10.0, until=done) is False
    assert len(calls) == 3
    assert json.loads(path.read_text())["pid"] == os.getppid()  # not ours, untouched


def test_an_unusable_lock_folder_is_E3002(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(CacheError) as info, build_lock(blocker / "k.lock"):
        pass
    assert info.value.diagnostic.code == "E3002"


def test_the_root_is_the_building_caches_then_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    with using_root(tmp_path / "project"):
        assert cache_root() == tmp_path / "project"
        with using_root(tmp_path / "inner"):
            assert backend_dir("llvm") == tmp_path / "inner" / "llvm"
            assert (tmp_path / "inner" / "llvm").is_dir()
        assert cache_root() == tmp_path / "project"
    assert cache_root() == tmp_path / "env"
    with pytest.raises(ValueError):
        backend_dir("../escape")


def test_a_cache_build_sees_its_own_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "env"))
    seen: list[Path] = []

    def build(out: Path) -> dict[str, object]:
        seen.append(backend_dir("llvm"))
        (out / "a").write_bytes(b"a")
        return {}

    cache = Cache(tmp_path / "project-cache")
    cache.store("k1", build, source_id="/m.py", components={"source": "s"})
    assert seen == [tmp_path / "project-cache" / "llvm"]
    assert cache_root() == tmp_path / "env"


def test_publishing_is_atomic_and_skips_unchanged_content(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "k.so"
    publish_bytes(path, b"one")
    assert path.read_bytes() == b"one"
    assert write_if_changed(path, b"one") is False
    stamp = path.stat().st_mtime_ns
    assert write_if_changed(path, "two") is True
    assert path.read_bytes() == b"two"
    assert path.stat().st_mtime_ns >= stamp
    # no temporary left; beside the file, the hash it is checked against before reuse
    assert sorted(p.name for p in path.parent.iterdir()) == [".k.so.sha256", "k.so"]
    assert (path.parent / ".k.so.sha256").read_text() == hashlib.sha256(b"two").hexdigest()
