"""What the names of a module refer to: its module-level imports, resolved to
qualified names, and the project modules it imports (whose content enters the key)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_SUFFIXES = (".ppy", ".py")


@dataclass(slots=True)
class ModuleScope:
    imports: dict[str, str] = field(default_factory=dict)  # "np" -> "numpy"
    top_level: set[str] = field(default_factory=set)  # every top-level module imported
    project_files: dict[str, Path] = field(default_factory=dict)  # module name -> file
    assigned: set[str] = field(default_factory=set)  # module-level names bound otherwise


def scan_module(tree: ast.Module, path: Path, package: str = "") -> ModuleScope:
    """Resolve the module-level imports of `tree` (a file at `path`)."""
    scope = ModuleScope()
    for node in _module_level(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                scope.top_level.add(top)
                if alias.asname:
                    scope.imports[alias.asname] = alias.name
                else:
                    scope.imports[top] = top
                _note_project(scope, path.parent, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            if base is None:
                continue
            scope.top_level.add(base.split(".")[0])
            for alias in node.names:
                if alias.name == "*":
                    continue
                scope.imports[alias.asname or alias.name] = f"{base}.{alias.name}"
                if node.level:
                    root = path.parents[node.level - 1]
                    local = f"{node.module}.{alias.name}" if node.module else alias.name
                    _note_project(scope, root, local, fallback=node.module or "")
                else:
                    _note_project(scope, path.parent, f"{base}.{alias.name}", fallback=base)
        else:
            for target in _bound_names(node):
                scope.assigned.add(target)
    for name in scope.assigned:
        scope.imports.pop(name, None)  # rebound: no longer the import
    return scope


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """Statements at module level, looking into if/try (common for optional imports)."""
    out: list[ast.stmt] = []
    todo = list(tree.body)
    while todo:
        node = todo.pop(0)
        out.append(node)
        if isinstance(node, ast.If | ast.Try):
            todo[:0] = [*node.body, *getattr(node, "orelse", [])]
    return out


def _bound_names(node: ast.stmt) -> list[str]:
    names: list[str] = []
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        names.append(node.name)
    elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.For | ast.With):
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.append(sub.id)
    return names


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    if node.level == 0:
        return node.module
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base) or None


def _note_project(scope: ModuleScope, root: Path, dotted: str, fallback: str = "") -> None:
    for name in (dotted, fallback):
        if not name:
            continue
        rel = Path(*name.split("."))
        for suffix in PROJECT_SUFFIXES:
            candidate = root / rel.with_suffix(suffix)
            if candidate.is_file():
                scope.project_files[name] = candidate
                return
        init = root / rel / "__init__.py"
        if init.is_file():
            scope.project_files[name] = init
            return


__all__ = ["ModuleScope", "scan_module"]
