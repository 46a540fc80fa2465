"""`ppy check`: the project's files typed by the compiler's front end and the same
plugin hooks, and what contradicts itself reported with a code.

Per module the findings are cached under the module's compile key (its source, its
project files, options and the fingerprints of its plugins), so an unchanged file is
not typed again; `strict` is part of that key because it is a `[tool.ppy]` option.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import gc
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ppy_core.diagnostics import Diagnostic, Error, Location

if TYPE_CHECKING:
    from ppy_core.project.config import Config

SKIPPED_DIRS = frozenset({".venv", "venv", "build", "dist", "node_modules", "__pycache__"})
FORMAT = 4  # of a cached entry; bump when findings change shape or the checker's rules do


@dataclass(slots=True)
class CheckReport:
    findings: list[Diagnostic] = field(default_factory=list)
    files: int = 0
    cached: int = 0
    seconds: float = 0.0

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    def as_json(self) -> str:
        rows = [
            {
                "path": f.location.path if f.location else "",
                "line": f.location.line if f.location else 0,
                "column": f.location.column if f.location else 0,
                "severity": f.severity,
                "code": f.code,
                "message": f.message,
                "hint": f.hint,
            }
            for f in self.findings
        ]
        summary = {"files": self.files, "errors": self.errors, "seconds": round(self.seconds, 4)}
        return json.dumps({"findings": rows, **summary}, indent=2)


def source_files(paths: Iterable[str]) -> Iterator[Path]:
    """The `.py` and `.ppy` files under `paths`, skipping venvs, builds and hidden folders."""
    for given in paths:
        path = Path(given)
        if path.is_file():
            yield path.resolve()
            continue
        if not path.is_dir():
            raise Error(
                f"{given}: no such file or folder", code="E0001", hint="give files or folders"
            )
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
            for name in sorted(files):
                if name.endswith((".py", ".ppy")):
                    yield (Path(folder) / name).resolve()


@functools.lru_cache(maxsize=1024)
def parse(source: bytes, filename: str) -> ast.Module:
    """A file's tree, parsed once per run: its quick key, its typing and the run-time
    checks read the same tree (none of them changes it)."""
    return ast.parse(source, filename=filename)


def flatten(tree: ast.Module) -> list[ast.AST]:
    """Every node of `tree` in `ast.walk`'s order, each given its `_ppy_parent` (the
    checks walk chains upwards); walked once per tree, the list kept on it. One loop
    over the fields costs a third of `ast.walk` and a parent-linking walk together."""
    known = getattr(tree, "_ppy_nodes", None)
    if known is not None:
        return known
    nodes: list[ast.AST] = [tree]
    append = nodes.append
    node_type = ast.AST
    for node in nodes:  # (the list grows as it is read: breadth first, as ast.walk)
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for child in value:
                    if isinstance(child, node_type):
                        child._ppy_parent = node  # type: ignore[attr-defined]
                        append(child)
            elif isinstance(value, node_type):
                value._ppy_parent = node  # type: ignore[attr-defined]
                append(value)
    tree._ppy_nodes = nodes  # type: ignore[attr-defined]
    return nodes


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for a check: the trees are hundreds of thousands
    of objects that live for the whole run, and every collection rescanned them (40%
    of a cold check's time on 69 files). What a check allocates lives until its end."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            # (frozen, then thawed into the oldest generation: enabled at once, the
            # first allocation would scan everything the check made, in one pause)
            gc.freeze()
            gc.enable()
            gc.unfreeze()


def check_paths(paths: Iterable[str], *, strict: bool | None = None) -> CheckReport:
    """Check every source file under `paths`; `strict` overrides `[tool.ppy] strict`."""
    from ppy_core.compiler.check import raising

    start = time.perf_counter()
    report = CheckReport()
    files = list(source_files(paths))
    with _collector_paused():
        # what raises at run time, over all the files together (their calls cross
        # modules); it parses every file first, for this pass too
        run_time = raising.start(files, _roots(files), _strict_files(files, strict))
        for path in files:
            findings, hit = check_file(path, strict=strict)
            report.files += 1
            report.cached += hit
            report.findings.extend(findings)
        report.findings = _unique([*report.findings, *run_time()])
    report.seconds = time.perf_counter() - start
    return report


def _strict_files(files: list[Path], strict: bool | None) -> frozenset[Path]:
    """The files checked under strict mode (`strict`, else their `[tool.ppy] strict`)."""
    from ppy_core.project.config import load_config

    if strict is not None:
        return frozenset(files) if strict else frozenset()
    found = set()
    for path in files:
        try:
            if load_config(path).strict:
                found.add(path)
        except Error:
            continue  # (its check reports the configuration)
    return frozenset(found)


def check_file(path: Path, *, strict: bool | None = None) -> tuple[list[Diagnostic], bool]:
    """The findings of one file, and whether they came from the cache. They are kept
    under the file's quick key (`quick.quick_key`: no plugin loaded to compute it),
    else, where only loading the plugins can tell, under its `module_key`."""
    from ppy_core.cache.module_key import module_key, read_bytes
    from ppy_core.compiler.check.quick import quick_key
    from ppy_core.project.config import load_config

    try:
        config = load_config(path)
        if strict is not None and strict != config.strict:
            config = dataclasses.replace(config, strict=strict)
        source = read_bytes(path)
        quick = quick_key(path, source, config)
        cached = _cached(_entry(quick)) if quick is not None else None
        if cached is not None:
            return cached, True
        if quick is not None and _nothing_to_type(path, source, config):
            _publish_findings(_entry(quick), [])
            return [], False
        key = module_key(path, config, typing_only=True)
    except Error as exc:
        return [exc.diagnostic], False
    entry = _entry(quick or key.key)
    cached = _cached(entry) if quick is None else None
    if cached is not None:
        return cached, True
    from ppy_core.compiler.check import stdlib

    claims = frozenset(key.activation.claims)  # type: ignore[attr-defined]
    with stdlib.checking(claims, project_roots(path, config)):
        findings = _check(key)
    _publish_findings(entry, findings)
    return findings, False


def _nothing_to_type(path: Path, source: bytes, config: Config) -> bool:
    """A file no plugin claims an import of, with no annotation and no literal `None`
    operand anywhere (`_typed`): typing it cannot report anything, so its plugins are
    not even loaded (the key, `module_key`, is not computed)."""
    from ppy_core.compiler.check.quick import claims_nothing

    if not claims_nothing(path, source, config):
        return False
    try:
        return not _typed(parse(source, str(path)))
    except (SyntaxError, ValueError):
        return False


def _publish_findings(entry: Path | None, findings: list[Diagnostic]) -> None:
    if entry is not None:
        _publish(entry, json.dumps([_row(d) for d in findings]))


def _roots(files: list[Path]) -> tuple[Path, ...]:
    """The project roots of the checked files' configs (their `src/` folders too);
    without a config, the folder a file's top package is in (a package's own folder
    is no root: `hypothesis/extra/` would make its `django/` the `django` package)."""
    from ppy_core.project.config import load_config

    found: dict[Path, None] = {}
    for folder in dict.fromkeys(f.parent for f in files):
        try:
            config = load_config(folder)
        except Error:
            continue
        root = project_roots(folder / "__init__.py", config)[0]
        if config.path is None:
            while (root / "__init__.py").is_file():
                root = root.parent
        found[root] = None
        if (root / "src").is_dir():
            found[root / "src"] = None
    return tuple(found)


def project_roots(path: Path, config: Config) -> tuple[Path, ...]:
    """Where the file's project keeps its own packages: its `pyproject.toml`'s folder
    (else the file's own), as a checker puts a project on its search path."""
    return ((config.path.parent if config.path else path.parent).resolve(),)


def _cached(entry: Path | None) -> list[Diagnostic] | None:
    if entry is None or not entry.is_file():
        return None
    try:
        return [_diagnostic(row) for row in json.loads(entry.read_text())]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a damaged entry: check again


def _check(key: object) -> list[Diagnostic]:
    from ppy_core.compiler.check.typer import CheckTyper
    from ppy_core.compiler.check.walker import FunctionCheck
    from ppy_core.compiler.frontend.classes import module_classes
    from ppy_core.compiler.frontend.oracle import Oracle
    from ppy_core.compiler.frontend.typer import single_assignments
    from ppy_core.interface.hooks import HookCaller
    from ppy_core.interface.plugin import ModuleContext
    from ppy_core.ir.types import OpaqueType, Type

    path: Path = key.path  # type: ignore[attr-defined]
    try:
        tree = parse(key.source, str(path))  # type: ignore[attr-defined]
    except SyntaxError as exc:
        where = Location(str(path), exc.lineno or 0, exc.offset or 0)
        return [Diagnostic("E0002", f"syntax error: {exc.msg}", "fix the syntax", where)]
    activation, config = key.activation, key.config  # type: ignore[attr-defined]
    relayed: list[Diagnostic] = list(activation.diagnostics)
    claimants = set(activation.claims.values())
    plugins = [p for p in activation.plugins if p.name in claimants]
    hooks = HookCaller(
        plugins,
        report=relayed.append,
        claims=activation.claims,
        options={p.name: config.plugin(p.name).options for p in plugins},
    )
    oracle = Oracle(hooks)
    imports = dict(key.scope.imports) if key.scope else {}  # type: ignore[attr-defined]
    module = path.stem
    module_ctx = ModuleContext(str(path), module, imports, report=hooks.relay)
    classes, class_types = module_classes(oracle, tree, module_ctx)

    def claimed(qualname: str) -> str | None:
        return activation.claims.get(qualname.partition(".")[0])

    functions = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    class_nodes = {  # classes no plugin types: read from their source (`check.local`)
        classes[n.name]: n
        for n in tree.body
        if isinstance(n, ast.ClassDef) and classes[n.name] not in class_types
    }
    findings: list[Diagnostic] = []
    module_globals: dict[str, Type] = {}
    implicit = _implicit_globals(tree)
    typed = _typed(tree) if not activation.claims else None
    enclosing = _enclosing(tree) if typed is None or typed else {}
    envs: dict[int, dict[str, Type]] = {}  # a function's names, for the functions it holds
    # with no plugin active nothing can report on an unannotated function's library
    # calls, and the core reports only what annotations contradict: such a function
    # is not typed at all (most of a cold check of an unannotated project)
    for node, owner in _functions(tree):
        if typed is not None and id(node) not in typed:
            continue  # (the module body is typed when anything in the module is)
        typer = CheckTyper(
            oracle,
            imports,
            str(path),
            local_names=classes,
            local_types=class_types,
            classes=classes,
            class_nodes=class_nodes,
            functions=functions,
            module_names=implicit,
            claimed=frozenset(activation.claims),
            module=module,
        )
        typer.globals.update(module_globals)
        outer = enclosing.get(id(node))
        if outer is not None and id(outer) in envs:  # a closure reads its enclosing names
            # (not what a test there narrowed an attribute to: it runs later)
            typer.env.update({n: t for n, t in envs[id(outer)].items() if "." not in n})
        if owner is not None and isinstance(node, ast.FunctionDef) and node.args.args:
            first = node.args.args[0]
            if first.annotation is None and not _is_static(node):
                typer.env[first.arg] = OpaqueType(f"{module}.{owner}")
        check = FunctionCheck(typer, node, config.strict, claimed)
        findings.extend(check.run())
        envs[id(node)] = typer.env
        if node is tree:  # the module body runs first: names it binds once are globals
            once = single_assignments(tree)
            module_globals = {n: t for n, t in typer.env.items() if n in once}
    ignored = _ignored_lines(key.source)  # type: ignore[attr-defined]
    # an Unknown where a plugin reported an error (`a.shapee`, `m[0, 0, 0]`) is its echo
    explained = {f.location for f in relayed if f.severity == "error" and f.location}
    findings = [f for f in findings if f.code != "E1001" or f.location not in explained]
    return _unique([f for f in [*relayed, *findings] if not _on(f, path, ignored)])


def _implicit_globals(tree: ast.Module) -> dict[str, object]:
    """The names every module has: `__file__` and `__name__` are str; `__doc__` is this
    module's docstring, so a str when it has one and None when it has none."""
    from ppy_core.compiler.check.types import STR
    from ppy_core.ir.types import NONE

    doc = STR if ast.get_docstring(tree, clean=False) is not None else NONE
    return {"__file__": STR, "__name__": STR, "__doc__": doc}


def _ignored_lines(source: bytes) -> frozenset[int]:
    """Lines a `# type: ignore` comment silences (PEP 484: every checker honours it;
    an ignore on its own line before any code silences the whole file, line 0)."""
    import io
    import tokenize

    if re.search(rb"type\s*:\s*ignore", source) is None:
        return frozenset()  # (tokenizing costs more than the rest of a warm check)
    lines: set[int] = set()
    code_seen = False
    try:
        for token in tokenize.tokenize(io.BytesIO(source).readline):
            if token.type == tokenize.COMMENT and token.string[1:].strip().startswith(
                "type: ignore"
            ):
                lines.add(token.start[0] if code_seen else 0)
            elif token.type not in (
                tokenize.ENCODING,
                tokenize.NL,
                tokenize.NEWLINE,
                tokenize.COMMENT,
            ):
                code_seen = True  # a docstring counts: the file ignore comes before it
    except (tokenize.TokenError, SyntaxError):
        return frozenset()
    return frozenset(lines)


def _on(finding: Diagnostic, path: Path, ignored: frozenset[int]) -> bool:
    where = finding.location
    if not ignored or where is None or Path(where.path) != path:
        return False
    return 0 in ignored or where.line in ignored


def _enclosing(tree: ast.Module) -> dict[int, ast.AST]:
    """id(nested function) -> the (innermost) function it is defined in; one walk."""
    found: dict[int, ast.AST] = {}

    def visit(node: ast.AST, outer: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if outer is not None:
                    found[id(child)] = outer
                visit(child, child)
            else:
                visit(child, outer)

    visit(tree, None)
    return found


def _functions(
    tree: ast.Module,
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef | ast.Module, str | None]]:
    yield tree, None
    stack: list[tuple[ast.AST, str | None]] = [(tree, None)]
    while stack:
        parent, owner = stack.pop()
        for node in ast.iter_child_nodes(parent):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield node, owner
                stack.append((node, None))
            elif isinstance(node, ast.ClassDef):
                stack.append((node, node.name))
            elif isinstance(node, ast.stmt):
                stack.append((node, owner))


def _typed(tree: ast.Module) -> set[int]:
    """ids of the module (when anything in it is) and of the functions holding an
    annotation, an annotated local or a literal `None` operand, themselves or in a
    function nested in them: what can be reported without a plugin. From each such
    node up its parents, stopping at a function already counted (its own are)."""
    found: set[int] = set()
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)
    for node in flatten(tree):
        if not _types_something(node):
            continue
        at: ast.AST | None = node
        while at is not None:
            if isinstance(at, scopes):
                if id(at) in found:
                    break
                found.add(id(at))
            at = getattr(at, "_ppy_parent", None)
    return found


