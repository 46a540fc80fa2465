"""The run-time checks over a set of parsed files: each file's symbol tables (its
scopes, `binder`), the project's definitions across them (`project`), and per file
the findings of every check (`raising` runs this, or reads its cached findings
without importing it: a warm check never loads the checks)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from ppy_core.compiler.check import flatten, parse
from ppy_core.compiler.check.attributes import attribute_findings as instance_findings
from ppy_core.compiler.check.attributes import dynamic
from ppy_core.compiler.check.calls import call_findings
from ppy_core.compiler.check.finder import (
    MISSING,
    Finder,
    ModuleInfo,
    dunder_all,
    exported,
    resolve_relative,
)
from ppy_core.compiler.check.imports import (
    Finding,
    ModuleFile,
    attribute_findings,
    hasattr_names,
    import_findings,
)
from ppy_core.compiler.check.names import Binder
from ppy_core.compiler.check.project import Project
from ppy_core.compiler.check.undecided import CODE as UNDECIDED
from ppy_core.compiler.check.undecided import undecided_findings
from ppy_core.diagnostics import Diagnostic, Location


def check_files(
    paths: list[Path], roots: tuple[Path, ...], strict: frozenset[Path] = frozenset()
) -> tuple[list[Diagnostic], set[Path]]:
    """The findings over `paths` (in `strict`'s files, E1026 notes too), and every
    installed file and folder read for them (the cache's key)."""
    parsed: list[tuple[Path, ModuleFile, bytes]] = []
    homes: list[Path] = []
    for path in paths:
        try:
            source = path.read_bytes()
            tree = parse(source, str(path))
        except (OSError, SyntaxError, ValueError):
            continue  # (the per-file check reports the syntax error)
        name, package, home = module_name(path)
        file = ModuleFile(tree, name, package, flatten(tree))
        parsed.append((path, file, source))
        homes.append(home)
    finder = Finder(tuple(dict.fromkeys([*roots, *homes])))
    names: dict[str, int] = {}
    for _, file, _ in parsed:
        names[file.name] = names.get(file.name, 0) + 1
    binders: dict[str, Binder] = {}
    every: list[tuple[Path, ModuleFile, Binder, bytes]] = []
    for path, file, source in parsed:
        binder = Binder(file.tree, _star(file, finder), source)
        every.append((path, file, binder, source))
        if names[file.name] == 1:
            binders[file.name] = binder
    project = Project({f.name: f for _, f, _, _ in every if f.name in binders}, binders)
    written, extra = _written([f.nodes for _, f, _, _ in every])
    # an attribute set under a computed name may be any name: no instance check then
    tested = None if any(dynamic(f.nodes) for _, f, _, _ in every) else set()
    for _, f, _, _ in every:
        if tested is not None:
            tested |= hasattr_names(f.nodes)
    out: list[Diagnostic] = []
    for path, file, binder, source in every:
        found = list(_findings(file, binder, finder, project, written, extra, tested))
        if path in strict:
            unique = project if project.files.get(file.name) is file else None
            found += undecided_findings(file, finder, unique)
        ignored = _ignored(source)
        for f in found:
            line = getattr(f.node, "lineno", 0)
            if 0 in ignored or line in ignored:
                continue
            where = Location(str(path), line, getattr(f.node, "col_offset", 0) + 1)
            severity = "note" if f.code == UNDECIDED else "error"
            out.append(Diagnostic(f.code, f.message, f.hint, where, severity=severity))
    return out, finder.read


def _findings(
    file: ModuleFile,
    binder: Binder,
    finder: Finder,
    project: Project,
    written: frozenset[str],
    extra: frozenset[str],
    tested: set[str] | None,
) -> Iterator[Finding]:
    for undefined in binder.undefined(extra):
        yield Finding(
            undefined.node, "E1020", f"name `{undefined.name}` is not defined", undefined.hint
        )
    yield from _dunder_all(file, binder, finder)
    yield from import_findings(file, finder)
    yield from attribute_findings(file, finder, binder, written)
    if file.name in project.files and project.files[file.name] is file:
        yield from call_findings(project, file.name, written)
        if tested is not None:
            yield from instance_findings(project, file.name, written, tested)


def _dunder_all(file: ModuleFile, binder: Binder, finder: Finder) -> Iterator[Finding]:
    """`__all__` naming what the module does not define: `from m import *` raises."""
    listed = dunder_all(file.tree)
    if listed is None or binder.module.open:
        return
    own = finder.module(file.name) if file.package else None
    for name, node in listed:
        if name in binder.module.bound:
            continue
        if isinstance(own, ModuleInfo) and finder.submodule(own, name) != MISSING:
            continue  # a package's `__all__` may list its submodules
        yield Finding(
            node,
            "E1020",
            f"`__all__` lists `{name}`, which this module does not define",
            "define it, or take it out of `__all__` (`from module import *` raises)",
        )


def _star(file: ModuleFile, finder: Finder):
    def names(module: str | None, level: int) -> set[str] | None:
        target = resolve_relative(file.name, file.package, module, level)
        found = finder.module(target) if target else None
        if not isinstance(found, ModuleInfo) or found.open:
            return None
        return exported(found)

    return names


def _written(every: list[list[ast.AST]]) -> tuple[frozenset[str], frozenset[str]]:
    """Attribute names the project writes anywhere (`obj.name = ...`, `setattr(obj,
    "name", ...)`: they may exist on any object), and names it adds to builtins."""
    written: set[str] = set()
    extra: set[str] = set()
    for nodes in every:
        for node in nodes:
            if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                written.add(node.attr)
                if isinstance(node.value, ast.Name) and node.value.id in (
                    "builtins",
                    "__builtin__",
                    "__builtins__",
                ):
                    extra.add(node.attr)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
                callee = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
                if callee == "setattr" and len(node.args) >= 2:
                    name = node.args[1]
                    if isinstance(name, ast.Constant) and isinstance(name.value, str):
                        written.add(name.value)
                        if ast.unparse(node.args[0]) in ("builtins", "__builtin__"):
                            extra.add(name.value)
                elif callee == "install":  # gettext.install: `_` becomes a builtin
                    extra.add("_")
    return frozenset(written), frozenset(extra)


def module_name(path: Path) -> tuple[str, bool, Path]:
    """A file's dotted module name, whether it is a package, and the folder its top
    package is in (the root it is imported from)."""
    package = path.stem == "__init__"
    parts = [] if package else [path.stem]
    folder = path.parent
    if package:
        parts.insert(0, folder.name)
        folder = folder.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts), package, folder


def _ignored(source: bytes) -> frozenset[int]:
    from ppy_core.compiler.check import _ignored_lines

    return _ignored_lines(source)


__all__ = ["check_files", "module_name"]
