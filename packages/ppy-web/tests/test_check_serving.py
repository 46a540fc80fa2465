"""`ppy check --strict` on code that serves an app: uvicorn's in-process `Server` and
`Config` typed by the uvicorn plugin, `ppy_web.serve.run` read from its own annotations
(the package ships `py.typed`), sockets and threads from typeshed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ppy_core.compiler.check import check_paths

pytest.importorskip("fastapi")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


SERVING = """
import socket
import threading

import uvicorn
from fastapi import FastAPI

import ppy_web.serve

app = FastAPI()


def serve_once() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise SystemExit("uvicorn did not start")
    server.should_exit = True
    thread.join(timeout=30)
    return port


def serve(port: int) -> None:
    ppy_web.serve.run(app, host="127.0.0.1", port=port, workers=2)
"""


def test_serving_code_checks_clean_under_strict(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ppy]\nstrict = true\n")
    path = tmp_path / "serving.py"
    path.write_text(textwrap.dedent(SERVING))
    report = check_paths([str(path)])
    assert [(f.location.line, f.message) for f in report.findings if f.location] == []


def test_a_server_attribute_uvicorn_lacks_stays_unknown(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ppy]\nstrict = true\n")
    path = tmp_path / "serving.py"
    path.write_text(
        textwrap.dedent(SERVING) + "\n\ndef odd() -> None:\n"
        "    print(uvicorn.Server(uvicorn.Config(app)).startd)\n"
    )
    report = check_paths([str(path)])
    (finding,) = report.findings
    assert finding.code == "E1001"
    assert "`startd`" in finding.message
