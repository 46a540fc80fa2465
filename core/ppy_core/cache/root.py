"""Where ppy's caches live, and how a builder puts a finished file there.

One root for everything ppy caches: the compile cache (`entries/`, `locks/` ...)
and each backend's own builds beside it (`llvm/`, `torch/`). The root is, first
match wins:

1. the root of the compile cache building right now (`Cache.store` sets it for
   the duration of a build, so a project's `[tool.ppy] cache-dir` reaches the
   backends it calls without every backend reading the project's config);
2. `PPY_CACHE_DIR`;
3. `$XDG_CACHE_HOME/ppy` when that is an absolute path;
4. `~/.cache/ppy`.

A finished file is published atomically: written beside its place under a unique
name, then renamed over it, so a reader (or a builder killed half-way) never
leaves a half-written file where a finished one is expected. Its sha256 is
recorded beside it first (`builds`), so it is checked before it is reused.
"""

from __future__ import annotations

import contextlib
import os
from contextvars import ContextVar
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

_ACTIVE: ContextVar[Path | None] = ContextVar("ppy_cache_root", default=None)
#: the file in each backend folder that says ppy made it (`ppy cache clear` removes
#: only such folders: a cache root may be a folder holding the user's own files too)
BACKEND_MARKER = ".ppy-backend"


def default_root() -> Path:
    """`PPY_CACHE_DIR`, else `$XDG_CACHE_HOME/ppy`, else `~/.cache/ppy` (no project)."""
    env = os.environ.get("PPY_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "ppy"


def cache_root() -> Path:
    """The root in force: the building cache's, else `default_root()`."""
    active = _ACTIVE.get()
    return active if active is not None else default_root()


@contextlib.contextmanager
def using_root(root: Path) -> Iterator[Path]:
    """Make `root` the root in force inside the `with` (the compile cache wraps each
    build in it); the previous one comes back after, even on an exception."""
    token = _ACTIVE.set(Path(root))
    try:
        yield Path(root)
    finally:
        _ACTIVE.reset(token)


def backend_dir(name: str) -> Path:
    """`cache_root()/name`, created private to the user (0700): the folder a backend
    keeps its own builds in. PermissionError (after one E3006 warning) when another
    user owns it."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"backend cache folder name {name!r} is not a plain name")
    from ppy_core.cache.trust import private_dir

    # private (0700) and ours: a backend's builds are code the runtime loads
    folder = private_dir(cache_root() / name)
    marker = folder / BACKEND_MARKER
    if not os.path.exists(marker):  # what `ppy cache clear` may remove: ppy made it
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
    return folder


def publish_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically (a unique temporary beside it, then a rename)."""
    from ppy_core.cache.trust import private_dir

    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(fd, 0o600)  # the user's alone, whatever the umask
            handle.write(data)
        _record(tmp, path)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def publish_file(built: Path, path: Path) -> None:
    """Move the finished file `built` to `path` atomically (same file system)."""
    from ppy_core.cache.trust import private_dir, private_file

    private_dir(path.parent)
    private_file(built)  # the user's alone, whatever the umask made it
    _record(built, path)
    os.replace(built, path)


def _record(built: Path, path: Path) -> None:
    """Record the hash of what is about to be published at `path` (see `builds`):
    before the rename, so no reader sees the file without its hash."""
    from ppy_core.cache.builds import digest_file, record_build

    record_build(path, digest_file(built))


def write_if_changed(path: Path, data: str | bytes) -> bool:
    """Publish `data` at `path` unless it already holds exactly that; True when written.

    An unchanged file keeps its mtime, so make-style tools (ninja) rebuild nothing."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if path.read_bytes() == raw:
            return False
    except OSError:
        pass
    publish_bytes(path, raw)
    return True


__all__ = [
    "default_root",
    "cache_root",
    "using_root",
    "backend_dir",
    "publish_bytes",
    "publish_file",
    "write_if_changed",
]
