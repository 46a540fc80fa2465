"""The `uvicorn` plugin: uvicorn, and FastAPI and Starlette that ride on it.

This module imports none of them; `fingerprint()` and `detected()` import uvicorn
once and read the others' versions from their metadata.

FastAPI's surface is typed here (`ppy_web.fastapi_surface`): `app = FastAPI()`
types `app`, so `@app.get("/")` is asked as "fastapi.FastAPI.get", and such a
function is left exactly as written (FastAPI reads its signature when the decorator
runs); the dependency markers, `TestClient` and its responses are typed. Serving an
app object with workers or reload is `ppy_web.serve`.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from typing import ClassVar, Final

from ppy_core.cache.keys import installed_version
from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.plugin import (
    UNVOUCHED,
    AttributeContext,
    CallAnswer,
    CallContext,
    DecoratorContext,
    DecoratorSemantics,
    Plugin,
)
from ppy_core.ir.types import I1, NONE, OpaqueType, Type
from ppy_web import fastapi_surface

# What else decides how an app is served: the frameworks, and uvicorn's fast paths.
# (httpx2/httpx: which one Starlette's TestClient speaks decides its responses' type)
COMPANIONS: Final[tuple[str, ...]] = (
    "fastapi",
    "starlette",
    "uvloop",
    "httptools",
    "watchfiles",
    "httpx2",
    "httpx",
)

#: the classes whose instances route requests, by the name they are imported under
APPS: Final = {name: OpaqueType(name) for name in ("fastapi.FastAPI", "fastapi.APIRouter")}
#: serving runs the app's handlers and does network IO
SERVES: Final = frozenset({"IO", "Callback"})
#: a server run in-process: `Server(Config(app, ...))`, started and stopped by its flags
CONFIG: Final = OpaqueType("uvicorn.config.Config")
SERVER: Final = OpaqueType("uvicorn.server.Server")
SERVING: Final[Mapping[str, Type]] = {
    "uvicorn.Config": CONFIG,
    "uvicorn.config.Config": CONFIG,
    "uvicorn.Server": SERVER,
    "uvicorn.server.Server": SERVER,
}
#: what a program reads of a Server (uvicorn sets `started`; the program `should_exit`)
SERVER_ATTRIBUTES: Final[Mapping[str, Type]] = {
    "started": I1,
    "should_exit": I1,
    "force_exit": I1,
    "config": CONFIG,
    "run": OpaqueType("builtins.method"),  # handed to a Thread as its target
    "serve": OpaqueType("builtins.method"),
}
#: their methods that register the decorated function for the framework to call
ROUTE_DECORATORS: Final = frozenset(
    {
        "get",
        "post",
        "put",
        "delete",
        "patch",
        "options",
        "head",
        "trace",
        "api_route",
        "route",
        "websocket",
        "websocket_route",
        "middleware",
        "exception_handler",
        "on_event",
    }
)


@functools.cache
def probe() -> tuple[str, str, tuple[tuple[str, str], ...]] | None:
    """(uvicorn's version, its place, (companion, version or "none")...), or None."""
    try:
        uvicorn = importlib.import_module("uvicorn")
    except ImportError:
        return None
    companions = tuple((name, installed_version(name) or "none") for name in COMPANIONS)
    return str(uvicorn.__version__), str(getattr(uvicorn, "__file__", "?")), companions


class UvicornPlugin(Plugin):
    """Teaches the compiler uvicorn (claims `uvicorn`, `fastapi` and `starlette`)."""

    name: ClassVar[str] = "uvicorn"
    modules: ClassVar[tuple[str, ...]] = ("uvicorn", "fastapi", "starlette")
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """`v1:uvicorn=V:fastapi=V|none:starlette=V|none:uvloop=V|none:httptools=V|none`."""
        found = probe()
        if found is None:
            return f"v{self.version}:uvicorn=none"
        extra = "".join(f":{name}={version}" for name, version in found[2])
        return f"v{self.version}:uvicorn={found[0]}{extra}"

    def external_types(self) -> Mapping[str, Type]:
        return {**APPS, **fastapi_surface.CLASSES, CONFIG.name: CONFIG, SERVER.name: SERVER}

    def call(self, ctx: CallContext) -> CallAnswer | None:
        """`FastAPI()`, `APIRouter()`: an app, so its route decorators are known; the
        markers, `TestClient(app)`, its requests and their responses."""
        app = APPS.get(ctx.callee)
        if app is not None:
            return CallAnswer(app)
        if ctx.callee in ("uvicorn.run", "uvicorn.main.run"):
            return self._uvicorn_run(ctx)
        if ctx.callee in SERVING:
            return CallAnswer(SERVING[ctx.callee])
        if ctx.callee == f"{SERVER.name}.run":  # serves until `should_exit` is set
            return CallAnswer(NONE, SERVES)
        return fastapi_surface.call(ctx)

    def _uvicorn_run(self, ctx: CallContext) -> CallAnswer:
        """`uvicorn.run(app, workers=2)` / `reload=True` with an app object: uvicorn
        exits 3 there ("You must pass the application as an import string"); say so
        where it is written, and what serves it (a warning: the call stays as written)."""
        workers = ctx.kw_constants.get("workers")
        reload = ctx.kw_constants.get("reload")
        asked = [
            what
            for what, on in (
                (
                    "workers",
                    isinstance(workers, int) and not isinstance(workers, bool) and workers > 1,
                ),
                ("reload", reload is True),
            )
            if on
        ]
        app = ctx.args[0] if ctx.args else ctx.kwargs.get("app")
        if asked and app in APPS.values():
            ctx.report(
                Diagnostic(
                    "E3030",
                    f"uvicorn.run(app, {'/'.join(asked)}=...) with an app object: uvicorn "
                    "refuses it and exits 3 (it needs an import string to start workers "
                    "or reload)",
                    "call ppy_web.serve.run(app, ...) instead: the same options, workers "
                    "forked from the loaded app (no re-import), reload watching *.ppy",
                    ctx.location,
                    severity="warning",
                )
            )
        return CallAnswer(NONE, SERVES)

    def instance_attribute(self, ctx: AttributeContext) -> Type | None:
        """`response.status_code`, `.text`, `.headers`... of a TestClient response; a
        Server's flags."""
        if ctx.owner_type == SERVER:
            return SERVER_ATTRIBUTES.get(ctx.name)
        return fastapi_surface.instance_attribute(ctx)

    def decorator_semantics(self, ctx: DecoratorContext) -> DecoratorSemantics | None:
        """A route decorator (`@app.get("/")`) registers the function for FastAPI to call
        with the request's values: unvouched, the function is left exactly as written."""
        owner, _, method = ctx.qualname.rpartition(".")
        if owner in APPS and method in ROUTE_DECORATORS:
            return DecoratorSemantics(
                UNVOUCHED, f"{owner.rpartition('.')[2]}.{method} registers it; FastAPI calls it"
            )
        return None

    def detected(self) -> Mapping[str, str]:
        """uvicorn's version, and which of FastAPI, Starlette, uvloop, httptools are there."""
        found = probe()
        if found is None:
            return {"uvicorn": "not installed"}
        return {
            "uvicorn": f"{found[0]} ({found[1]})",
            **{name: ("not installed" if v == "none" else v) for name, v in found[2]},
        }


__all__ = ["UvicornPlugin", "probe"]
