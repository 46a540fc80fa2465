"""The decorators of `import ppy`: `opt`, `fastmath`, `pure`, `jax`.

Under plain `python` they change nothing: each returns the very function it was
given, marked with `__ppy_*__` attributes the compiler reads from the source, and
`__ppy_region__ = False` (no compiled region is attached). The compiler recognizes
them syntactically; these runtime objects only have to be inert and honest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

from ppy_core.diagnostics import Error

F = TypeVar("F", bound=Callable[..., Any])

OPT_LEVELS: tuple[int, ...] = (0, 1, 2, 3)
DEFAULT_OPT: int = 2


def _mark(func: F, decorator: str, **attributes: Any) -> F:
    """Set `attributes` on `func` and mark it as not compiled; return `func` itself."""
    if not callable(func):
        raise Error(
            f"ppy.{decorator}: expected a function, got {type(func).__name__}",
            hint=f"write @ppy.{decorator} directly above a def",
            code="E0020",
        )
    try:
        for name, value in attributes.items():
            setattr(func, name, value)
        if not hasattr(func, "__ppy_region__"):
            func.__ppy_region__ = False  # type: ignore[attr-defined]
    except (AttributeError, TypeError) as exc:
        raise Error(
            f"ppy.{decorator}: {type(func).__name__} objects cannot carry ppy's marks ({exc})",
            hint=f"apply @ppy.{decorator} to a function defined with def",
            code="E0020",
        ) from None
    return func


@overload
def opt(level: int) -> Callable[[F], F]: ...
@overload
def opt(level: F) -> F: ...
def opt(level: int | F) -> Callable[[F], F] | F:
    """Set the optimization level of one function: 0 off, 1 typed only, 2 the default
    (fusion), 3 also whole-function regions. `@ppy.opt(3)`; bare `@ppy.opt` means 2."""
    if callable(level):
        return _mark(level, "opt", __ppy_opt__=DEFAULT_OPT)
    if isinstance(level, bool) or not isinstance(level, int) or level not in OPT_LEVELS:
        raise Error(
            f"ppy.opt: level {level!r} is not one of 0, 1, 2, 3",
            hint="0 compiles nothing, 1 types only, 2 fuses (the default), 3 also makes regions",
            code="E0020",
        )

    def decorate(func: F) -> F:
        return _mark(func, "opt", __ppy_opt__=level)

    return decorate


def _flag(name: str, attribute: str, doc: str) -> Callable[..., Any]:
    """A decorator usable bare (`@ppy.pure`) and called (`@ppy.pure()`)."""

    def decorator(func: Any = None, /) -> Any:
        if func is None:
            return lambda f: _mark(f, name, **{attribute: True})
        return _mark(func, name, **{attribute: True})

    decorator.__name__ = decorator.__qualname__ = name
    decorator.__doc__ = doc
    decorator.__module__ = "ppy"
    return decorator


fastmath = _flag(
    "fastmath",
    "__ppy_fastmath__",
    """Allow approximate math in this function: FMA contraction, reassociation, and
    reductions in any order. Without it, compiled code is bit-exact with Python's.""",
)
pure = _flag(
    "pure",
    "__ppy_pure__",
    """Declare that this function writes no memory it did not allocate and has no
    other effect; the compiler checks it (E1010) and may then cache or reorder calls.""",
)
jax = _flag(
    "jax",
    "__ppy_jax__",
    """Export this function to StableHLO at build time (as `@jax.jit` functions are),
    given `ppy.Shape`/`ppy.DType` on its parameters and `build-execution = "allow"`.""",
)

__all__ = ["opt", "fastmath", "pure", "jax", "OPT_LEVELS", "DEFAULT_OPT"]
