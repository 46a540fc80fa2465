"""A damaged entry is one E3001 warning, a miss, and a rebuild that works."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from ppy_core.cache import files as _cache_files
from ppy_core.cache.store import Cache, Entry, PpyCacheWarning

FILES = {"kernel.o": b"K" * 2000, "sub/mod.py": b"y = 2\n"}


def _truncate(entry: Entry) -> None:
    (entry.path / "kernel.o").write_bytes(b"K" * 100)


def _delete(entry: Entry) -> None:
    (entry.path / "sub" / "mod.py").unlink()


def _garbage_manifest(entry: Entry) -> None:
    (entry.path.parent / "manifest.json").write_text('{"format": 1, "files": [tru')


def _missing_manifest(entry: Entry) -> None:
    (entry.path.parent / "manifest.json").unlink()


def _wrong_shape_manifest(entry: Entry) -> None:
    (entry.path.parent / "manifest.json").write_text('{"format": 1, "key": "k1", "files": 3}')


def _same_size_new_bytes(entry: Entry) -> None:
    (entry.path / "kernel.o").write_bytes(b"Q" * 2000)
    _cache_files.VERIFIED.clear()  # seen by a new process


CASES: dict[str, Callable[[Entry], None]] = {
    "truncated file": _truncate,
    "deleted file": _delete,
    "garbage manifest": _garbage_manifest,
    "missing manifest": _missing_manifest,
    "malformed manifest": _wrong_shape_manifest,
    "same size, other bytes": _same_size_new_bytes,
}


@pytest.mark.parametrize("damage", CASES.values(), ids=CASES.keys())
def test_damage_warns_once_misses_and_rebuilds(
    store_cache: Cache, make_build, damage: Callable[[Entry], None]
) -> None:
    entry = store_cache.store("k1", make_build(FILES), source_id="s", components={})
    damage(entry)
    with pytest.warns(PpyCacheWarning) as caught:
        assert store_cache.lookup("k1") is None
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "[E3001]" in message
    assert str(entry.path.parent) in message
    assert caught[0].filename == __file__  # points at the caller of lookup
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store_cache.lookup("k1") is None  # discarded: a plain miss now
        rebuilt = store_cache.store("k1", make_build(FILES), source_id="s", components={})
    assert (rebuilt.path / "kernel.o").read_bytes() == FILES["kernel.o"]
    assert store_cache.lookup("k1") == rebuilt


def test_rewrite_in_this_process_is_caught_by_the_stat_stamp(
    store_cache: Cache, make_build
) -> None:
    entry = store_cache.store("k1", make_build(FILES), source_id="s", components={})
    assert store_cache.lookup("k1") is not None  # hashed and remembered
    target = entry.path / "kernel.o"
    before = target.stat().st_mtime_ns
    target.write_bytes(b"Q" * 2000)
    os.utime(target, ns=(before + 10**9, before + 10**9))
    with pytest.warns(PpyCacheWarning, match=r"does not match its sha256.*\[E3001\]"):
        assert store_cache.lookup("k1") is None


def test_store_over_a_corrupt_entry_rebuilds_it(store_cache: Cache, make_build) -> None:
    calls: list[Path] = []
    entry = store_cache.store("k1", make_build(FILES, calls=calls), source_id="s", components={})
    _truncate(entry)
    with pytest.warns(PpyCacheWarning) as caught:
        rebuilt = store_cache.store(
            "k1", make_build(FILES, calls=calls), source_id="s", components={}
        )
    assert len(caught) == 1
    assert len(calls) == 2
    assert (rebuilt.path / "kernel.o").read_bytes() == FILES["kernel.o"]
