"""What raises when its line runs, found in annotated and unannotated code alike: names
no scope defines (E1020), imports of modules (E1021) and names (E1022) that do not
exist, module attributes that do not exist (E1023), calls of the project's functions,
classes and methods whose arguments do not bind (E1024).

The files are parsed and their symbol tables built once per run, for all of them
together (a call in one module is checked against a `def` in another). The findings
are cached for the whole set of files under their sizes and mtimes, with every
module file and folder read from the installed packages, so a warm run reads no
source at all.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import pickle
import sys
from collections.abc import Callable, Iterator, Sequence
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

FORMAT = 2  # of a cached entry; bump when the rules change
#: the files this pass reads: Python, and PPy's own modules (Python syntax, imported
#: beside `.py` ones)
SUFFIXES = (".py", ".ppy")


def runtime_findings(
    paths: Sequence[Path], roots: tuple[Path, ...] = (), strict: frozenset[Path] = frozenset()
) -> list[Diagnostic]:
    """The findings over `paths` (`.py` and `.ppy` files), from the cache when
    unchanged; in the files of `strict`, a note (E1026) for each thing left unknown."""
    files = [p for p in paths if p.suffix in SUFFIXES]
    key = _key(files, strict)
    cached = _load(key)
    if cached is not None:
        return cached
    findings, read = _check(files, roots, strict)
    _store(key, findings, read)
    return findings


#: from how many files the checks run in a forked process beside the per-file typing
FORK_FROM = 8


def start(
    paths: Sequence[Path], roots: tuple[Path, ...] = (), strict: frozenset[Path] = frozenset()
) -> Callable[[], list[Diagnostic]]:
    """Begin the checks of `paths`; the function returned waits for their findings.
    Cached, they are there at once; else, for a project of some size, a forked process
    runs them while the caller types its files (the machine's second core), sending
    its findings back pickled through a pipe (it computes them itself if that fails)."""
    files = [p for p in paths if p.suffix in SUFFIXES]
    key = _key(files, strict)
    cached = _load(key)
    if cached is not None:
        return lambda: cached
    _parse_all(paths)  # (before the fork: both processes read these trees)

    def here() -> list[Diagnostic]:
        findings, read = _check(files, roots, strict)
        _store(key, findings, read)
        return findings

    if len(files) < FORK_FROM or not hasattr(os, "fork") or (os.cpu_count() or 1) < 2:
        return here
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: check, store, send, and leave without running exit hooks
        os.close(readable)
        try:
            data = pickle.dumps(here())
        except BaseException:
            data = b""
        with os.fdopen(writable, "wb") as out:
            out.write(data)
        os._exit(0)
    os.close(writable)

    def wait() -> list[Diagnostic]:
        with os.fdopen(readable, "rb") as pipe:
            data = pipe.read()
        os.waitpid(pid, 0)
        try:
            return pickle.loads(data) if data else here()
        except (pickle.UnpicklingError, EOFError, AttributeError, TypeError):
            return here()

    return wait


def _parse_all(paths: Sequence[Path]) -> None:
    """Each file parsed and walked once (`parse` keeps its tree under its bytes), for
    this pass and the per-file one; a warm check, its findings cached, parses none."""
    for path in paths:
        try:
            flatten(parse(path.read_bytes(), str(path)))
        except (OSError, SyntaxError, ValueError):
            continue  # (each pass reports it in its own way)


def _check(
    paths: list[Path], roots: tuple[Path, ...], strict: frozenset[Path] = frozenset()
) -> tuple[list[Diagnostic], set[Path]]:
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


# -- the cache ------------------------------------------------------------------------
def _stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "none"
    return f"{st.st_size}@{st.st_mtime_ns}"


def _key(paths: list[Path], strict: frozenset[Path] = frozenset()) -> str:
    from ppy_core.compiler.check.quick import _code_id

    document = {
        "format": FORMAT,
        "strict": sorted(str(p) for p in strict),
        "core code": _code_id("ppy_core"),
        "python": sys.version,
        "path": sys.path,
        "files": [[str(p), _stamp(p)] for p in paths],
    }
    return hashlib.sha256(json.dumps(document).encode()).hexdigest()[:32]


def _entry(key: str) -> Path | None:
    from ppy_core.compiler.check import _entry as entry

    return entry(f"runtime-{key}")


def _load(key: str) -> list[Diagnostic] | None:
    from ppy_core.compiler.check import _cached

    entry = _entry(key)
    if entry is None or not entry.is_file():
        return None
    try:
        document = json.loads(entry.read_text())
        if any(_stamp(Path(p)) != s for p, s in document["read"].items()):
            return None  # an installed package changed, or a module appeared
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    rows = entry.with_suffix(".rows")
    return _cached(rows) if rows.is_file() else None


def _store(key: str, findings: list[Diagnostic], read: set[Path]) -> None:
    from ppy_core.compiler.check import _publish, _row

    entry = _entry(key)
    if entry is None:
        return
    _publish(entry.with_suffix(".rows"), json.dumps([_row(d) for d in findings]))
    _publish(entry, json.dumps({"read": {str(p): _stamp(p) for p in sorted(read)}}))


__all__ = ["module_name", "runtime_findings", "start"]
