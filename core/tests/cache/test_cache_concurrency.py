"""Two builders of one key, and locks left behind by processes that died."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ppy_core.cache.lock import pid_alive
from ppy_core.cache.store import Cache

KEY = "c0ffee" * 4


def _result(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    return json.loads(out)


def _write_lock(cache: Cache, key: str, *, pid: int, age: float, host: str | None = None) -> Path:
    path = cache.root / "locks" / f"{key}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "pid": pid,
        "host": host or socket.gethostname(),
        "time": time.time() - age,
        "token": "left-behind",
    }
    path.write_text(json.dumps(record))
    return path


def _dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(proc.stdout)


def test_two_processes_one_key_build_once(storer, tmp_path: Path) -> None:
    first = storer.start(KEY, delay=0.6)
    second = storer.start(KEY, delay=0.6)
    storer.go.touch()
    results = [_result(first), _result(second)]
    assert len(storer.builds()) == 1
    assert results[0] == results[1]
    assert results[0]["meta"] == {"builder": int(storer.builds()[0])}
    entry = Cache(storer.root).lookup(KEY)
    assert entry is not None
    assert (entry.path / "kernel.o").read_bytes() == b"k" * 4096
    assert list((storer.root / "locks").iterdir()) == []


def test_waiter_returns_the_holders_entry(storer, make_build) -> None:
    holder = storer.start(KEY, delay=0.8, wait_go=False)
    storer_cache = Cache(storer.root)
    lock = storer.root / "locks" / f"{KEY}.lock"
    deadline = time.monotonic() + 10
    while not lock.exists():
        assert time.monotonic() < deadline
        time.sleep(0.005)
    calls: list[Path] = []
    entry = storer_cache.store(
        KEY, make_build({"x": b"mine"}, calls=calls), source_id="s", components={}
    )
    assert calls == []
    assert entry.meta["builder"] == holder.pid
    _result(holder)


def test_threads_of_one_process_build_once(store_cache: Cache, make_build) -> None:
    calls: list[Path] = []
    slow = make_build({"a": b"1"}, calls=calls)

    def build(tmp: Path) -> dict[str, object]:
        time.sleep(0.3)
        return slow(tmp)

    results = []
    threads = [
        threading.Thread(
            target=lambda: results.append(
                store_cache.store(KEY, build, source_id="s", components={})
            )
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(calls) == 1
    assert len(results) == 3
    assert results[0] == results[1] == results[2]


def test_lock_of_a_dead_pid_expires_at_once(store_cache: Cache, make_build) -> None:
    _write_lock(store_cache, KEY, pid=_dead_pid(), age=1)
    start = time.monotonic()
    entry = store_cache.store(KEY, make_build({"a": b"1"}), source_id="s", components={})
    assert time.monotonic() - start < 2
    assert (entry.path / "a").read_bytes() == b"1"


def test_old_lock_of_a_live_pid_expires(tmp_path: Path, make_build) -> None:
    cache = Cache(tmp_path / "c", lock_timeout=600)
    _write_lock(cache, KEY, pid=os.getppid(), age=3600)
    start = time.monotonic()
    cache.store(KEY, make_build({"a": b"1"}), source_id="s", components={})
    assert time.monotonic() - start < 2


def test_fresh_lock_from_another_host_is_waited_for_until_timeout(
    tmp_path: Path, make_build
) -> None:
    cache = Cache(tmp_path / "c", lock_timeout=0.5)
    _write_lock(cache, KEY, pid=1, age=0, host="elsewhere.invalid")
    start = time.monotonic()
    cache.store(KEY, make_build({"a": b"1"}), source_id="s", components={})
    assert 0.4 < time.monotonic() - start < 3


def test_empty_lock_file_expires_after_its_grace(tmp_path: Path, make_build) -> None:
    cache = Cache(tmp_path / "c")
    lock = cache.root / "locks" / f"{KEY}.lock"
    lock.parent.mkdir(parents=True)
    lock.touch()
    old = time.time() - 60
    os.utime(lock, (old, old))
    start = time.monotonic()
    cache.store(KEY, make_build({"a": b"1"}), source_id="s", components={})
    assert time.monotonic() - start < 2


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_builder_killed_mid_build_leaves_a_lock_that_expires(storer, make_build) -> None:
    victim = storer.start(KEY, delay=60, wait_go=False)
    deadline = time.monotonic() + 10
    while not storer.builds():
        assert time.monotonic() < deadline
        time.sleep(0.005)
    victim.kill()
    victim.communicate()  # reaps it: a zombie would still look alive
    assert (storer.root / "locks" / f"{KEY}.lock").exists()
    start = time.monotonic()
    entry = Cache(storer.root).store(KEY, make_build({"a": b"after"}), source_id="s", components={})
    assert time.monotonic() - start < 2
    assert (entry.path / "a").read_bytes() == b"after"
    assert not (storer.root / "locks" / f"{KEY}.lock").exists()


def test_two_processes_racing_past_a_stale_lock_build_once(storer) -> None:
    _write_lock(Cache(storer.root), KEY, pid=_dead_pid(), age=1)
    first = storer.start(KEY, delay=0.4)
    second = storer.start(KEY, delay=0.4)
    storer.go.touch()
    assert _result(first) == _result(second)
    assert len(storer.builds()) == 1


def test_a_zombie_holder_counts_as_gone() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 10
        while pid_alive(proc.pid):  # alive until it exits; then a zombie until reaped
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        proc.wait()
    assert not pid_alive(proc.pid)
    assert pid_alive(os.getpid())


def test_builder_whose_lock_was_broken_returns_the_winners_entry(
    store_cache: Cache, make_build
) -> None:
    rival = Cache(store_cache.root)

    def slow_build(tmp: Path) -> dict[str, object]:
        # Meanwhile our lock is judged stale and broken, and a rival publishes first.
        (store_cache.root / "locks" / f"{KEY}.lock").unlink()
        rival.store(KEY, make_build({"a": b"rival"}), source_id="s", components={})
        (tmp / "a").write_bytes(b"ours")
        return {}

    entry = store_cache.store(KEY, slow_build, source_id="s", components={})
    assert (entry.path / "a").read_bytes() == b"rival"
    assert list((store_cache.root / "tmp").iterdir()) == []
