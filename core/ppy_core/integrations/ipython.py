"""`%load_ext ppy`: each IPython (Jupyter) cell compiled through the cache.

Design: an `ast_transformers` entry hands each cell, after IPython's own
transformations (magics are calls by then), to the compiler as a module-like unit:
the cell's source (`ast.unparse` of the tree IPython would run) is written once
under the cache root as `cells/cell_<hash>.py` and compiled like any module, so a
cell run twice, or in a new kernel, is a cache hit. The tree IPython runs becomes
one call that executes the compiled cell in the user's namespace and returns the
value of the cell's last expression (IPython shows it as `Out[n]`, as before).

Why a whole cell and not each expression: the compiler types a site from the cell's
assignments and imports (`a = np.ones(3)` above `a * 2 + 1`), which only the
module-like unit has; the imports of earlier cells whose names are still bound are
put first in the unit (`import numpy as np` in cell 1 types `np.ndarray` in cell 5).

Every cell shares the one user namespace, where each cell's sites would be named
`__ppy_site_0...`: the compiled code's own names are given the cell's hash
(`__ppy_c<hash>_site_0`), in the code and where its binder writes them (moved to the
renamed keys right after it makes them), so a function defined in one cell keeps
its sites when another cell runs.

A cell that cannot be compiled (a top-level `await`, a compile failure) runs as
Python, as IPython would have run it, after one warning. `%ppy_explain` shows the
sites of the last compiled cell that has any (as `ppy explain FILE` does).
"""

from __future__ import annotations

import ast
import hashlib
import types
import warnings
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PREFIX = "__ppy_"  # the compiler's own names in a module (compiler.frontend.transform)
FRESH = "__ppy_fresh"  # runtime.module.FRESH: one reader shared by every module
RUN = "_ppy_run_cell"  # the one call a compiled cell becomes (hidden from %who)
VALUE = "_ppy_cell_value"  # where the cell's last expression's value is left


class CellWarning(UserWarning):
    """A cell is not compiled: it runs as Python."""


