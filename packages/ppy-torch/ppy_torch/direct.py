"""A direct way in, without the core's driver: compile functions or run a file.

    layer = compile_function(layer)              # a live function -> its region
    fns = compile_functions([layer, residual])   # several, one extension
    run_path("torch_region.ppy")                 # a file, its @ppy.opt(3) functions as regions

Each does what the driver does for a module: stage (`TorchPlugin.stage` logic),
lower (`AtenBackend.lower_module`), load (`runtime.load_region`). A function that
cannot be a region stays as it is (`explain(fn)` says why); a missing toolchain
or a failed build is one warning and the Python functions run.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ppy_core.interface.backend import LowerContext
from ppy_core.interface.specs import FallbackSpec, GraphRegionSpec, LoweringSpec, RejectSpec
from ppy_core.runtime import dispatch
from ppy_torch.backend import AtenBackend
from ppy_torch.errors import RegionBuildError, RegionError, RegionWarning
from ppy_torch.plugin import stage_spec
from ppy_torch.runtime import load_region
from ppy_torch.stage import StageInput

_backend: AtenBackend | None = None


def backend() -> AtenBackend:
    """The process's backend (its builder probes the toolchain once)."""
    global _backend
    if _backend is None:
        _backend = AtenBackend()
    return _backend


def resolver(imports: Mapping[str, str]) -> Callable[[ast.expr], str | None]:
    """Qualified name of a Name/Attribute chain through `imports` (local -> qualified)."""

    def resolve(node: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in imports:
            return None
        return ".".join([imports[node.id], *reversed(parts)])

    return resolve


def imports_of_globals(namespace: Mapping[str, Any]) -> dict[str, str]:
    """Local name -> qualified name for the modules and classes a namespace holds."""
    out: dict[str, str] = {}
    for name, value in namespace.items():
        if isinstance(value, types.ModuleType):
            out[name] = value.__name__
        elif isinstance(value, type):
            out[name] = f"{value.__module__}.{value.__qualname__}"
    if out.get("Tensor", "").startswith("torch"):
        out["Tensor"] = "torch.Tensor"
    return out


def imports_of_module(tree: ast.Module) -> dict[str, str]:
    """Local name -> qualified name from a module's top-level import statements."""
    out: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    out[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    out[root] = root
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for alias in stmt.names:
                out[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
    return out


def _decorators(
    node: ast.FunctionDef, resolve: Callable[[ast.expr], str | None]
) -> tuple[tuple[str, ...], int]:
    names: list[str] = []
    opt = 2
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = resolve(target) or ast.unparse(target)
        names.append(name)
        if name == "ppy.opt" and isinstance(deco, ast.Call):
            args = [*deco.args, *(kw.value for kw in deco.keywords)]
            if args and isinstance(args[0], ast.Constant) and type(args[0].value) is int:
                opt = args[0].value
    return tuple(names), opt


def _stage(node: ast.FunctionDef, imports: Mapping[str, str], path: str) -> LoweringSpec:
    resolve = resolver(imports)
    decorators, _opt = _decorators(node, resolve)
    return stage_spec(StageInput(node, resolve, decorators, path), pure="ppy.pure" in decorators)


def _function_node(fn: Callable[..., Any]) -> ast.FunctionDef:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == fn.__name__:
            return node
    raise RegionError(f"cannot find the source of {fn.__qualname__}", code="E0001")


def explain(fn: Callable[..., Any]) -> str:
    """The region graph text of `fn`, or the reason it stays Python."""
    spec = _stage(
        _function_node(fn), imports_of_globals(fn.__globals__), inspect.getsourcefile(fn) or ""
    )
    if isinstance(spec, GraphRegionSpec):
        return str(spec.graph.text())
    return getattr(spec, "reason", None) or getattr(spec, "message", "")


def compile_functions(
    fns: Sequence[Callable[..., Any]], build_dir: Path | None = None
) -> list[Callable[..., Any]]:
    """Each function's region (one extension for all), or the function itself."""
    specs = [
        _stage(
            _function_node(fn), imports_of_globals(fn.__globals__), inspect.getsourcefile(fn) or ""
        )
        for fn in fns
    ]
    return _build_and_load(list(fns), specs, build_dir)


def compile_function(fn: Callable[..., Any], build_dir: Path | None = None) -> Callable[..., Any]:
    """`fn`'s region, or `fn` when it cannot be one (see `explain`)."""
    return compile_functions([fn], build_dir)[0]


def _lower(
    graphs: Sequence[Any], site: str, build_dir: Path | None
) -> tuple[list[Any], Path] | None:
    """Build `graphs` as one extension: (units, directory), or None after one warning."""
    be = backend()
    try:
        target = build_dir or be.builder().root / "direct"
        units = be.lower_module(list(graphs), LowerContext(site_id=site, build_dir=target))
    except RegionBuildError as exc:
        warnings.warn(
            f"ppy: ATen regions not built, the Python bodies run: {exc}",
            RegionWarning,
            stacklevel=4,
        )
        return None
    return units, target


def _build_and_load(
    fns: list[Callable[..., Any]], specs: Sequence[LoweringSpec], build_dir: Path | None
) -> list[Callable[..., Any]]:
    for spec in specs:
        if isinstance(spec, RejectSpec):
            raise RegionError(spec.message, code=spec.code, hint=spec.hint)
    chosen = [i for i, spec in enumerate(specs) if isinstance(spec, GraphRegionSpec)]
    if not chosen:
        return fns
    lowered = _lower(
        [specs[i].graph for i in chosen],  # type: ignore[union-attr]
        fns[chosen[0]].__name__,
        build_dir,
    )
    if lowered is None:
        return fns
    units, target = lowered
    out = list(fns)
    for i, unit in zip(chosen, units, strict=True):
        out[i] = _as_site(fns[i], load_region(unit.data, target, fns[i]))
    return out


def _as_site(fn: Callable[..., Any], region: Callable[..., Any]) -> Callable[..., Any]:
    """The region as a program holds it, as the core's binder does it: counted in
    `ppy.stats()` and behind the core's dispatcher (PPY_VERIFY compares every fast call
    with `fn`; unset, the region itself is returned and nothing is in the way)."""
    if region is fn:  # it did not load: the Python function, already warned about
        return fn
    site_id = f"{fn.__module__}:{fn.__qualname__}"
    dispatch.register(site_id, region)
    return dispatch.wrap(site_id, region, fn)  # type: ignore[no-any-return]


class _Rewriter(ast.NodeTransformer):
    """After each staged `def`, rebind its name through the region loader."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def visit_Module(self, node: ast.Module) -> ast.Module:
        body: list[ast.stmt] = []
        for stmt in node.body:
            body.append(stmt)
            if isinstance(stmt, ast.FunctionDef) and stmt.name in self.names:
                body.append(ast.parse(f"{stmt.name} = __ppy_regions__({stmt.name})").body[0])
        node.body = body
        return ast.fix_missing_locations(node)


def run_path(path: str | Path, argv: Sequence[str] = ()) -> dict[str, Any]:
    """Run a `.ppy`/`.py` file as `__main__` with its `@ppy.opt(3)` functions as regions."""
    path = Path(path)
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, str(path))
    imports = imports_of_module(tree)
    staged: dict[str, LoweringSpec] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and _decorators(stmt, resolver(imports))[1] >= 3:
            staged[stmt.name] = _stage(stmt, imports, str(path))
    regions = {n: s for n, s in staged.items() if isinstance(s, GraphRegionSpec)}
    for name, spec in staged.items():
        if isinstance(spec, FallbackSpec):
            print(f"# ppy: {name} stays Python: {spec.reason}", file=sys.stderr)
    for spec in staged.values():
        if isinstance(spec, RejectSpec):
            raise RegionError(spec.message, code=spec.code, hint=spec.hint)
    lowered = _lower([s.graph for s in regions.values()], path.stem, None) if regions else None
    units = {u.data["function"]: u for u in lowered[0]} if lowered else {}

    def hook(fn: Callable[..., Any]) -> Callable[..., Any]:
        unit = units.get(fn.__name__)
        if unit is None or lowered is None:
            return fn
        return _as_site(fn, load_region(unit.data, lowered[1], fn))

    code = compile(_Rewriter(set(regions)).visit(tree), str(path), "exec")
    namespace: dict[str, Any] = {
        "__name__": "__main__",
        "__file__": str(path),
        "__builtins__": __builtins__,
        "__ppy_regions__": hook,
    }
    old_argv = sys.argv
    sys.argv = [str(path), *argv]
    try:
        exec(code, namespace)
    finally:
        sys.argv = old_argv
    return namespace


__all__ = [
    "compile_function",
    "compile_functions",
    "explain",
    "run_path",
    "backend",
    "resolver",
    "imports_of_module",
    "imports_of_globals",
]
