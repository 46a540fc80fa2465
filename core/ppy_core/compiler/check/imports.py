"""Imports of modules and names that do not exist (E1021, E1022) and attributes a
module does not have (E1023), read from the modules' stubs or sources (`finder`).

Only a module that is found and closed is judged: one not installed, a C extension
without stubs, a namespace package, a module with a `__getattr__` stays unknown. An
import under `try: ... except ImportError` is a fallback and never reported; nor is an
attribute read under `except AttributeError`, tested with `hasattr`, or written
anywhere in the project (monkeypatching makes it exist)."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from ppy_core.compiler.check.bindings import statement_names, top_statements
from ppy_core.compiler.check.finder import MISSING, Finder, ModuleInfo, resolve_relative
from ppy_core.compiler.check.guards import guarded
from ppy_core.compiler.check.names import Binder

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
_ATTRIBUTE_ERRORS = frozenset({"AttributeError"})


@dataclass(frozen=True, slots=True)
class Finding:
    node: ast.AST
    code: str
    message: str
    hint: str


@dataclass(slots=True)
class ModuleFile:
    """One checked file: its tree, its dotted name, whether it is a package, and its
    nodes (walked once: every check reads this list)."""

    tree: ast.Module
    name: str
    package: bool
    nodes: list[ast.AST] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.nodes:
            from ppy_core.compiler.check import flatten

            self.nodes = flatten(self.tree)


def import_findings(file: ModuleFile, finder: Finder) -> Iterator[Finding]:
    for node in file.nodes:
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if guarded(node, _IMPORT_ERRORS, handlers=True):
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _missing_module(node, alias.name, finder)
        elif isinstance(node, ast.ImportFrom):
            target = resolve_relative(file.name, file.package, node.module, node.level)
            if target is None or target == "__future__":
                continue
            found = finder.module(target)
            if found == MISSING:
                yield from _missing_module(node, target, finder)
            elif isinstance(found, ModuleInfo):
                for alias in node.names:
                    if alias.name != "*" and not finder.defines(found, alias.name):
                        yield Finding(
                            node,
                            "E1022",
                            f"module `{target}` defines no `{alias.name}`",
                            "check the name, or import it from where it is defined",
                        )


def _missing_module(node: ast.stmt, dotted: str, finder: Finder) -> Iterator[Finding]:
    parts = dotted.split(".")
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        found = finder.module(prefix)
        if found == MISSING:
            yield Finding(
                node,
                "E1021",
                f"no module named `{prefix}`",
                f"`{'.'.join(parts[: end - 1])}` has no such submodule: check the name",
            )
            return
        if not isinstance(found, ModuleInfo):
            return  # not installed here, or a module nothing lists: unknown


def attribute_findings(
    file: ModuleFile, finder: Finder, binder: Binder, written: frozenset[str]
) -> Iterator[Finding]:
    """`module.attr` reads where the module defines no `attr`."""
    modules = _module_names(file, finder)
    if not modules:
        return
    tested = hasattr_names(file.nodes)
    for node, scope, _ in binder.loads:
        if node.id not in modules or binder.lookup(node.id, scope) is not binder.module:
            continue
        yield from _chain(node, modules[node.id], finder, tested | written)


def _chain(
    root: ast.Name,
    module: ModuleInfo,
    finder: Finder,
    skip: frozenset[str] | set[str],
) -> Iterator[Finding]:
    node: ast.AST = root
    parent = getattr(root, "_ppy_parent", None)
    while isinstance(parent, ast.Attribute) and parent.value is node:
        attr = parent.attr
        if not isinstance(parent.ctx, ast.Load) or attr.startswith("__") or attr in skip:
            return
        if module.open:
            return
        sub = finder.submodule(module, attr)
        if attr in module.names and not (module.stub and isinstance(sub, ModuleInfo)):
            return  # (a stub's name that is its submodule: `os.path`, read on)
        if sub == MISSING and not finder.defines(module, attr):
            if not guarded(parent, _ATTRIBUTE_ERRORS):
                yield Finding(
                    parent,
                    "E1023",
                    f"module `{module.name}` has no attribute `{attr}`",
                    f"check the name: `{module.name}` binds no `{attr}` and has no such submodule",
                )
            return
        if not isinstance(sub, ModuleInfo):
            return
        module, node = sub, parent
        parent = getattr(parent, "_ppy_parent", None)


def _module_names(file: ModuleFile, finder: Finder) -> dict[str, ModuleInfo]:
    """Module-level names that only imports bind, each to one module that is found
    (`import os` and `import os.path` both bind `os`, to os)."""
    others: Counter[str] = Counter()  # bindings by anything else
    bound: dict[str, set[str]] = {}
    for stmt in top_statements(file.tree.body):
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                name = alias.asname or alias.name.partition(".")[0]
                dotted = alias.name if alias.asname else name
                bound.setdefault(name, set()).add(dotted)
        elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
            owner = finder.module(stmt.module)
            for alias in stmt.names:  # `from os import path`: a submodule os does not bind
                name = alias.asname or alias.name
                if isinstance(owner, ModuleInfo) and alias.name not in owner.names:
                    bound.setdefault(name, set()).add(f"{stmt.module}.{alias.name}")
                else:
                    others[name] += 1
        else:
            others.update(statement_names(stmt))
    for node in file.nodes:
        if isinstance(node, ast.Global):
            others.update(node.names)
    found = {}
    for name, dotted in bound.items():
        if others[name] or len(dotted) != 1:
            continue
        info = finder.module(next(iter(dotted)))
        if isinstance(info, ModuleInfo):
            found[name] = info
    return found


def hasattr_names(nodes: list[ast.AST]) -> set[str]:
    return {
        node.args[1].value
        for node in nodes
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("hasattr", "getattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    }


__all__ = [
    "Finding",
    "ModuleFile",
    "attribute_findings",
    "hasattr_names",
    "import_findings",
]
