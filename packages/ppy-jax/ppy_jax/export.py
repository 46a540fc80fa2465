"""Build-time export of a jitted function to serialized StableHLO (runs in the child).

The core's build-execution service calls `export(payload)` in a subprocess with
the project's path (`ppy_core.project.build_execution`): it imports the project's
module, reads the function's parameters' `Annotated[..., ppy.Shape(...),
ppy.DType(...)]`, and exports it with `jax.export`. Named dimensions ("batch") are
symbolic, all parsed in one scope (two scopes cannot mix), so one artifact serves
every batch size. Each parameter is one array: custom pytree nodes (optax's
states, Flax's TrainState) do not survive serialization, so the caller passes
leaves. When every dimension is known, the compiled executable for this jaxlib
and CPU is stored beside the export (`executable`), keyed by `fingerprint`.
"""

from __future__ import annotations

import importlib
import typing
from typing import Any

from ppy_jax.artifact import Artifact


class ExportRefusal(Exception):
    """The function cannot be exported as annotated (a coded diagnostic for the user)."""


def export(payload: dict[str, Any]) -> bytes:
    """`payload`: {"module", "function", "fingerprint"} -> the packed artifact."""
    import jax
    from jax import export as jax_export

    module = importlib.import_module(payload["module"])
    target: Any = module
    for part in payload["function"].split("."):
        target = getattr(target, part)
    jitted = target if hasattr(target, "lower") else jax.jit(target)
    specs, symbolic = parameter_specs(_python_function(target))
    exported = jax_export.export(jitted)(*specs)
    executable = b""
    if not symbolic:
        executable = compile_executable(jitted, specs)
    return Artifact(
        function=payload["function"],
        fingerprint=str(payload.get("fingerprint", "")),
        exported=bytes(exported.serialize()),
        executable=executable,
    ).pack()


def _python_function(target: Any) -> Any:
    """The Python function under `jax.jit` (its annotations are the contract)."""
    inner = getattr(target, "__wrapped__", None) or getattr(target, "fun", None)
    return inner if callable(inner) else target


def parameter_specs(func: Any) -> tuple[list[Any], bool]:
    """One `jax.ShapeDtypeStruct` per parameter, and whether any dimension is symbolic."""
    import jax
    from jax import export as jax_export

    from ppy import DType, Shape

    hints = typing.get_type_hints(func, include_extras=True)
    hints.pop("return", None)
    names = func.__code__.co_varnames[: func.__code__.co_argcount]
    found: list[tuple[str, tuple[Any, ...], str]] = []
    for name in names:
        hint = hints.get(name)
        extras = getattr(hint, "__metadata__", ())
        shape = next((e for e in extras if isinstance(e, Shape)), None)
        dtype = next((e for e in extras if isinstance(e, DType)), None)
        if shape is None or dtype is None:
            raise ExportRefusal(
                f"parameter {name!r} carries no ppy.Shape and ppy.DType in Annotated"
            )
        if any(d is None for d in shape.dims):
            raise ExportRefusal(f"parameter {name!r} has an unknown (None) dimension")
        found.append((name, shape.dims, str(getattr(dtype, "name", dtype))))
    symbols = sorted({d for _, dims, _ in found for d in dims if isinstance(d, str)})
    scope: dict[str, Any] = {}
    if symbols:  # one scope for every symbol of the function
        scope = dict(zip(symbols, jax_export.symbolic_shape(", ".join(symbols)), strict=True))
    specs = [
        jax.ShapeDtypeStruct(tuple(scope.get(d, d) for d in dims), _dtype(dt))
        for _, dims, dt in found
    ]
    return specs, bool(symbols)


def _dtype(name: str) -> Any:
    import jax.numpy as jnp

    return jnp.dtype(name)


def compile_executable(jitted: Any, specs: list[Any]) -> bytes:
    """The compiled executable for these concrete specs, serialized (b"" when the
    backend cannot serialize it: the export alone is then used)."""
    from jax.experimental import serialize_executable

    try:
        compiled = jitted.lower(*specs).compile()
        blob, _, _ = serialize_executable.serialize(compiled)
    except (ValueError, NotImplementedError):
        return b""
    return bytes(blob)


__all__ = ["ExportRefusal", "compile_executable", "export", "parameter_specs"]
