"""Least recently used entries go first once the cache passes max_bytes."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from ppy_core.cache.store import Cache

BLOB = {"k.o": b"z" * 10_000}


def _age(cache: Cache, key: str, seconds_ago: float) -> None:
    """Set the entry's last use `seconds_ago` seconds back."""
    stamp = time.time() - seconds_ago
    os.utime(cache.root / "entries" / key / "last_used", (stamp, stamp))


def _keys(cache: Cache) -> set[str]:
    return {p.name for p in (cache.root / "entries").iterdir()}


def test_least_recently_used_are_evicted_first(tmp_path: Path, make_build) -> None:
    cache = Cache(tmp_path / "c", max_bytes=35_000)
    for i, key in enumerate(("a1", "b2", "c3")):
        cache.store(key, make_build(BLOB), source_id=key, components={})
        _age(cache, key, 100 - i)
    assert cache.lookup("a1") is not None  # a1 is now the most recently used
    cache.store("d4", make_build(BLOB), source_id="d4", components={})
    assert _keys(cache) == {"a1", "c3", "d4"}
    assert cache.info().size_bytes <= 35_000


def test_just_stored_entry_survives_even_if_alone_too_big(tmp_path: Path, make_build) -> None:
    cache = Cache(tmp_path / "c", max_bytes=5_000)
    cache.store("a1", make_build(BLOB), source_id="a1", components={})
    _age(cache, "a1", 50)
    entry = cache.store("b2", make_build(BLOB), source_id="b2", components={})
    assert _keys(cache) == {"b2"}
    assert cache.lookup("b2") == entry


def test_entry_locked_by_another_process_is_kept(tmp_path: Path, make_build) -> None:
    cache = Cache(tmp_path / "c", max_bytes=25_000)
    for key in ("a1", "b2"):
        cache.store(key, make_build(BLOB), source_id=key, components={})
        _age(cache, key, 100 if key == "a1" else 90)
    lock = cache.root / "locks" / "a1.lock"
    lock.write_text(
        json.dumps(
            {
                "pid": os.getppid(),
                "host": socket.gethostname(),
                "time": time.time(),
                "token": "other",
            }
        )
    )
    cache.store("c3", make_build(BLOB), source_id="c3", components={})
    assert _keys(cache) == {"a1", "c3"}
    assert lock.exists()


def test_under_the_cap_nothing_is_evicted(tmp_path: Path, make_build) -> None:
    cache = Cache(tmp_path / "c", max_bytes=10**6)
    for key in ("a1", "b2", "c3"):
        cache.store(key, make_build(BLOB), source_id=key, components={})
    assert _keys(cache) == {"a1", "b2", "c3"}


def test_eviction_sweeps_leftovers_of_dead_builds(tmp_path: Path, make_build) -> None:
    cache = Cache(tmp_path / "c", max_bytes=15_000, lock_timeout=60)
    cache.store("a1", make_build(BLOB), source_id="a1", components={})
    leftover = cache.root / "tmp" / "zz.999999.abc"
    (leftover / "files").mkdir(parents=True)
    old = time.time() - 3600
    os.utime(leftover, (old, old))
    cache.store("b2", make_build(BLOB), source_id="b2", components={})
    assert not leftover.exists()
