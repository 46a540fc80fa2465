"""The key of one top-level function's front-end result, within its module.

What the site finder makes of `def f` depends on more than f's text: the module's
imports, classes and names bound once (typed before any function), how often each
module name is bound anywhere (a local `SCALE = 3` in another function makes the
module's `SCALE` no constant; a name bound twice is no helper a typed loop may
inline), and the bodies of the module functions f names (inlined, or typed by their
annotations). So a function's key joins:

- `base`: the module key's components but its source (core, options and code ids,
  plugins' and backends' fingerprints, the project files it imports, its path);
- the module's skeleton: every top-level statement, each function's body elided and
  each statement that only runs (a call, `if __name__ == "__main__":`) reduced to
  the imports, definitions and names it holds (positions left out, so lines moving
  elsewhere change nothing);
- the module-wide binding count of each name the skeleton binds;
- f itself and every top-level function it names, transitively: each as the text
  of its lines, decorators included, and its first line relative to f's (the text of
  a function's lines is its AST, positions and all, but for where it starts). "It
  names" is read from that text (every identifier, in strings and attributes too):
  more names than the AST's, never fewer.

An edit to one function's body changes its own key and those of the functions that
name it; nothing else. Lines inserted or deleted above a function change no key
but those of functions whose closure they split: the record keeps the first line it
was made at (`first`), and a record reused elsewhere has its line numbers moved by
the difference (`function_rebase`): remarks, diagnostics and tracebacks carry the
lines of the source built.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import re
from collections.abc import Mapping

from ppy_core.compiler.frontend.bound import binding_counts

#: bump when what a function's record holds, or what its key covers, changes
FORMAT = 5


class FunctionKeys:
    """Keys of a parsed module's top-level functions (computed once per module)."""

    def __init__(self, tree: ast.Module, text: str, base: Mapping[str, str]) -> None:
        self.lines = text.split("\n")  # as `read_source` decodes it: newlines are "\n"
        self.functions: dict[str, list[ast.FunctionDef]] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef):
                self.functions.setdefault(stmt.name, []).append(stmt)
        elided = (_elided(s) for s in tree.body)
        skeleton = ast.Module(body=[s for s in elided if s is not None], type_ignores=[])
        counts = binding_counts(tree)
        run_only = ast.Module([st for st in tree.body if isinstance(st, _RUN_ONLY)], [])
        bound = sorted({*binding_counts(skeleton), *binding_counts(run_only)})
        context = {
            "format": FORMAT,
            "base": sorted((k, v) for k, v in base.items() if k != "source"),
            "skeleton": ast.dump(skeleton),
            "counts": [(name, counts[name]) for name in bound],
        }
        self.context = _sha(repr(context))
        self._texts: dict[int, str] = {}

    def key(self, func: ast.FunctionDef) -> str:
        """The key of `func`, a top-level function of the module keyed."""
        parts = [self.context]
        start = self.first(func)
        for other in self.closure(func):  # where each starts, relative to func: a shift
            parts.append(f"{self.first(other) - start}:{self._text(other)}")  # moves all
        return _sha("\n".join(parts))

    @staticmethod
    def first(func: ast.FunctionDef) -> int:
        """The first line of `func`, its decorators included."""
        return min([d.lineno for d in func.decorator_list] + [func.lineno])

    def closure(self, func: ast.FunctionDef) -> list[ast.FunctionDef]:
        """`func`, then every top-level function it names, transitively (in the order
        found: a name read first comes first)."""
        seen: dict[int, ast.FunctionDef] = {id(func): func}
        queue = [func]
        while queue:
            current = queue.pop(0)
            for name in _IDENTIFIER.findall(self._text(current)):
                for other in self.functions.get(name, ()):
                    if id(other) not in seen:
                        seen[id(other)] = other
                        queue.append(other)
        return list(seen.values())

    def _text(self, func: ast.FunctionDef) -> str:
        """`func` as its column and its lines (decorators included), wherever it starts."""
        known = self._texts.get(id(func))
        if known is None:
            first = self.first(func)
            last = func.end_lineno or func.lineno
            body = "\n".join(self.lines[first - 1 : last])
            known = self._texts[id(func)] = f"{func.col_offset}:{body}"
        return known


#: top-level statements whose code no function's typing reads: only what they import,
#: define and bind does (`project.scope` takes imports out of `if` and `try`; every
#: name's binding count is keyed apart)
_RUN_ONLY = (ast.Expr, ast.If, ast.For, ast.While, ast.With, ast.Try, ast.Match)
_DECLARING = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _elided(stmt: ast.stmt) -> ast.stmt | None:
    """A top-level statement as the functions' typing may depend on it: a function
    as its signature and decorators (`...` for a body); a statement that only runs
    (`if __name__ == "__main__":`, a call) as the imports, definitions and names it
    holds, in its place (None when it holds none), so editing what it does changes no
    function's key; any other as it is."""
    if isinstance(stmt, ast.FunctionDef):
        head = copy.copy(stmt)  # every field as it is (those of later Pythons too)
        head.body = [ast.Expr(ast.Constant(...))]
        return head
    if isinstance(stmt, _RUN_ONLY):
        inner = [n for n in ast.walk(stmt) if isinstance(n, _DECLARING)]
        bound = sorted(binding_counts(ast.Module(body=[stmt], type_ignores=[])))
        if not inner and not bound:
            return None
        return ast.Expr(ast.Tuple([*map(_declared, inner), *map(ast.Constant, bound)], ast.Load()))
    return stmt


def _declared(node: ast.AST) -> ast.expr:
    return ast.Constant(ast.dump(node))


#: an identifier (Python's are letters, digits and underscores, not starting with a digit;
#: `\w` also matches a leading digit: a superset, which only names more functions)
_IDENTIFIER = re.compile(r"\w+")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


__all__ = ["FORMAT", "FunctionKeys"]
