"""What the run-time checks leave unknown, named under strict mode (E1026, a note): one
line per thing that made a check stand back, at the line that did it.

- a function or class whose decorator is the project's own (or computed) and not
  known to keep a signature: its calls are not checked;
- a class whose base or metaclass is the project's own doing and not known (made
  by a call, bound by an assignment): its construction, its methods' calls and its
  instances' attributes are not checked;
- an import of a module not installed here (nor in the project): the names taken
  from it and its attributes are not checked;
- `from module import *` of a module whose names are not known, or a module that
  binds names at run time (`globals()`, `exec`, a module `__getattr__`): its
  undefined names are not checked;
- an attribute set under a computed name (`setattr(obj, name, v)`, `__dict__`,
  `vars(obj)`): no instance's attributes are checked in the project.

A library's classes and decorators are not modelled by these checks, by design, and
are not named one by one (an import of a module not installed is).
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Callable, Iterator

from ppy_core.compiler.check.attributes import dynamic
from ppy_core.compiler.check.bindings import statement_names, top_statements, writes_namespace
from ppy_core.compiler.check.finder import Finder, ModuleInfo, resolve_relative
from ppy_core.compiler.check.imports import Finding, ModuleFile
from ppy_core.compiler.check.names import BUILTINS
from ppy_core.compiler.check.project import TRANSPARENT, Project, decorator_name

CODE = "E1026"
_CLASS_DECORATORS = frozenset({"dataclass", "dataclasses.dataclass"})


def undecided_findings(
    file: ModuleFile, finder: Finder, project: Project | None
) -> Iterator[Finding]:
    """The notes of one module; `project` None when its name is not unique (the call
    and attribute checks skip such a module, so its definitions are not named)."""
    if project is not None:
        yield from _definitions(file, project)
    yield from _imports(file, finder)
    for node in file.nodes:
        if dynamic([node]):
            yield _note(
                node,
                "an attribute is set under a name computed at run time here: no "
                "instance's attributes are checked in this project",
                "name the attribute (`obj.name = v`), or leave it: strict names what "
                "is not known, it is not an error",
            )
        elif writes_namespace(node) or (
            isinstance(node, ast.FunctionDef)
            and node.name == "__getattr__"
            and node in file.tree.body
        ):
            yield _note(
                node,
                "this module may bind names at run time: its undefined names and its "
                "attributes read elsewhere are not checked",
                "bind the names in statements where you can",
            )


def _definitions(file: ModuleFile, project: Project) -> Iterator[Finding]:
    def named(expr: ast.expr, depth: int = 0) -> bool:
        """Whether `expr` is the project's own doing: not a builtin, nor something
        imported or made by what is imported (`app = FastAPI()`, then `@app.get`):
        a library's class or decorator is not modelled, by design (an import of what
        is not installed has its own note)."""
        root = expr
        while isinstance(root, ast.Attribute | ast.Subscript | ast.Call):
            root = root.func if isinstance(root, ast.Call) else root.value
        if not isinstance(root, ast.Name):
            return True
        binders = [s for s in top_statements(file.tree.body) if root.id in statement_names(s)]
        if not binders:  # (a builtin base is Python's; a class `type(...)` makes, ours)
            return depth > 0 or root.id not in BUILTINS
        for stmt in binders:  # (an ImportError fallback imports twice: both count)
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                continue
            made = isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
            if not made or depth > 2 or named(stmt.value, depth + 1):  # type: ignore[union-attr]
                return True
        return False

    for stmt in file.tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _decorated(stmt, stmt.name, TRANSPARENT, named)
        elif isinstance(stmt, ast.ClassDef):
            yield from _decorated(stmt, stmt.name, _CLASS_DECORATORS, named)
            base = project.unknown_base(file.name, stmt)
            if base is not None and named(base):
                what = "metaclass" if base in [k.value for k in stmt.keywords] else "base"
                yield _note(
                    base,
                    f"`{stmt.name}`'s {what} `{ast.unparse(base)}` is not known: its "
                    "construction, its methods' calls and its instances' attributes are "
                    "not checked",
                    "install the library it comes from, or check it by hand",
                )
            for member in stmt.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    title = f"{stmt.name}.{member.name}"
                    yield from _decorated(member, title, TRANSPARENT, named)


def _decorated(
    node: ast.stmt, name: str, known: frozenset[str], named: Callable[[ast.expr], bool]
) -> Iterator[Finding]:
    for decorator in node.decorator_list:  # type: ignore[attr-defined]
        written = decorator_name(decorator)
        if written.endswith((".setter", ".getter", ".deleter")):
            return  # a property's: an attribute, never called
        if written not in known and named(decorator):
            yield _note(
                decorator,
                f"the decorator `{decorator_name(decorator)}` of `{name}` is not known: "
                f"calls of `{name}` are not checked",
                "a decorator may change what it decorates; none is followed",
            )
            return


def _imports(file: ModuleFile, finder: Finder) -> Iterator[Finding]:
    for node in file.nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.partition(".")[0]
                if finder.module(top) is None and _absent(top):
                    yield _not_installed(node, top)
        elif isinstance(node, ast.ImportFrom):
            target = resolve_relative(file.name, file.package, node.module, node.level)
            if target is None or target == "__future__":
                continue
            found = finder.module(target)
            if found is None and _absent(target.partition(".")[0]):
                yield _not_installed(node, target)
            elif any(a.name == "*" for a in node.names) and (
                not isinstance(found, ModuleInfo) or found.open
            ):
                yield _note(
                    node,
                    f"what `from {target} import *` binds is not known: this module's "
                    "undefined names are not checked",
                    "import the names it uses by name",
                )


def _absent(top: str) -> bool:
    """Whether no finder of this Python knows top-level module `top` (an editable
    install is found by its own import hook, not on a path the reader walks); asking
    runs the finders only, never the module."""
    try:
        return importlib.util.find_spec(top) is None
    except (ImportError, ValueError):
        return True


def _not_installed(node: ast.stmt, module: str) -> Finding:
    return _note(
        node,
        f"module `{module}` is not installed here, nor in the project: what is taken "
        "from it is not checked",
        f"install `{module}` in the environment `ppy check` runs in",
    )


def _note(node: ast.AST, message: str, hint: str) -> Finding:
    return Finding(node, CODE, message, hint)


__all__ = ["CODE", "undecided_findings"]