def _renamed(code: types.CodeType, tag: str) -> types.CodeType:
    """`code` with each of the compiler's names made the cell's own."""
    consts = tuple(_renamed(c, tag) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    names = tuple(own(n, tag) for n in code.co_names)
    return code.replace(co_names=names, co_consts=consts)


def own(name: str, tag: str) -> str:
    """The cell's name for the compiler's `name` (the shared FRESH reader keeps its own)."""
    if not name.startswith(PREFIX) or name == FRESH:
        return name
    return f"{PREFIX}c{tag}_{name[len(PREFIX) :]}"


def _move(namespace: dict[str, Any], before: set[str], tag: str) -> None:
    """Give the compiler's names the binder just wrote the cell's names."""
    for name in [n for n in namespace if n.startswith(PREFIX) and n not in before]:
        if name != FRESH:
            namespace[own(name, tag)] = namespace.pop(name)


def run_entry(directory: Path, namespace: dict[str, Any], tag: str) -> None:
    """Run the compiled cell in `directory` inside `namespace` (the user's)."""
    import builtins

    from ppy_core.runtime.artifact import read_code, read_manifest
    from ppy_core.runtime.module import Binder

    __tracebackhide__ = True  # IPython shows the cell's frames, not these
    manifest = read_manifest(directory)
    code = _renamed(read_code(directory, manifest), tag)
    namespace.setdefault("__builtins__", builtins)
    before = {n for n in namespace if n.startswith(PREFIX)}
    binder = Binder(directory, manifest, namespace)
    _move(namespace, before, tag)

    def bind(fallbacks: dict[int, Any]) -> None:
        done = {n for n in namespace if n.startswith(PREFIX)}
        binder.bind(fallbacks)
        _move(namespace, done, tag)

    namespace[own("__ppy_bind__", tag)] = bind
    exec(code, namespace)


class CellCompiler(ast.NodeTransformer):
    """The `ast_transformers` entry: a cell's tree -> one call running it compiled."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.last: Path | None = None  # the last compiled cell's file, for %ppy_explain
        #: name -> the import statement of an earlier cell that bound it
        self.imports: dict[str, ast.stmt] = {}

    def _prelude(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """The earlier cells' imports whose names the user's namespace still holds: a
        cell is compiled as a unit, and `np.ndarray` in it is typed only when the unit
        imports numpy (re-running an import is a dictionary lookup)."""
        namespace = self.shell.user_ns
        chosen: list[ast.stmt] = []
        for name, statement in self.imports.items():
            if name in namespace and statement not in chosen:
                chosen.append(statement)
        for statement in body:
            if isinstance(statement, ast.Import | ast.ImportFrom) and not getattr(
                statement, "level", 0
            ):
                for alias in statement.names:
                    if alias.name != "*":
                        bound = alias.asname or alias.name.partition(".")[0]
                        self.imports[bound] = statement
        return chosen

    def visit_Module(self, tree: ast.Module) -> ast.Module:
        if not tree.body:
            return tree
        body = list(tree.body)
        shows = isinstance(body[-1], ast.Expr)
        if shows:
            last = body[-1]
            assert isinstance(last, ast.Expr)
            body[-1] = ast.copy_location(
                ast.Assign(targets=[ast.Name(VALUE, ast.Store())], value=last.value), last
            )
        body = [*self._prelude(body), *body]
        source = ast.unparse(ast.fix_missing_locations(ast.Module(body, type_ignores=[])))
        try:
            path, entry = self._compile(source)
        except Exception as exc:  # the cell still runs, as Python
            text = getattr(getattr(exc, "diagnostic", None), "message", "") or str(exc)
            warnings.warn(
                f"ppy: this cell is not compiled, it runs as Python: {type(exc).__name__}: "
                f"{text.splitlines()[0] if text else ''}  [E3043]",
                CellWarning,
                stacklevel=2,
            )
            return tree
        if _has_sites(entry):
            self.last = path  # (a cell of magics alone, %ppy_explain's own, has none)
        call = ast.Call(
            func=ast.Name(RUN, ast.Load()),
            args=[ast.Constant(str(entry)), ast.Constant(path.stem[len("cell_") :])],
            keywords=[],
        )
        return ast.fix_missing_locations(ast.Module([ast.Expr(call)], type_ignores=[]))

    def _compile(self, source: str) -> tuple[Path, Path]:
        from ppy_core.cache.root import cache_root, write_if_changed
        from ppy_core.compiler.importing import compile_for_import

        digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        path = cache_root() / "cells" / f"cell_{digest}.py"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_if_changed(path, source.encode())
        return path, compile_for_import(path)


def _has_sites(entry: Path) -> bool:
    from ppy_core.runtime.artifact import read_manifest

    manifest = read_manifest(entry)
    return bool(manifest.get("expr_sites") or manifest.get("function_sites"))


def _runner(namespace: dict[str, Any]) -> Any:
    def run_cell(entry: str, tag: str) -> Any:
        __tracebackhide__ = True
        namespace.pop(VALUE, None)
        run_entry(Path(entry), namespace, tag)
        return namespace.pop(VALUE, None)

    return run_cell


_LOADED: dict[int, CellCompiler] = {}


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext ppy`: compile every cell from now on; add `%ppy_explain`."""
    if id(shell) in _LOADED:
        return
    import ppy  # noqa: F401  (the compiler registers itself; .ppy modules import)

    compiler = CellCompiler(shell)
    _LOADED[id(shell)] = compiler
    shell.ast_transformers.append(compiler)
    shell.user_ns[RUN] = _runner(shell.user_ns)
    shell.user_ns_hidden[RUN] = shell.user_ns[RUN]

    def ppy_explain(line: str = "") -> None:
        """Show what each site of the last compiled cell compiled to, and why not."""
        if compiler.last is None:
            print("ppy: no cell has been compiled yet")
            return
        from ppy_core.cli.commands import explain_file

        print(explain_file(str(compiler.last)))

    shell.register_magic_function(ppy_explain, "line", "ppy_explain")


def unload_ipython_extension(shell: Any) -> None:
    compiler = _LOADED.pop(id(shell), None)
    if compiler is not None and compiler in shell.ast_transformers:
        shell.ast_transformers.remove(compiler)


__all__ = ["CellCompiler", "load_ipython_extension", "unload_ipython_extension", "run_entry"]
