"""Trust rules of the cache: it holds code the runtime runs, so only what the user
wrote is used. Another user is faked by changing the uid the checks compare with
(`trust.current_uid`): the very code path a foreign-owned file takes."""

from __future__ import annotations

import os
import re
import stat
import sys
import time
import warnings
from pathlib import Path

import pytest

from ppy_core.cache import builds, records, root, trust
from ppy_core.cache.lock import BuildLock
from ppy_core.cache.quick import entry_files
from ppy_core.cache.store import Cache
from ppy_core.runtime import dispatch, integrity
from ppy_core.runtime.finder import CompilingLoader, PpyFinder
from ppy_core.runtime.module import ArtifactWarning, Binder, bound

needs_uids = pytest.mark.skipif(not hasattr(os, "getuid"), reason="no POSIX uids here")


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trust, "_WARNED", set())
    monkeypatch.setattr(builds, "_WARNED", set())
    monkeypatch.setattr(builds, "_VERIFIED", {})


def _someone_else(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, every file this test wrote belongs to another user."""
    monkeypatch.setattr(trust, "current_uid", lambda: os.getuid() + 1)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _store(cache: Cache, key: str = "a" * 64) -> Path:
    def build(tmp: Path) -> dict[str, str]:
        (tmp / "module.code").write_bytes(b"code")
        return {"kind": "test"}

    return cache.store(key, build, source_id="/src/m.ppy", components={"source": "s"}).path


@needs_uids
def test_cache_folders_are_created_private(tmp_path: Path) -> None:
    old = os.umask(0o022)  # a usual umask: what mkdir would give is 0755
    try:
        cache = Cache(tmp_path / "cache")
        _store(cache)
        with root.using_root(tmp_path / "cache"):
            backend = root.backend_dir("somebackend")
        records.write("x", [], 1, tmp_path / "cache")
    finally:
        os.umask(old)
    for name in ("", "entries", "locks", "tmp", "index", "records", "somebackend"):
        assert _mode(tmp_path / "cache" / name) == 0o700, name
    assert backend == tmp_path / "cache" / "somebackend"
    assert _mode(next((tmp_path / "cache" / "locks").iterdir(), backend)) in (0o600, 0o700)


@needs_uids
def test_an_entry_of_another_user_is_refused_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = Cache(tmp_path / "cache")
    key = "b" * 64
    _store(cache, key)
    assert cache.lookup(key) is not None
    _someone_else(monkeypatch)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        found = [cache.lookup(key), cache.lookup(key)]  # the same entry twice: one warning
        quick = entry_files(str(tmp_path / "cache"), key)  # the cached-start path
    assert found == [None, None]
    assert quick is None
    assert [w.category for w in seen] == [trust.ForeignWarning]
    assert re.search(r"owned by another user.*\[E3006\]", str(seen[0].message))
    assert (tmp_path / "cache" / "entries" / key / "files" / "module.code").is_file()  # kept


@needs_uids
def test_a_lock_of_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "locks" / "k.lock"
    holder = BuildLock(path)
    assert holder.try_acquire()  # held by a live process (this one), not stale
    assert not BuildLock(path).try_acquire()
    theirs = path.stat().st_ino  # only the lock file is another user's, not its folder
    monkeypatch.setattr(trust, "owned_by_other", lambda st: st.st_ino == theirs)
    mine = BuildLock(path)
    with pytest.warns(trust.ForeignWarning, match=r"build lock owned by another user"):
        taken = mine.try_acquire()  # its lock holds nothing of ours: broken, ours taken
    assert taken
    assert mine._token
    assert mine._token in path.read_text()


@needs_uids
def test_a_record_of_another_user_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "f.txt"
    source.write_text("x")
    records.write("r", [str(source)], {"v": 0}, tmp_path)
    assert records.read("r", tmp_path) is None  # just changed: its mtime may not move again
    old = time.time() - 10
    os.utime(source, (old, old))
    records.write("r", [str(source)], {"v": 1}, tmp_path)
    assert records.read("r", tmp_path) == {"v": 1}
    source.write_text("xy")  # what it was derived from changed: stale
    assert records.read("r", tmp_path) is None
    os.utime(source, (old, old))
    records.write("r", [str(source)], {"v": 2}, tmp_path)
    assert records.read("r", tmp_path) == {"v": 2}
    _someone_else(monkeypatch)
    with pytest.warns(trust.ForeignWarning, match="cache record"):
        assert records.read("r", tmp_path) is None


def test_a_tampered_build_file_is_neither_reused_nor_copied(tmp_path: Path) -> None:
    with root.using_root(tmp_path):
        folder = root.backend_dir("llvm")
    library = folder / "k-123.so"
    built = folder / "k.tmp"
    built.write_bytes(b"\x7fELF" + bytes(range(200)))
    root.publish_file(built, library)
    assert builds.verify_build(library)
    builds.verified_copy(library, tmp_path / "copy.so")
    assert (tmp_path / "copy.so").read_bytes() == library.read_bytes()
    data = bytearray(library.read_bytes())
    data[10] ^= 0x01  # one bit, same size
    library.write_bytes(bytes(data))
    with pytest.warns(builds.BuildWarning, match=r"differs from its hash.*\[E3008\]"):
        assert not builds.verify_build(library)
    with pytest.raises(OSError, match="failed its check"):
        builds.verified_copy(library, tmp_path / "again.so")
    assert not (tmp_path / "again.so").exists()
    unrecorded = folder / "stray.so"
    unrecorded.write_bytes(b"\x7fELF")
    with pytest.warns(builds.BuildWarning, match="no recorded hash"):
        assert not builds.verify_build(unrecorded)


def _bind(folder: Path, unit: dict[str, object], fallback: object) -> object:
    record = {"index": 0, "id": "f.1", "text": "a + 1", "unit": unit}
    manifest = {"module": {"name": "trust_test"}, "function_sites": [], "expr_sites": [record]}
    namespace: dict[str, object] = {}
    integrity.mark(folder, set(unit["files"]))  # type: ignore[arg-type]  # checked files
    Binder(folder, manifest, namespace).bind({0: fallback})  # type: ignore[dict-item]
    return bound(namespace["__ppy_site_0"])  # bound now: its warning comes here


@pytest.mark.parametrize(
    "unit",
    [
        {"backend": "x", "loader": "os:system", "files": [], "data": {}},
        {"backend": "x", "loader": "ppy_core.cli.app:main", "files": [], "data": {}},
        {"backend": "x", "runtime": "os", "files": ["k.so"], "data": {}},
    ],
    ids=["arbitrary-module-function", "ppy-module-function", "unregistered-adapter"],
)
def test_a_manifest_naming_what_is_not_registered_runs_python(
    tmp_path: Path, unit: dict[str, object]
) -> None:
    dispatch.reset_stats()
    called: list[str] = []
    sys.modules.pop("ppy_core.cli.app", None)
    with pytest.warns(ArtifactWarning, match=r"distribution registers.*\[E3007\]") as seen:
        site = _bind(tmp_path, unit, lambda a: called.append("python") or a + 1)
    assert len(seen) == 1
    assert site(1) == 2  # type: ignore[operator]
    assert called == ["python"]
    assert "ppy_core.cli.app" not in sys.modules  # named, never imported
    assert dispatch.stats()["trust_test:f.1"] == {
        "fast": 0,
        "fallback": {"unregistered loader": 1},
    }


@pytest.mark.parametrize("earlier", ["mod.py", "mod/__init__.py"])
def test_an_earlier_python_module_wins_over_a_later_ppy(tmp_path: Path, earlier: str) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    (first / earlier).parent.mkdir(parents=True)
    (first / earlier).write_text("WHO = 'py'\n")
    second.mkdir()
    (second / "mod.ppy").write_text("WHO = 'ppy'\n")
    finder = PpyFinder()
    assert finder.find_spec("mod", [str(first), str(second)]) is None  # Python's finders
    spec = finder.find_spec("mod", [str(second), str(first)])
    assert spec is not None
    assert isinstance(spec.loader, CompilingLoader)
    assert spec.origin == str(second / "mod.ppy")
    (first / "mod.ppy").write_text("WHO = 'ppy here'\n")  # one folder: the .ppy wins
    spec = finder.find_spec("mod", [str(first), str(second)])
    assert spec is not None
    assert spec.origin == str(first / "mod.ppy")


def test_nothing_is_refused_for_the_user_themself(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache = Cache(tmp_path / "cache")
        _store(cache, "c" * 64)
        assert cache.lookup("c" * 64) is not None
        assert trust.trusted(tmp_path / "cache", "cache folder")
