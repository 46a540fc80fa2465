"""What a function's decorators let the compiler do, as the plugins vouch.

ppy's own decorators set the opt level and flags. Any other decorator is asked of
the plugins (`decorator_semantics`): TRANSPARENT ones (`@torch.no_grad()`) leave
the function compiled as if undecorated and stay applied around the compiled code;
a CALLS one (`@jax.jit`) keeps the body as written and offers the function whole
to `stage`; an UNVOUCHED one (`@app.get(...)`) and an unknown one leave the
function exactly as written. Each decision is a remark in `ppy explain`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.typer import Typer
from ppy_core.interface.plugin import (
    CALLS,
    TRANSPARENT,
    UNVOUCHED,
    DecoratorContext,
    Report,
)
from ppy_core.ir.types import UNKNOWN, Type


@dataclass(slots=True)
class FunctionOptions:
    """What a function's decorators say. `decorators` are those the compiled function
    sees (ppy's, a CALLS one); `outer` the transparent ones, applied around it at run
    time, the innermost at `position` - 1 of the decorator list."""

    opt: int
    fastmath: bool = False
    pure: bool = False
    decorators: tuple[str, ...] = ()
    skip_reason: str = ""
    outer: tuple[str, ...] = ()
    position: int = 0  # where a region's dispatcher goes in the decorator list
    calls: str = ""  # a decorator that changes how the function is called


@dataclass(frozen=True, slots=True)
class DecoratorSite:
    """One decorator of `func`, at `index` of its decorator list."""

    func: ast.FunctionDef
    deco: ast.expr
    index: int
    report: Report  # where the plugin's diagnostics go


def decorator_name(typer: Typer, deco: ast.expr) -> tuple[str | None, Type | None]:
    """(the name a decorator is asked under, the type of its receiver). Through the
    imports (`torch.no_grad`), or for a method of a typed module-level object by its
    class, as a method call is named: `@app.get(...)` with `app = FastAPI()` is
    "fastapi.FastAPI.get". None when neither resolves."""
    target = deco.func if isinstance(deco, ast.Call) else deco
    name = typer.qualname(target)
    if name is not None or not isinstance(target, ast.Attribute):
        return name, None
    receiver = typer.expr(target.value, {})
    if receiver is UNKNOWN:
        return None, None
    return f"{typer.owner_class(receiver)}.{target.attr}", receiver


def read_decorator(oracle: Oracle, typer: Typer, site: DecoratorSite, opts: FunctionOptions) -> str:
    """Ask the plugins what a decorator that is not ppy's does; record it in `opts`.
    Returns the remark to show ("" for none)."""
    func, deco = site.func, site.deco
    name, receiver = decorator_name(typer, deco)
    target = deco.func if isinstance(deco, ast.Call) else deco
    shown = name or ast.unparse(target)
    answer = None
    if name is not None:
        ctx = DecoratorContext(
            name,
            func.name,
            ast.unparse(deco),
            isinstance(deco, ast.Call),
            receiver,
            typer.location(deco),
            site.report,
        )
        answer = oracle.decorator_semantics(ctx)
    kind = getattr(answer, "kind", None)
    why = f" ({answer.reason})" if answer is not None and answer.reason else ""
    if kind == TRANSPARENT:
        opts.outer += (shown,)
        opts.position = site.index + 1
        return (
            f"decorator '{shown}' is transparent{why}: '{func.name}' compiles as if "
            "undecorated, and the decorator applies around the compiled code at run time"
        )
    opts.decorators += (shown,)
    if kind == CALLS:
        opts.calls = shown
        return (
            f"decorator '{shown}' changes how '{func.name}' is called{why}: its body stays "
            "as written under the decorator (no expression sites); it is offered whole "
            "to the plugins"
        )
    if kind == UNVOUCHED:
        opts.skip_reason = f"decorator '{shown}' is unvouched{why}: left exactly as written"
    else:
        opts.skip_reason = f"decorator '{shown}' is not known to leave the function as written"
    return ""


__all__ = ["FunctionOptions", "DecoratorSite", "decorator_name", "read_decorator"]
