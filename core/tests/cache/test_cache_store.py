"""Store and lookup, build failures, configuration, info and clear."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ppy_core.cache import files as _cache_files
from ppy_core.cache.store import (
    DEFAULT_MAX_BYTES,
    Cache,
    CacheInfo,
    default_max_bytes,
    default_root,
)
from ppy_core.diagnostics import CacheError, ConfigError, InternalError

COMPONENTS = {"core": "0.1.0", "source": "s1"}


def test_store_then_lookup_returns_files_and_meta(store_cache: Cache, make_build) -> None:
    files = {"kernel.o": b"\x7fELF" + bytes(100), "sub/module.py": b"x = 1\n"}
    stored = store_cache.store(
        "ab" * 32,
        make_build(files, {"symbol": "k0", "n": [1, 2]}),
        source_id="/p/m.ppy",
        components=COMPONENTS,
    )
    found = store_cache.lookup("ab" * 32)
    assert found == stored
    assert found is not None
    assert dict(found.meta) == {"symbol": "k0", "n": [1, 2]}
    for rel, data in files.items():
        assert (found.path / rel).read_bytes() == data
    manifest = json.loads((found.path.parent / "manifest.json").read_text())
    assert manifest["files"]["kernel.o"]["size"] == 104
    assert len(manifest["files"]["sub/module.py"]["sha256"]) == 64


def test_lookup_of_missing_key_creates_nothing(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "absent")
    assert cache.lookup("deadbeef") is None
    assert not (tmp_path / "absent").exists()


def test_store_of_present_key_does_not_build_again(store_cache: Cache, make_build) -> None:
    calls: list[Path] = []
    first = store_cache.store(
        "k1", make_build({"a": b"1"}, calls=calls), source_id="s", components=COMPONENTS
    )
    second = store_cache.store(
        "k1", make_build({"a": b"2"}, calls=calls), source_id="s", components=COMPONENTS
    )
    assert len(calls) == 1
    assert second == first


def test_failing_build_publishes_nothing_and_releases_the_lock(
    store_cache: Cache, make_build
) -> None:
    def boom(tmp: Path) -> dict[str, object]:
        (tmp / "half.o").write_bytes(b"half")
        raise RuntimeError("compiler exploded")

    with pytest.raises(RuntimeError, match="compiler exploded"):
        store_cache.store("k1", boom, source_id="s", components=COMPONENTS)
    assert store_cache.lookup("k1") is None
    assert list((store_cache.root / "locks").iterdir()) == []
    assert list((store_cache.root / "tmp").iterdir()) == []
    entry = store_cache.store("k1", make_build({"a": b"1"}), source_id="s", components=COMPONENTS)
    assert (entry.path / "a").read_bytes() == b"1"


def test_meta_that_is_not_json_is_an_internal_error(store_cache: Cache) -> None:
    with pytest.raises(InternalError, match="cannot be written"):
        store_cache.store("k1", lambda tmp: {"x": object()}, source_id="s", components={})
    assert store_cache.lookup("k1") is None


@pytest.mark.parametrize("key", ["", "../escape", "a/b", ".hidden", "x" * 200])
def test_bad_keys_are_refused(store_cache: Cache, key: str) -> None:
    with pytest.raises(InternalError):
        store_cache.lookup(key)


def test_hashes_are_checked_once_per_process(
    store_cache: Cache, make_build, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_cache.store("k1", make_build({"a": b"1", "b": b"2"}), source_id="s", components={})
    _cache_files.VERIFIED.clear()  # as if in a new process
    hashed: list[Path] = []
    real = _cache_files.sha256_file

    def counting(path: Path, *, sync: bool = False) -> str:
        hashed.append(path)
        return real(path, sync=sync)

    monkeypatch.setattr(_cache_files, "sha256_file", counting)
    for _ in range(3):
        assert store_cache.lookup("k1") is not None
    assert len(hashed) == 2


def test_unwritable_lock_place_is_E3002(tmp_path: Path, make_build) -> None:
    cache = Cache(tmp_path / "c")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "locks").write_text("not a directory")
    with pytest.raises(CacheError) as caught:
        cache.store("k1", make_build({"a": b"1"}), source_id="s", components={})
    assert caught.value.code == "E3002"


def test_default_root_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "here"))
    assert default_root() == tmp_path / "here"
    assert Cache().root == tmp_path / "here"
    monkeypatch.delenv("PPY_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_root() == tmp_path / "xdg" / "ppy"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_root() == tmp_path / "home" / ".cache" / "ppy"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", DEFAULT_MAX_BYTES),
        ("12345", 12345),
        ("500M", 500 * 2**20),
        ("2GiB", 2 * 2**30),
        ("1 k", 1024),
    ],
)
def test_max_bytes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, text: str, expected: int
) -> None:
    monkeypatch.setenv("PPY_CACHE_MAX_BYTES", text)
    assert default_max_bytes() == expected


def test_bad_max_bytes_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_MAX_BYTES", "lots")
    with pytest.raises(ConfigError) as caught:
        Cache(Path("unused"))
    assert caught.value.code == "E1950"


def test_info_and_clear(store_cache: Cache, make_build) -> None:
    assert store_cache.info() == CacheInfo(store_cache.root, 0, 0, 10**9)
    for key in ("k1", "k2", "k3"):
        store_cache.store(key, make_build({"a.o": b"x" * 1000}), source_id=key, components={})
    info = store_cache.info()
    assert info.entries == 3
    assert 3000 < info.size_bytes < 3000 + 3 * 1024
    assert store_cache.clear() == 3
    assert store_cache.info().entries == 0
    assert store_cache.lookup("k1") is None
    assert store_cache.explain_miss("k1", "k1", {}) == "no entry for this file yet"
    assert store_cache.clear() == 0


def test_unwritable_cache_is_a_cache_error_not_an_oserror(tmp_path: Path, make_build) -> None:
    cache = Cache(tmp_path / "c")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "tmp").write_text("not a directory")
    with pytest.raises(CacheError, match="cannot be written") as caught:
        cache.store("k1", make_build({"a": b"1"}), source_id="s", components={})
    assert caught.value.code == "E3001"
    assert list((tmp_path / "c" / "locks").iterdir()) == []


def test_build_errors_propagate_unchanged_even_oserror(store_cache: Cache) -> None:
    def build(tmp: Path) -> dict[str, object]:
        raise FileNotFoundError("the user's compiler is missing")

    with pytest.raises(FileNotFoundError, match="compiler is missing"):
        store_cache.store("k1", build, source_id="s", components={})
