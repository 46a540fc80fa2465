"""explain_miss names what changed since the last store of a source."""

from __future__ import annotations

import shutil

import pytest

from ppy_core.cache.store import Cache

BASE = {
    "core": "0.1.0",
    "source": "s" * 64,
    "options": "o" * 64,
    "plugin:numpy": "numpy-2.1.0-aaaa",
    "backend:llvm": "llvm-17-bbbb",
    "file:pkg/util.ppy": "u" * 64,
}


@pytest.fixture
def stored(store_cache: Cache, make_build) -> Cache:
    store_cache.store("k1", make_build({"a": b"1"}), source_id="/p/m.ppy", components=BASE)
    return store_cache


def _explain(cache: Cache, changes: dict[str, str | None]) -> str:
    """explain_miss for BASE with `changes` applied (None drops a component)."""
    components = {**BASE, **changes}
    kept = {name: value for name, value in components.items() if value is not None}
    return cache.explain_miss("k2", "/p/m.ppy", kept)


def test_unknown_source(stored: Cache) -> None:
    assert stored.explain_miss("k2", "/p/other.ppy", BASE) == "no entry for this file yet"


def test_source_changed(stored: Cache) -> None:
    assert _explain(stored, {"source": "t" * 64}) == "source changed"


def test_options_changed(stored: Cache) -> None:
    assert _explain(stored, {"options": "p" * 64}) == "options changed"


def test_plugin_fingerprint_changed(stored: Cache) -> None:
    assert (
        _explain(stored, {"plugin:numpy": "numpy-2.2.0-cccc"})
        == "plugin numpy fingerprint changed: numpy-2.1.0-aaaa -> numpy-2.2.0-cccc"
    )


def test_imported_file_changed(stored: Cache) -> None:
    assert _explain(stored, {"file:pkg/util.ppy": "v" * 64}) == "imported file pkg/util.ppy changed"


def test_several_changes_are_all_named_source_first(stored: Cache) -> None:
    text = _explain(
        stored,
        {
            "backend:llvm": "llvm-18-dddd",
            "source": "t" * 64,
            "core": "0.2.0",
            "plugin:torch": "torch-2.5",
        },
    )
    assert text == (
        "core version changed: 0.1.0 -> 0.2.0; source changed; "
        "backend llvm fingerprint changed: llvm-17-bbbb -> llvm-18-dddd; "
        "plugin torch is now used"
    )


def test_dropped_plugin(stored: Cache) -> None:
    assert _explain(stored, {"plugin:numpy": None}) == "plugin numpy is no longer used"


def test_long_fingerprints_are_shortened(stored: Cache) -> None:
    text = _explain(stored, {"plugin:numpy": "f" * 64})
    assert text == "plugin numpy fingerprint changed: numpy-2.1.0-aaaa -> ffffffffffff..."


def test_same_key_present_and_evicted(stored: Cache) -> None:
    assert "no miss" in stored.explain_miss("k1", "/p/m.ppy", BASE)
    shutil.rmtree(stored.root / "entries" / "k1")  # as eviction by another process would
    assert "evicted" in stored.explain_miss("k1", "/p/m.ppy", BASE)


def test_components_equal_but_key_differs(stored: Cache) -> None:
    assert "none of its recorded components" in stored.explain_miss("k2", "/p/m.ppy", BASE)
