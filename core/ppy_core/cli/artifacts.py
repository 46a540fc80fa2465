"""`ppy run`'s artifacts: where they live, whether they are fresh, whether intact.

Each FILE's artifact is a folder under the cache root of FILE's project (its
`[tool.ppy] cache-dir`, else the default root): `runs/<hash of the path>/`, private
to the user. It is used only when the user owns it and every file matches the size
and sha256 its manifest recorded when it was built (as a `ppy FILE` cache entry), and
only while each of its modules' cache key is the one it was built with. The keys
come from records (`cache.quick`) while nothing they came from changed, so a fresh
artifact is found without loading the compiler, a plugin, a backend or a library.
"""

from __future__ import annotations

import os
from pathlib import Path

from ppy_core.cache import trust
from ppy_core.cache.quick import quick_key
from ppy_core.runtime import jsontext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def runs_dir(path: Path, cache_dir: str) -> Path:
    """The artifact folder of `path` under `cache_dir` (or the default root)."""
    from ppy_core.cache.root import default_root

    base = Path(cache_dir) if cache_dir else default_root()
    from ppy_core.cache.files import new_sha256

    digest = new_sha256()
    digest.update(str(path).encode())
    return base / "runs" / digest.hexdigest()[:16]


def _manifest(root: Path) -> dict[str, Any] | None:
    if not trust.trusted(root, "`ppy run` artifact"):
        return None
    try:
        manifest = jsontext.read(root / "manifest.json")
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def fresh_quick(path: Path) -> tuple[Path, bool] | None:
    """(artifact folder, fresh) from the key records alone; None when a record is
    missing or stale (then `fresh_slow`)."""
    known = quick_key(path)
    if known is None:
        return None
    root = runs_dir(path, known[1])
    manifest = _manifest(root)
    if manifest is None:
        return root, False
    for module in manifest.get("modules", {}).values():
        key = quick_key(Path(module["source"]))
        if key is None:
            return None
        if key[0] != module.get("key"):
            return root, False
    return root, True


def fresh_slow(path: Path) -> tuple[Path, bool]:
    """(artifact folder, fresh) with every key computed (and recorded)."""
    from ppy_core.cache.module_key import module_key
    from ppy_core.cache.quick import remember

    key = module_key(path)
    remember(key)
    root = runs_dir(path, str(key.config.cache_dir or ""))
    manifest = _manifest(root)
    if manifest is None:
        return root, False
    for module in manifest.get("modules", {}).values():
        source = Path(module["source"])
        if not source.is_file():
            return root, False
        found = key if source == path else module_key(source)
        remember(found)
        if found.key != module.get("key"):
            return root, False
    return root, True


def made(path: Path, root: Path) -> None:
    """After a build: the artifact's folders private to the user (0700), and each
    module's key recorded (the build computed them in another process)."""
    trust.private_dir(root.parent)
    os.chmod(root, trust.PRIVATE)
    manifest = _manifest(root) or {}
    for module in manifest.get("modules", {}).values():
        if quick_key(Path(module["source"])) is None:
            from ppy_core.cache.module_key import module_key
            from ppy_core.cache.quick import remember

            remember(module_key(Path(module["source"])))


def intact(root: Path) -> str:
    """Why the artifact in `root` may not run ('' when it may): owned by another
    user, its manifest unreadable, a file missing, resized or changed since built."""
    manifest = _manifest(root)
    if manifest is None:
        return "its manifest is unreadable or not the user's own"
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return "its manifest records no file hashes (built by an older ppy)"
    from ppy_core.cache.files import sha256_file

    for rel, info in files.items():
        target = root / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            return f"its manifest names a file outside it: {rel!r}"
        try:
            st = os.lstat(target)
        except OSError:
            return f"file {rel} is missing"
        if trust.owned_by_other(st):
            trust.refuse(target, "artifact file")
            return f"file {rel} is owned by another user"
        if st.st_size != info.get("size") or sha256_file(target) != info.get("sha256"):
            return f"file {rel} does not match the hash recorded when it was built"
    return ""


__all__ = ["fresh_quick", "fresh_slow", "intact", "made", "runs_dir"]
