"""FastAPI's surface as types: dependency markers, the in-process TestClient, its
responses, the response classes and HTTPException.

Only what a program does *around* its routes is typed; the route handlers stay as
written (their decorators are unvouched, see `uvicorn_plugin`). Names are the
public ones a program imports (`fastapi.Depends`, `fastapi.testclient.TestClient`)
and the types name the classes the objects really are (`Depends(...)` is a
`fastapi.params.Depends`, FastAPI's TestClient is Starlette's, a response is
`httpx2.Response`, or `httpx.Response` where only httpx is installed), so a method
is asked under the class it really has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ppy_core.cache.keys import installed_version
from ppy_core.interface.plugin import AttributeContext, CallAnswer, CallContext
from ppy_core.ir.types import I1, I64, NONE, UNKNOWN, OpaqueType, Type

#: the markers a handler's parameters default to, by public name -> the params class
MARKERS: Final[Mapping[str, OpaqueType]] = {
    f"fastapi.{name}": OpaqueType(f"fastapi.params.{name}")
    for name in ("Depends", "Security", "Query", "Path", "Body", "Header", "Cookie", "Form", "File")
}
CLIENT: Final = OpaqueType("starlette.testclient.TestClient")
#: Starlette's TestClient speaks `httpx2` when it is installed, else `httpx` (which
#: it warns about); the response is that library's (the fingerprint names both)
HTTPX: Final = "httpx2" if installed_version("httpx2") else "httpx"
RESPONSE: Final = OpaqueType(f"{HTTPX}.Response")
HEADERS: Final = OpaqueType(f"{HTTPX}.Headers")
STR: Final = OpaqueType("builtins.str")
BYTES: Final = OpaqueType("builtins.bytes")
HTTP_EXCEPTION: Final = OpaqueType("fastapi.exceptions.HTTPException")
#: response classes an app returns, under every name they are imported by
RESPONSES: Final[Mapping[str, OpaqueType]] = {
    f"{where}.{name}": OpaqueType(f"starlette.responses.{name}")
    for where in ("fastapi.responses", "starlette.responses")
    for name in (
        "Response",
        "JSONResponse",
        "PlainTextResponse",
        "HTMLResponse",
        "RedirectResponse",
    )
}

#: the classes whose instances this surface types (the canonical name first, so a
#: method of a value is asked under the class it really is)
CLASSES: Final[Mapping[str, Type]] = {
    "starlette.testclient.TestClient": CLIENT,
    "fastapi.testclient.TestClient": CLIENT,
    RESPONSE.name: RESPONSE,
    HEADERS.name: HEADERS,
    HTTP_EXCEPTION.name: HTTP_EXCEPTION,
    "fastapi.HTTPException": HTTP_EXCEPTION,
    **{t.name: t for t in MARKERS.values()},
    **{t.name: t for t in RESPONSES.values()},
}
#: the TestClient's request methods: each runs the app in this process
REQUESTS: Final = frozenset({"get", "post", "put", "patch", "delete", "options", "head", "request"})
#: a request runs the app (the user's handlers) and may do IO
RUNS_APP: Final = frozenset({"IO", "Callback"})
RESPONSE_ATTRIBUTES: Final[Mapping[str, Type]] = {
    "status_code": I64,
    "text": STR,
    "content": BYTES,
    "headers": HEADERS,
    "reason_phrase": STR,
    "is_success": I1,
    "is_error": I1,
    "encoding": STR,
}


def call(ctx: CallContext) -> CallAnswer | None:
    """Markers, `TestClient(app)`, its requests, a response's methods, response
    classes and `HTTPException`; None for the rest."""
    callee = ctx.callee
    if callee in MARKERS:
        return CallAnswer(MARKERS[callee])
    if callee in ("fastapi.testclient.TestClient", "starlette.testclient.TestClient"):
        return CallAnswer(CLIENT)
    if callee in RESPONSES:
        return CallAnswer(RESPONSES[callee])
    if callee == "fastapi.HTTPException":
        return CallAnswer(HTTP_EXCEPTION)
    owner, _, method = callee.rpartition(".")
    if owner == CLIENT.name and method in REQUESTS:
        return CallAnswer(RESPONSE, RUNS_APP)
    if owner == RESPONSE.name:
        if method == "json":
            return CallAnswer(UNKNOWN)  # whatever JSON the app sent
        if method == "raise_for_status":
            return CallAnswer(RESPONSE, frozenset({"Pure"}))
    if owner in ("fastapi.FastAPI", "fastapi.APIRouter") and method == "include_router":
        return CallAnswer(NONE, frozenset({"WriteMemory"}))
    return None


def instance_attribute(ctx: AttributeContext) -> Type | None:
    """A response's attributes (`status_code` is an int, `text` a str...)."""
    if ctx.owner_type == RESPONSE:
        return RESPONSE_ATTRIBUTES.get(ctx.name)
    return None


__all__ = ["CLASSES", "CLIENT", "MARKERS", "RESPONSE", "call", "instance_attribute"]
