"""Files of one cache entry: the manifest, its checks, atomic publish and removal.

An entry is a directory `entries/<key>/` holding

    manifest.json   {"format": 1, "key": ..., "files": {relpath: {"size", "sha256"}}, "meta": {...}}
    last_used       empty; its mtime is the entry's LRU clock
    files/          what the build wrote

    seal            HMAC-SHA256 of manifest.json under the cache's own secret

It is staged under `tmp/` and published by renaming the whole directory, so a
reader sees either no entry or a complete one. Removal renames into `trash/`
first for the same reason.

The manifest's hashes protect the files; the seal protects the manifest: it is an
HMAC of the manifest's bytes (which name the entry's key) under a random secret
kept in the cache root (`secret`, 0600, made by the first writer). Someone who
rewrites a kernel and its hash in the manifest, or moves an entry under another
key, cannot write the matching seal without reading the user's secret: the entry
is discarded (E3001) and rebuilt. Every file and folder of an entry is the user's
alone (0600/0700), whatever the umask.
"""

from __future__ import annotations

import contextlib
import os
from _thread import allocate_lock  # `threading` costs a cached start ~1-2 ms
from pathlib import Path

from ppy_core.cache.trust import others_may_write, owned_by_other, private_file
from ppy_core.runtime import jsontext  # `json` costs a cached start ~2 ms: written lazily

TYPE_CHECKING = False  # `typing` costs a cached start ~3 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

FORMAT = 1
MANIFEST = "manifest.json"
LAST_USED = "last_used"
FILES = "files"
SEAL = "seal"
SECRET = "secret"
#: the most bytes a manifest may have: anything larger is not one ppy wrote
MAX_MANIFEST_BYTES = 16 << 20

_CHUNK = 1 << 20


class Corrupt(Exception):
    """Raised inside the cache when an entry fails a check; never leaves the package."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Foreign(Corrupt):
    """An entry's file belongs to another user (`reason`: its relative path): the
    entry is refused (E3006), not discarded, since it is not ours to remove."""


class _Verified:
    """Entries whose hashes this process has checked, keyed by a stat fingerprint.

    Sizes are checked on every lookup; hashes once per process per entry, again
    only when a file's inode, size or mtime changes.
    """

    def __init__(self) -> None:
        self._seen: set[tuple[object, ...]] = set()
        self._lock = allocate_lock()

    def __contains__(self, stamp: tuple[object, ...]) -> bool:
        with self._lock:
            return stamp in self._seen

    def add(self, stamp: tuple[object, ...]) -> None:
        with self._lock:
            self._seen.add(stamp)

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()


VERIFIED = _Verified()


def new_sha256() -> Any:
    """A sha256 hasher without loading OpenSSL where the interpreter has its own
    (`_sha256`, 3.11; `_sha2`, 3.12+): `import hashlib` costs a cached start ~3 ms.
    The digests are the same (SHA-256 is SHA-256)."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found,no-redef]
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment]
    return sha256()


def sha256_file(path: Path, *, sync: bool = False) -> str:
    """The file's sha256 in hex; with `sync`, also fsync it (it is open anyway)."""
    digest = new_sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
        if sync:
            os.fsync(handle.fileno())
    return digest.hexdigest()


