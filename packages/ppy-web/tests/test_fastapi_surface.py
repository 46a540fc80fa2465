"""FastAPI's surface typed by the uvicorn plugin: each type names the class the
object really is (checked against FastAPI), through the plugin's hooks and the
core's typer; handlers keep their signatures (FastAPI reads them when decorated)."""

from __future__ import annotations

import ast
import inspect
import warnings
from typing import Any

import pytest

from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.typer import Typer
from ppy_core.interface.hooks import HookCaller
from ppy_core.interface.plugin import CallContext
from ppy_core.ir.types import I1, I64, UNKNOWN, OpaqueType
from ppy_web import fastapi_surface as surface
from ppy_web.uvicorn_plugin import UvicornPlugin

fastapi = pytest.importorskip("fastapi")
pytest.importorskip("httpx")


def qualified(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def test_types_name_the_real_classes() -> None:
    from fastapi.testclient import TestClient

    def dep() -> int:
        return 1

    for public, typed in surface.MARKERS.items():
        marker = getattr(fastapi, public.rpartition(".")[2])
        made = marker(dep) if public.endswith(("Depends", "Security")) else marker()
        assert qualified(made) == typed.name, public
    app = fastapi.FastAPI()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # httpx2 preferred, httpx here
        client = TestClient(app)
    assert qualified(client) == surface.CLIENT.name
    response = client.get("/nothing")
    assert qualified(response) == surface.RESPONSE.name
    for name, typed in surface.RESPONSE_ATTRIBUTES.items():
        value = getattr(response, name)
        if typed == I64:
            assert type(value) is int
        elif typed == I1:
            assert type(value) is bool
        else:
            assert qualified(value) == typed.name, name
    for public, typed in surface.RESPONSES.items():
        module, _, name = public.rpartition(".")
        cls = getattr(__import__(module, fromlist=[name]), name)
        assert f"{cls.__module__}.{cls.__qualname__}" == typed.name
    assert qualified(fastapi.HTTPException(404)) == surface.HTTP_EXCEPTION.name


PROGRAM = """\
from fastapi import Depends, FastAPI, Query
from fastapi.testclient import TestClient

app = FastAPI()
client = TestClient(app)
"""


def typer() -> Typer:
    plugin = UvicornPlugin()
    claims = dict.fromkeys(plugin.modules, plugin.name)
    oracle = Oracle(HookCaller([plugin], claims=claims))
    imports = {
        "Depends": "fastapi.Depends",
        "FastAPI": "fastapi.FastAPI",
        "Query": "fastapi.Query",
        "TestClient": "fastapi.testclient.TestClient",
    }
    t = Typer(oracle, imports, "svc.py")
    for name in ("app", "client"):
        value = next(
            s.value
            for s in ast.parse(PROGRAM).body
            if isinstance(s, ast.Assign) and s.targets[0].id == name  # type: ignore[attr-defined]
        )
        t.globals[name] = t.expr(value, {})
    return t


def typed(t: Typer, text: str) -> Any:
    return t.expr(ast.parse(text, mode="eval").body, {})


def test_the_typer_follows_a_test_client() -> None:
    t = typer()
    assert t.globals == {"app": OpaqueType("fastapi.FastAPI"), "client": surface.CLIENT}
    t.env["r"] = typed(t, "client.get('/items/3')")
    assert t.env["r"] == surface.RESPONSE
    assert typed(t, "r.status_code") == I64
    assert typed(t, "r.text") == surface.STR
    assert typed(t, "r.json()") == UNKNOWN
    assert typed(t, "client.post('/orders', json={'n': 1})") == surface.RESPONSE
    assert typed(t, "Depends(app)") == OpaqueType("fastapi.params.Depends")
    assert typed(t, "Query(default=3)") == OpaqueType("fastapi.params.Query")
    assert typed(t, "r.unknown_attribute") == UNKNOWN


def test_requests_run_the_app() -> None:
    """A request calls the user's handlers: it must end any site and stay a call."""
    answer = UvicornPlugin().call(CallContext("starlette.testclient.TestClient.get", (), {}))
    assert answer is not None
    assert {"IO", "Callback"} <= answer.effects


def test_handlers_keep_their_signatures() -> None:
    """What FastAPI reads at decoration is the function as written (issue 6's policy
    leaves it untouched); the decorator returns the very function."""

    app = fastapi.FastAPI()

    def handler(item_id: int, q: str = fastapi.Query(default="x")) -> dict[str, Any]:
        return {"item_id": item_id, "q": q}

    before = inspect.signature(handler, eval_str=True)
    assert app.get("/items/{item_id}")(handler) is handler
    assert inspect.signature(handler, eval_str=True) == before
