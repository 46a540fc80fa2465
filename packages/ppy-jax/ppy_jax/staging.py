"""The jax plugin's `stage`: export a `@jax.jit` / `@ppy.jax` function at build time.

Exporting runs project code (jax traces the function), so it goes through the
core's build-execution service: only under `[tool.ppy] build-execution = "allow"`,
in a subprocess with the project's path and a time limit. Under "deny" the user
gets one warning (E0030) naming the function and the setting, and the function
stays an ordinary jitted call; a failed export is a coded warning too (E0031-E0034),
never a crashed build. What comes back is the packed artifact (`ppy_jax.artifact`),
handed to the `stablehlo` backend as the region's graph.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ppy_core.diagnostics import Error
from ppy_core.interface.plugin import FunctionContext
from ppy_core.interface.specs import FallbackSpec, GraphRegionSpec, LoweringSpec
from ppy_core.project.build_execution import execute
from ppy_core.project.config import load_config
from ppy_jax._probe import executable_key

EXPORTING: Final = frozenset({"jax.jit", "ppy.jax"})
WORKER: Final = "ppy_jax.export:export"
TIMEOUT_S: Final = 300.0


@dataclass(frozen=True, slots=True)
class ExportGraph:
    """What the `stablehlo` backend writes: one exported function's packed artifact.

    `jit_fallback`: the function is not jitted in the source (`@ppy.jax` alone), so the
    run-time fallback must jit it (eager op-by-op JAX differs from `jit` in the bits)."""

    name: str
    artifact: bytes
    jit_fallback: bool

    def text(self) -> str:
        return f"stablehlo.export @{self.name} ({len(self.artifact)} bytes)"


def wants_export(ctx: FunctionContext) -> bool:
    return bool(EXPORTING.intersection(ctx.decorators))


def annotated_parameters(node: ast.FunctionDef) -> str | None:
    """Why the function cannot be exported from its signature alone (None: it may be)."""
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        return "only plain positional parameters without defaults are exported"
    for arg in args.args:
        text = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        if "Annotated[" not in text or "Shape(" not in text or "DType(" not in text:
            return f"parameter {arg.arg!r} has no Annotated[..., ppy.Shape(...), ppy.DType(...)]"
    return None


def import_root(path: str, module: str) -> str:
    """The folder from which `module` (dotted) imports as the file at `path`."""
    file = Path(path).resolve()
    depth = module.count(".") + (1 if file.name == "__init__.py" else 0)
    return str(file.parents[depth])


def stage_export(ctx: FunctionContext) -> LoweringSpec:
    """Export the function (or say why not, reporting what the user must know)."""
    why = annotated_parameters(ctx.node)
    if why is not None:
        return FallbackSpec(f"not exported to StableHLO: {why}")
    name = ctx.node.name
    try:
        config = load_config(ctx.module.path)
    except Error as exc:
        ctx.report(exc.diagnostic)
        return FallbackSpec(f"not exported: {exc.diagnostic.message}")
    outcome = execute(
        WORKER,
        {"module": ctx.module.module, "function": name, "fingerprint": executable_key()},
        config=config,
        who=f"jax export of {ctx.module.module}.{name}",
        instead="it stays an ordinary jitted call",
        sys_path=[import_root(ctx.module.path, ctx.module.module)],
        timeout_s=float(ctx.options.get("export-timeout", TIMEOUT_S)),
        location=ctx.location,
    )
    diagnostic = outcome.diagnostic
    if diagnostic is not None:
        ctx.report(diagnostic)
        return FallbackSpec(f"not exported: {diagnostic.message} [{diagnostic.code}]")
    graph = ExportGraph(name, outcome.data, jit_fallback="jax.jit" not in ctx.decorators)
    return GraphRegionSpec(backend="stablehlo", graph=graph)


__all__ = ["EXPORTING", "ExportGraph", "annotated_parameters", "import_root", "stage_export"]
