"""The `uvicorn` plugin: uvicorn, and FastAPI and Starlette that ride on it.

This module imports none of them; `fingerprint()` and `detected()` import uvicorn
once and read the others' versions from their metadata. The serving path lands
with the web issue; today the plugin carries its claims, its fingerprint, and what
FastAPI's route decorators do: `app = FastAPI()` types `app`, so `@app.get("/")` is
asked as "fastapi.FastAPI.get", and such a function is left exactly as written.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from typing import ClassVar, Final

from ppy_core.cache.keys import installed_version
from ppy_core.interface.plugin import (
    UNVOUCHED,
    CallAnswer,
    CallContext,
    DecoratorContext,
    DecoratorSemantics,
    Plugin,
)
from ppy_core.ir.types import OpaqueType, Type

# What else decides how an app is served: the frameworks, and uvicorn's fast paths.
COMPANIONS: Final[tuple[str, ...]] = ("fastapi", "starlette", "uvloop", "httptools")

#: the classes whose instances route requests, by the name they are imported under
APPS: Final = {name: OpaqueType(name) for name in ("fastapi.FastAPI", "fastapi.APIRouter")}
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
        return dict(APPS)

    def call(self, ctx: CallContext) -> CallAnswer | None:
        """`FastAPI()`, `APIRouter()`: an app, so its route decorators are known."""
        app = APPS.get(ctx.callee)
        return CallAnswer(app) if app is not None else None

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