def fsync_dir(path: Path) -> None:
    """Make a rename inside `path` durable, where the platform allows it."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def scan_files(files_dir: Path) -> dict[str, dict[str, Any]]:
    """Size and sha256 of every regular file under `files_dir`, by POSIX relative path."""
    listing: dict[str, dict[str, Any]] = {}
    for dirpath, dirnames, filenames in os.walk(files_dir):
        dirnames.sort()
        os.chmod(dirpath, 0o700)
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if path.is_symlink() or not path.is_file():
                raise ValueError(f"{path}: only regular files can be cached")
            rel = path.relative_to(files_dir).as_posix()
            private_file(path)  # the user's alone, whatever the umask made it
            size = path.stat().st_size
            listing[rel] = {"size": size, "sha256": sha256_file(path, sync=True)}
    return listing


def write_manifest(stage: Path, key: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    """Write `stage/manifest.json` for the files under `stage/files`; return its content."""
    manifest = {
        "format": FORMAT,
        "key": key,
        "files": scan_files(stage / FILES),
        "meta": dict(meta),
    }
    import json

    text = json.dumps(manifest, sort_keys=True, indent=1)
    raw = text.encode("utf-8")
    _write_private(stage / MANIFEST, raw)
    _write_private(stage / SEAL, seal(secret(stage.parent.parent, create=True), raw).encode())
    _write_private(stage / LAST_USED, b"")
    os.chmod(stage, 0o700)
    fsync_dir(stage)
    return jsontext.loads(text)  # type: ignore[no-any-return]


def _write_private(path: Path, data: bytes) -> None:
    """Write `path` (new) readable by the user only, durably."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the umask may have taken bits away, never added
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def secret(root: Path, *, create: bool = False) -> bytes:
    """The cache's random secret (32 bytes in `root/secret`, 0600): made once by the
    first writer (`create`), read by every lookup. Corrupt when it is missing, not the
    user's own, readable or writable by others, or not 32 bytes: no entry is trusted."""
    path = root / SECRET
    for _attempt in range(3):
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            if not create:
                raise Corrupt("the cache has no secret to check seals with") from None
            _make_secret(path, replace=False)
            continue
        except OSError as exc:
            raise Corrupt(f"the cache's secret cannot be read: {exc}") from None
        try:
            st = os.fstat(fd)
            exposed = owned_by_other(st) or (st.st_mode & 0o077 and os.name == "posix")
            data = b"" if exposed else os.read(fd, 64)
        finally:
            os.close(fd)
        if len(data) == 32:
            return data
        if not create:
            raise Corrupt("the cache's secret is not the user's alone, or malformed")
        # others could read it (or it is broken): a new one; every older seal then fails
        _make_secret(path, replace=True)
    raise Corrupt("the cache's secret cannot be made")


def _make_secret(path: Path, *, replace: bool) -> None:
    from ppy_core.cache.trust import private_dir

    private_dir(path.parent)
    tmp = path.with_name(f".{SECRET}.{os.getpid()}.{os.urandom(4).hex()}")
    try:
        _write_private(tmp, os.urandom(32))
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # never over another writer's: the first one wins
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def seal(key: bytes, data: bytes) -> str:
    """HMAC-SHA256 of `data` under `key` (RFC 2104), in hex: `hmac` imports `hashlib`
    (OpenSSL, ~3 ms on a cached start); this uses the interpreter's own sha256."""
    block = key.ljust(64, b"\0")
    inner = new_sha256()
    inner.update(bytes(b ^ 0x36 for b in block))
    inner.update(data)
    outer = new_sha256()
    outer.update(bytes(b ^ 0x5C for b in block))
    outer.update(inner.digest())
    return outer.hexdigest()  # type: ignore[no-any-return]


def _check_seal(entry_dir: Path, raw: bytes) -> None:
    from _operator import _compare_digest  # hmac.compare_digest without hashlib

    try:
        with open(entry_dir / SEAL, "rb") as handle:
            recorded = handle.read(128).decode("ascii", "replace").strip()
    except OSError:
        raise Corrupt("manifest.json has no seal") from None
    if not _compare_digest(recorded, seal(secret(entry_dir.parent.parent), raw)):
        raise Corrupt("manifest.json does not match its seal")


