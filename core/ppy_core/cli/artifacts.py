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
import sys
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
    """The artifact's top manifest when it is the user's own and of the right shape."""
    from ppy_core.runtime.artifact import check_top

    if not trust.trusted(root, "`ppy run` artifact"):
        return None
    try:
        manifest = jsontext.read(root / "manifest.json", max_bytes=64 << 20)
    except (OSError, ValueError):
        return None
    return manifest if not check_top(manifest) else None


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
        if key[0] != module.get("key") or _observed_since(module):
            return root, False
    return root, True


def _observed_since(module: dict[str, Any]) -> bool:
    """Whether the module's functions were called with signatures the artifact does
    not carry (recorded since it was built: `runtime.observed`)."""
    from ppy_core.runtime.observed import recorded

    count = sum(len(s) for s in recorded(str(module["source"])).values())
    return count != module.get("observed", 0)


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
        if found.key != module.get("key") or _observed_since(module):
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


def usable(root: Path) -> dict[str, Any] | None:
    """The artifact's checked top manifest when it is the user's own and every file
    matches the size and sha256 recorded when it was built (its module folders are
    marked for the loaders); None when it must be built again."""
    from ppy_core.runtime.artifact import coded
    from ppy_core.runtime.launch import inspect

    if not trust.private_chain(root.parent.parent, root.parent):
        return None
    try:
        manifest, bad = inspect(root)
    except Exception as exc:
        if not coded(exc):
            raise
        return None
    return None if bad else manifest


def rebuild(path: Path, root: Path, fresh: bool, verbose: bool) -> int:
    """Build `path`'s artifact into `root` in a child process under the artifact's
    build lock (`cache.lock`): of many `ppy run` at once one builds, the others wait
    and find it built. `fresh`: it was fresh but failed its check (one E3001 warning:
    it is rebuilt). The child's exit status (0: built, or built meanwhile)."""
    import subprocess

    from ppy_core.cache.lock import build_lock
    from ppy_core.cache.store import refuse_foreign_root
    from ppy_core.cli import progress
    from ppy_core.cli.output import ours

    refuse_foreign_root(root.parent.parent)
    with build_lock(root.parent.parent / "locks" / f"run-{root.name}.lock"):
        again, now_fresh = fresh_slow(path)
        if now_fresh and usable(again) is not None:
            return 0  # another `ppy run` built it while we waited
        if fresh and os.path.isdir(root):
            import warnings

            warnings.warn(
                f"ppy: {root}: the `ppy run` artifact failed its check against the hashes "
                "recorded when it was built; it is built again  [E3001]",
                UserWarning,
                stacklevel=2,
            )
        if os.path.lexists(root) and not ours(root):  # an older ppy's, in our own cache
            from ppy_core.cache.files import remove_tree

            remove_tree(root, root.parent.parent / "trash")
        # the child says what it builds, to stderr, on a terminal or with -v (only)
        cmd = [sys.executable, "-m", "ppy_core.cli", "build", str(path), "-o", str(root)]
        if verbose or progress.VERBOSE:
            cmd.append("-v")
        done = subprocess.run(cmd, check=False)
        if done.returncode != 0:
            return done.returncode
        made(path, root)
    return 0


__all__ = ["fresh_quick", "fresh_slow", "made", "rebuild", "runs_dir", "usable"]
