"""Serving an app object with workers or reload: uvicorn refuses it (exit 3);
`ppy_web.serve.run` forks workers from the loaded app (the module runs once), and
reloads on a `.ppy` edit with every installed reloader. Real servers on 127.0.0.1,
bounded in requests and time, always stopped."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _webserving import VENV_BIN, free_port, get_json, started, wait_for

from ppy_core.compiler.cached import compile_file

pytest.importorskip("fastapi")

SERVICE = textwrap.dedent(
    """\
    import os
    import threading
    import time

    from fastapi import FastAPI

    import ppy_web.serve

    app = FastAPI()
    if os.environ.get("THREAD") == "1":  # a library's background thread, say
        threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
    with open(os.environ["MARK"], "a") as mark:
        mark.write(f"{os.getpid()}\\n")  # each execution of this module


    @app.get("/")
    def root() -> dict[str, int]:
        return {"pid": os.getpid(), "v": 1}


    if __name__ == "__main__":
        ppy_web.serve.run(
            app,
            port=int(os.environ["PORT"]),
            workers=int(os.environ.get("WORKERS", "1")),
            reload=os.environ.get("RELOAD") == "1",
            reloader=os.environ.get("RELOADER") or None,
            log_level="warning",
        )
    """
)


def service(tmp_path: Path, name: str) -> tuple[Path, dict[str, str]]:
    path = tmp_path / name
    path.write_text(SERVICE, encoding="utf-8")
    env = {
        "MARK": str(tmp_path / "mark"),
        "PORT": str(free_port()),
        "PPY_CACHE_DIR": str(tmp_path / "cache"),
    }
    return path, env


def test_uvicorn_refuses_an_app_object_with_workers(tmp_path: Path) -> None:
    """The fact PPy answers: uvicorn exits 3 for an app object with workers."""
    code = "import uvicorn; from fastapi import FastAPI; uvicorn.run(FastAPI(), workers=2, port=1)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 3
    assert "must pass the application as an import string" in done.stderr


def test_workers_are_forked_from_the_loaded_app(tmp_path: Path) -> None:
    path, env = service(tmp_path, "svc.py")
    port = int(env["PORT"])
    with started(
        [sys.executable, str(path)], {**env, "WORKERS": "2"}, tmp_path, tmp_path / "log"
    ) as proc:
        pids: set[int] = set()

        def both_workers_answered() -> bool:
            pids.add(get_json(port)["pid"])
            return len(pids) == 2

        wait_for(both_workers_answered, 60, "two workers to answer")
        assert proc.pid not in pids  # the parent supervises, workers serve
    executions = (tmp_path / "mark").read_text().split()
    assert executions == [str(proc.pid)]  # the module ran once: no worker re-imported it


def test_with_threads_running_workers_are_spawned(tmp_path: Path) -> None:
    """A fork copies only the calling thread: with another running, the workers are
    spawned (E3031) and each loads the app by name, once (its __main__ is not re-run)."""
    path, env = service(tmp_path, "svc.py")
    port = int(env["PORT"])
    env = {**env, "WORKERS": "2", "THREAD": "1"}
    with started([sys.executable, str(path)], env, tmp_path, tmp_path / "log") as proc:
        pids: set[int] = set()

        def both_workers_answered() -> bool:
            pids.add(get_json(port)["pid"])
            return len(pids) == 2

        wait_for(both_workers_answered, 90, "two spawned workers to answer")
    executions = (tmp_path / "mark").read_text().split()
    assert executions[0] == str(proc.pid)
    assert sorted(executions[1:]) == sorted(map(str, pids))  # each worker loaded it once
    log = (tmp_path / "log").read_text()
    assert "[E3031]" in log
    assert "other threads are running" in log


RELOADERS = ["stat"]
try:
    import watchfiles  # noqa: F401

    RELOADERS.append("watchfiles")
except ImportError:  # the stat reloader is always there
    pass


@pytest.mark.parametrize("reloader", RELOADERS)
def test_a_ppy_edit_reloads(tmp_path: Path, reloader: str) -> None:
    """`ppy svc.ppy` serving with reload=True: editing the .ppy file is seen by the
    reloader and the new code answers (uvicorn's own stat reloader polls *.py only)."""
    path, env = service(tmp_path, "svc.ppy")
    port = int(env["PORT"])
    env = {**env, "RELOAD": "1", "RELOADER": reloader}
    with started([str(VENV_BIN / "ppy"), str(path)], env, tmp_path, tmp_path / "log") as _proc:
        first = wait_for(lambda: get_json(port), 90, "the first answer")
        assert first["v"] == 1
        path.write_text(SERVICE.replace('"v": 1', '"v": 2'), encoding="utf-8")
        second = wait_for(lambda: get_json(port)["v"] == 2 and get_json(port), 60, "the reload")
        assert second["pid"] != first["pid"]
    log = (tmp_path / "log").read_text()
    executions = (tmp_path / "mark").read_text().split()
    # the parent, then each worker once (spawn does not re-run __main__ beside the load)
    assert len(executions) == len(set(executions)) == 3, executions
    assert executions[1:] == [str(first["pid"]), str(second["pid"])]
    assert "detected changes in 'svc.ppy'" in log
    assert "cache" not in log  # PPy's own cache writes never trigger a reload


def test_the_stat_reloader_polls_ppy(tmp_path: Path) -> None:
    from uvicorn.config import Config
    from uvicorn.supervisors.statreload import StatReload

    from ppy_web.serve import ppy_stat_reload

    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.ppy").write_text("")
    config = Config("m:app", reload=True, reload_dirs=[str(tmp_path)])
    theirs = StatReload(config, target=lambda sockets: None, sockets=[])
    ours = ppy_stat_reload(config, target=lambda sockets: None, sockets=[])
    assert {p.name for p in theirs.iter_py_files()} == {"a.py"}
    assert {p.name for p in ours.iter_py_files()} == {"a.py", "b.ppy"}


def test_the_compiler_warns_at_uvicorn_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "svc.py"
    path.write_text(
        "import uvicorn\nfrom fastapi import FastAPI\n\napp = FastAPI()\n\n\n"
        "def main() -> None:\n    uvicorn.run(app, workers=2)\n    uvicorn.run(app)\n"
        "    uvicorn.run('svc:app', workers=2)\n    uvicorn.run(app, reload=True)\n"
    )
    compiled = compile_file(path)
    found = [(d.code, d.severity, d.location.line) for d in compiled.diagnostics]
    assert found == [("E3030", "warning", 8), ("E3030", "warning", 11)]
    assert "ppy_web.serve.run" in compiled.diagnostics[0].hint


def test_an_app_no_global_holds_is_served_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reload needs the app named for a fresh process; an app held by no module global
    cannot be, so it is served as uvicorn would serve it without reload (one E3030)."""
    import uvicorn

    from ppy_web import serve

    calls: list[tuple[object, dict[str, object]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append((app, kw)))
    app = object()  # a local: no module global holds it
    with pytest.warns(serve.ServeWarning, match=r"\[E3030\]"):
        serve.run(app, reload=True, port=1)
    assert calls == [(app, {"reload": False, "workers": None, "port": 1})]
    calls.clear()
    serve.run("m:app", workers=2, port=1)  # an import string: uvicorn's own path
    assert calls == [("m:app", {"workers": 2, "port": 1})]