def read_manifest(entry_dir: Path, key: str) -> dict[str, Any]:
    """The entry's manifest, checked for shape; raises Corrupt (Foreign when another
    user wrote it)."""
    try:
        st = os.lstat(entry_dir / MANIFEST)
        if owned_by_other(st):
            raise Foreign(f"../{MANIFEST}")
        if others_may_write(st):
            raise Corrupt("manifest.json is writable by others")
        if st.st_size > MAX_MANIFEST_BYTES:
            raise Corrupt(f"manifest.json is {st.st_size} bytes, more than any ppy writes")
        with open(entry_dir / MANIFEST, "rb") as handle:
            raw = handle.read(MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise Corrupt("manifest.json is missing") from None
    except OSError as exc:
        raise Corrupt(f"manifest.json cannot be read: {exc}") from None
    _check_seal(entry_dir, raw)
    try:
        manifest = jsontext.loads(raw, max_bytes=MAX_MANIFEST_BYTES)
    except ValueError as exc:
        raise Corrupt(f"manifest.json is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise Corrupt(f"manifest.json is not a format-{FORMAT} manifest")
    if manifest.get("key") != key:
        raise Corrupt(f"manifest.json is for key {manifest.get('key')!r}")
    files, meta = manifest.get("files"), manifest.get("meta")
    if not isinstance(files, dict) or not isinstance(meta, dict):
        raise Corrupt("manifest.json lacks its file list or its meta")
    for rel, info in files.items():
        parts = Path(rel).parts
        if not parts or Path(rel).is_absolute() or ".." in parts:
            raise Corrupt(f"manifest.json names a file outside the entry: {rel!r}")
        if not (
            isinstance(info, dict)
            and isinstance(info.get("size"), int)
            and isinstance(info.get("sha256"), str)
        ):
            raise Corrupt(f"manifest.json has a malformed record for {rel}")
    return manifest


def check_files(entry_dir: Path, manifest: Mapping[str, Any]) -> None:
    """Sizes always; hashes unless this process already checked these very files."""
    from ppy_core.runtime import integrity

    files_dir = entry_dir / FILES
    stamp: list[object] = [str(entry_dir)]
    seen: dict[str, tuple[int, ...]] = {}
    for rel, info in sorted(manifest["files"].items()):
        try:
            st = (files_dir / rel).stat()
        except OSError:
            raise Corrupt(f"file {rel} is missing") from None
        if owned_by_other(st):
            raise Foreign(rel)
        if others_may_write(st):
            raise Corrupt(f"file {rel} is writable by others")
        if st.st_size != info["size"]:
            raise Corrupt(f"file {rel} is {st.st_size} bytes, the manifest says {info['size']}")
        seen[rel] = integrity.stamp(st)
        stamp.append((rel, *seen[rel], info["sha256"]))
    key = tuple(stamp)
    if key not in VERIFIED and not _remembered(entry_dir, key):
        for rel, info in manifest["files"].items():
            if sha256_file(files_dir / rel) != info["sha256"]:
                raise Corrupt(f"file {rel} does not match its sha256")
        VERIFIED.add(key)
        _remember(entry_dir, key, [str(files_dir / rel) for rel in manifest["files"]])
    # what the loaders may load from it, while each file is still the one checked
    integrity.mark(files_dir, manifest["files"], seen)


def _verified_name(entry_dir: Path) -> str:
    return f"verified:{entry_dir}"


def _remembered(entry_dir: Path, key: tuple[object, ...]) -> bool:
    """Whether an earlier process hashed these very files (each one's device, inode,
    size, mtime and ctime, and the sha256 it matched, all as now): a record in the
    cache's private `records/` (issue 32 item 2: a warm start does not hash its
    megabytes again). Any write, replacement or chmod of a file changes its ctime."""
    from ppy_core.cache import records

    value = records.read(_verified_name(entry_dir), entry_dir.parent.parent)
    return isinstance(value, list) and value == records.as_plain(key)


def _remember(entry_dir: Path, key: tuple[object, ...], paths: list[str]) -> None:
    from ppy_core.cache import records

    records.write(_verified_name(entry_dir), paths, key, entry_dir.parent.parent)


def remember_verified(entry_dir: Path, manifest: Mapping[str, Any]) -> None:
    """Record a freshly published entry as checked (its hashes were just computed)."""
    with contextlib.suppress(Corrupt):
        check_files(entry_dir, manifest)


def tree_size(path: Path) -> int:
    """Bytes of every file under `path` (0 if it is gone)."""
    total = 0
    for dirpath, _dirnames, filenames in os.walk(path):
        for name in filenames:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def remove_tree(path: Path, trash: Path) -> bool:
    """Remove `path` by renaming it into `trash` first; False if it was already gone."""
    import shutil

    from ppy_core.cache.trust import private_dir

    private_dir(trash)
    grave = trash / f"{path.name}.{os.urandom(6).hex()}"
    try:
        os.rename(path, grave)
    except FileNotFoundError:
        return False
    shutil.rmtree(grave, ignore_errors=True)
    return True


def write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    """Replace `path` with `data` as JSON; readers see the old or the new file, whole."""
    import json

    from ppy_core.cache.trust import private_dir

    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    try:
        _write_private(tmp, json.dumps(data, sort_keys=True, indent=1).encode("utf-8"))
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
