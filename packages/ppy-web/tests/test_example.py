"""examples/27_uvicorn runs three ways (`python`, `ppy`, `ppy run`) and prints the
same bytes: every response through the in-process TestClient and, raw, through a
real uvicorn server on 127.0.0.1 (bounded: 14 requests, then stopped)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "27_uvicorn" / "service.ppy"
PPY = shutil.which("ppy", path=str(Path(sys.executable).parent)) or "ppy"


def _run(tmp: Path, *command: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*command, str(EXAMPLE)],
        capture_output=True,
        cwd=EXAMPLE.parent,
        env={**os.environ, "PPY_CACHE_DIR": str(tmp / "cache")},
        timeout=300,
        check=False,
    )


@pytest.mark.skipif(not EXAMPLE.is_file(), reason="examples/ is not in this checkout")
def test_three_ways_print_identical_bytes(tmp_path: Path) -> None:
    runs = {
        "python": _run(tmp_path, sys.executable),
        "ppy": _run(tmp_path, PPY),
        "ppy run": _run(tmp_path, PPY, "run"),
    }
    for way, done in runs.items():
        assert done.returncode == 0, (way, done.stdout, done.stderr)
        assert b"Traceback" not in done.stderr, (way, done.stderr)
    out = runs["python"].stdout
    assert runs["ppy"].stdout == out
    assert runs["ppy run"].stdout == out
    lines = out.decode().splitlines()
    assert lines[0] == "== TestClient"
    assert lines[15] == "== uvicorn on 127.0.0.1"
    assert len(lines) == 30
    # the service's answers: ordinary, FastAPI's own 422s, the dependency's 400
    client, served = lines[1:15], lines[16:]
    assert [line.split(" -> ")[1].split()[0] for line in client] == [
        "200", "200", "200", "422", "422", "201", "201", "422", "201", "404", "400", "422",
        "422", "405",
    ]  # fmt: skip
    for via_client, via_server in zip(client, served, strict=True):
        body = via_client.split(" ", 5)[5]  # b'...' of the TestClient's content
        assert via_server.endswith(body[2:])  # the same bytes on the wire
        assert "date:" not in via_server
        assert "server:" not in via_server
    assert '"type":"greater_than_equal"' in client[7]


def test_handlers_are_left_exactly_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compiled by PPy, every route's endpoint is the function as written: the same
    code, signature, annotations and defaults, no `__wrapped__`, the module's globals."""
    import importlib.machinery
    import importlib.util
    import inspect

    import ppy

    def same(signature: inspect.Signature) -> str:
        """The signature's text with the two module names and object addresses made
        alike (each load has its own classes and functions)."""
        text = str(signature).replace("svc27_ppy", "M").replace("svc27_py", "M")
        return re.sub(r" at 0x[0-9a-f]+", "", text)

    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    compiled = ppy.load(EXAMPLE, "svc27_ppy")
    loader = importlib.machinery.SourceFileLoader("svc27_py", str(EXAMPLE))
    spec = importlib.util.spec_from_loader("svc27_py", loader)
    assert spec is not None
    plain = importlib.util.module_from_spec(spec)
    sys.modules["svc27_py"] = plain
    loader.exec_module(plain)
    try:
        routes = {r.path: r.endpoint for r in plain.app.routes if hasattr(r, "endpoint")}
        mine = [
            r for r in compiled.app.routes if getattr(r, "endpoint", None).__module__ == "svc27_ppy"
        ]
        assert {r.path for r in mine} == {"/health", "/items/{item_id}", "/orders", "/worker"}
        for route in mine:
            ours, theirs = route.endpoint, routes[route.path]
            assert ours.__code__.co_code == theirs.__code__.co_code, route.path
            assert same(inspect.signature(ours, eval_str=True)) == same(
                inspect.signature(theirs, eval_str=True)
            )
            assert ours.__annotations__.keys() == theirs.__annotations__.keys()
            assert not hasattr(ours, "__wrapped__")
            assert ours.__globals__ is compiled.__dict__
    finally:
        sys.modules.pop("svc27_py", None)
        sys.modules.pop("svc27_ppy", None)
