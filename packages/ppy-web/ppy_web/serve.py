"""`ppy_web.serve.run(app, ...)`: `uvicorn.run` that takes an app *object* for
`workers` and `reload`, without re-importing the project per worker.

uvicorn refuses an app object with `workers > 1` or `reload=True` (it logs "You must
pass the application as an import string..." and exits 3), and with an import
string it starts every worker with the `spawn` context, so each one re-imports the
project and its libraries (a small FastAPI app: about 0.35-0.4 s per worker). What
PPy does instead, decided per case:

* `workers > 1`: the parent has the app loaded already, so the workers are *forked*
  from it (POSIX): uvicorn's own supervisor (`Multiprocess`: health checks, signals,
  restarts) runs unchanged, only its process factory makes `fork` children, which
  inherit the imported app and import nothing (as gunicorn's `--preload`: state
  made at import, such as an open connection, is shared by the workers). Where
  `fork` does not exist, or other threads run (a fork copies only the calling
  thread), the workers are spawned and each loads the app by name (E3031; E3030
  if no module global names it, and it is served in this process).
* `reload=True`: a reload must import the changed code, so each reload is a fresh
  interpreter as in uvicorn; the app object is named for it (the module global that
  holds it, found by identity), loaded through `ppy.load` when the parent's module
  was compiled by PPy, and the reloader watches `*.ppy` beside `*.py`: watchfiles
  gets `reload_includes=["*.ppy"]`, and the stat reloader (which only ever polls
  `*.py`) is replaced by one that polls both. An app no module global holds is
  served without reload, with one warning (E3030).
* otherwise: `uvicorn.run` as it is (an app object is served in-process).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from ppy_web.reloaded import APP_ENV, describe

PPY_PATTERNS = ("*.ppy",)


class ServeWarning(UserWarning):
    """A serving request PPy cannot honour as asked; it serves the closest it can."""


def run(app: Any, *, reloader: str | None = None, **options: Any) -> None:
    """Serve `app` as `uvicorn.run(app, **options)` would, with `workers` and
    `reload` honoured for an app object (see the module docstring). `reloader`
    ("watchfiles" or "stat") picks the reloader; default: watchfiles if installed."""
    import uvicorn

    workers = options.get("workers") or 1
    reload = bool(options.get("reload"))
    if isinstance(app, str) and not reload:
        uvicorn.run(app, **options)
        return
    if reload:
        _run_reload(app, reloader, options)
    elif workers > 1:
        _run_forked_workers(app, options)
    else:
        uvicorn.run(app, **options)


# -- workers: forked from the loaded app ------------------------------------------
def _run_forked_workers(app: Any, options: dict[str, Any]) -> None:
    import uvicorn
    from uvicorn.config import Config
    from uvicorn.supervisors import multiprocess

    why = _cannot_fork()
    if why is not None:
        # spawned workers, each loading the app by name as the reloader's workers do
        found = describe(app)
        if found is None:
            _warn("workers", options)
            uvicorn.run(app, **{**options, "workers": None})
            return
        warnings.warn(
            f"ppy: uvicorn workers cannot be forked here ({why}): each is spawned and "
            "loads the app again  [E3031]",
            ServeWarning,
            stacklevel=3,
        )
        os.environ[APP_ENV] = found
        with _main_not_rerun():
            uvicorn.run("ppy_web.reloaded:app", **options)
        return
    config = Config(app, **options)
    sock = config.bind_socket()
    with _forking(multiprocess):
        multiprocess.Multiprocess(config, sockets=[sock]).run()
    if config.uds and os.path.exists(config.uds):
        os.remove(config.uds)


def _cannot_fork() -> str | None:
    """Why workers cannot be forked from this process, or None. A fork copies only
    the calling thread: with others running (a pool, a client's background thread)
    a worker could inherit a lock held forever, so they are spawned instead."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return "this platform has no fork"
    if threading.active_count() > 1:
        names = ", ".join(
            t.name for t in threading.enumerate() if t is not threading.current_thread()
        )
        return f"other threads are running: {names}"
    return None


@contextlib.contextmanager
def _forking(multiprocess: ModuleType) -> Iterator[None]:
    """uvicorn's supervisor with a process factory that forks: the only change."""
    from uvicorn import _subprocess

    fork = multiprocessing.get_context("fork")

    def get_subprocess(config: Any, target: Any, sockets: Any) -> Any:
        kwargs = {"config": config, "target": target, "sockets": sockets, "stdin_fileno": None}
        return fork.Process(target=_subprocess.subprocess_started, kwargs=kwargs)

    original = getattr(multiprocess, "get_subprocess")  # noqa: B009 (typed Any on purpose)
    setattr(multiprocess, "get_subprocess", get_subprocess)  # noqa: B010
    try:
        yield
    finally:
        setattr(multiprocess, "get_subprocess", original)  # noqa: B010


# -- reload: a fresh interpreter per change, watching *.ppy too ----------------------
def _run_reload(app: Any, reloader: str | None, options: dict[str, Any]) -> None:
    import uvicorn
    from uvicorn.config import Config
    from uvicorn.server import Server

    if isinstance(app, str):
        target = app
    else:
        found = describe(app)
        if found is None:
            _warn("reload", options)
            uvicorn.run(app, **{**options, "reload": False, "workers": None})
            return
        os.environ[APP_ENV] = found
        target = "ppy_web.reloaded:app"
    kind = reloader or ("watchfiles" if _has_watchfiles() else "stat")
    if kind not in ("watchfiles", "stat"):
        raise ValueError(f"reloader must be 'watchfiles' or 'stat', not {reloader!r}")
    options = {**options, "workers": None}
    if kind == "watchfiles":
        includes = _as_list(options.get("reload_includes"))
        options["reload_includes"] = includes + [p for p in PPY_PATTERNS if p not in includes]
        cache = _cache_root()
        if cache is not None:  # a cache inside the project is written to by every load
            options["reload_excludes"] = [*_as_list(options.get("reload_excludes")), str(cache)]
    config = Config(target, **options)
    server = Server(config=config)
    sock = config.bind_socket()
    supervisor = _watchfiles_reload() if kind == "watchfiles" else ppy_stat_reload
    hide = contextlib.nullcontext() if isinstance(app, str) else _main_not_rerun()
    try:
        with hide:
            supervisor(config, target=server.run, sockets=[sock]).run()
    finally:
        if config.uds and os.path.exists(config.uds):
            os.remove(config.uds)


@contextlib.contextmanager
def _main_not_rerun() -> Iterator[None]:
    """A spawned child re-runs the parent's `__main__` (as `__mp_main__`) when it can
    find it by `__spec__` or `__file__`; a reload worker loads the app itself
    (`ppy_web.reloaded`), so that run would only execute the module twice (its side
    effects too). While the reloader supervises, `__main__` does not say where it is."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved: dict[str, Any] = {
        k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__
    }
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.update(saved)


def _as_list(value: Any) -> list[str]:
    if not value:
        return []
    return [value] if isinstance(value, str) else list(value)


def _cache_root() -> Path | None:
    """PPy's cache folder, when it exists: never a reason to reload (each worker's
    `ppy.load` may write there, and a cache inside the project would loop)."""
    from ppy_core.cache.root import default_root

    root = default_root()
    return root.resolve() if root.is_dir() else None


def _has_watchfiles() -> bool:
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        return False
    return True


def _watchfiles_reload() -> Any:
    from uvicorn.supervisors.watchfilesreload import WatchFilesReload

    return WatchFilesReload


def _stat_reload_base() -> Any:
    from uvicorn.supervisors.statreload import StatReload

    return StatReload


@functools.cache
def _ppy_stat_class() -> Any:
    """uvicorn's StatReload, polling `*.ppy` beside `*.py` (made on first use, so
    importing this module imports no uvicorn)."""
    base = _stat_reload_base()

    class PpyStatReload(base):  # type: ignore[misc,valid-type]
        """uvicorn's StatReload, polling `*.ppy` beside `*.py` (PPy's cache excluded)."""

        def iter_py_files(self) -> Iterator[Path]:
            cache = _cache_root()
            for reload_dir in self.config.reload_dirs:
                for pattern in ("*.py", *PPY_PATTERNS):
                    for path in list(reload_dir.rglob(pattern)):
                        found = path.resolve()
                        if cache is None or cache not in found.parents:
                            yield found

    return PpyStatReload


def ppy_stat_reload(config: Any, target: Any, sockets: list[Any]) -> Any:
    """A stat reloader over `config` that polls `*.ppy` beside `*.py`."""
    supervisor = _ppy_stat_class()(config, target=target, sockets=sockets)
    supervisor.reloader_name = "StatReload (*.py, *.ppy)"
    return supervisor


def _warn(what: str, options: dict[str, Any]) -> None:
    message = (
        f"ppy: uvicorn {what} needs the app to be a module global PPy can name; "
        f"this one is not, so it is served in this process without {what}  [E3030]"
    )
    warnings.warn(message, ServeWarning, stacklevel=3)


__all__ = ["ServeWarning", "ppy_stat_reload", "run"]