def _types_something(node: ast.AST) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        return node.returns is not None or any(
            a is not None and a.annotation is not None for a in every
        )
    if isinstance(node, ast.AnnAssign):
        return True
    if isinstance(node, ast.BinOp):
        return any(isinstance(o, ast.Constant) and o.value is None for o in (node.left, node.right))
    return False


def _is_static(node: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


def _unique(findings: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for f in sorted(findings, key=lambda d: (_where(d), d.code)):
        key = (f.code, str(f.location), f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _where(d: Diagnostic) -> tuple[str, int, int]:
    loc = d.location
    return (loc.path, loc.line, loc.column) if loc else ("", 0, 0)


def _entry(key: str) -> Path | None:
    from ppy_core.cache.root import cache_root

    try:
        folder = cache_root() / "check"
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return None
    return folder / f"{key}-{FORMAT}.json"


def _publish(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def _row(d: Diagnostic) -> dict[str, object]:
    loc = d.location
    where = [loc.path, loc.line, loc.column] if loc else None
    return {
        "code": d.code,
        "message": d.message,
        "hint": d.hint,
        "severity": d.severity,
        "where": where,
    }


def _diagnostic(row: dict[str, object]) -> Diagnostic:
    where = row["where"]
    location = Location(*where) if isinstance(where, list) else None  # type: ignore[arg-type]
    return Diagnostic(
        str(row["code"]),
        str(row["message"]),
        str(row["hint"]),
        location,
        severity=row["severity"],  # type: ignore[arg-type]
    )


__all__ = ["CheckReport", "check_paths", "check_file", "source_files"]
