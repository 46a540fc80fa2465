"""The key of one top-level function's front-end result, within its module.

What the site finder makes of `def f` depends on more than f's text: the module's
imports, classes and names bound once (typed before any function), how often each
module name is bound anywhere (a local `SCALE = 3` in another function makes the
module's `SCALE` no constant; a name bound twice is no helper a typed loop may
inline), and the bodies of the module functions f names (inlined, or typed by their
annotations). So a function's key joins:

- `base`: the module key's components but its source (core, options and code ids,
  plugins' and backends' fingerprints, the project files it imports, its path);
- the module's skeleton: every top-level statement, each function's body elided
  (positions left out, so lines moving elsewhere change nothing);
- the module-wide binding count of each name the skeleton binds;
- f itself and every top-level function it names, transitively: each as its first
  line and the text of its lines, decorators included (remarks and diagnostics carry
  line numbers; the text of a function's lines is its AST, positions and all). "It
  names" is read from that text (every identifier, in strings and attributes too):
  more names than the AST's, never fewer.

An edit to one function's body changes its own key and those of the functions that
name it; nothing else.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import re
from collections.abc import Mapping

from ppy_core.compiler.frontend.bound import binding_counts

#: bump when what a function's record holds, or what its key covers, changes
FORMAT = 3


class FunctionKeys:
    """Keys of a parsed module's top-level functions (computed once per module)."""

    def __init__(self, tree: ast.Module, text: str, base: Mapping[str, str]) -> None:
        self.lines = text.split("\n")  # as `read_source` decodes it: newlines are "\n"
        self.functions: dict[str, list[ast.FunctionDef]] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef):
                self.functions.setdefault(stmt.name, []).append(stmt)
        skeleton = ast.Module(body=[_elided(s) for s in tree.body], type_ignores=[])
        counts = binding_counts(tree)
        bound = sorted(binding_counts(skeleton))
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
        for other in self.closure(func):
            parts.append(self._text(other))
        return _sha("\n".join(parts))

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
        """`func` as its first line's number and its lines (decorators included)."""
        known = self._texts.get(id(func))
        if known is None:
            first = min([d.lineno for d in func.decorator_list] + [func.lineno])
            last = func.end_lineno or func.lineno
            body = "\n".join(self.lines[first - 1 : last])
            known = self._texts[id(func)] = f"{first}:{func.col_offset}:{body}"
        return known


def _elided(stmt: ast.stmt) -> ast.stmt:
    """A top-level function as its signature and decorators alone (`...` for a body)."""
    if not isinstance(stmt, ast.FunctionDef):
        return stmt
    head = copy.copy(stmt)  # every field as it is (those of later Pythons too)
    head.body = [ast.Expr(ast.Constant(...))]
    return head


#: an identifier (Python's are letters, digits and underscores, not starting with a digit;
#: `\w` also matches a leading digit: a superset, which only names more functions)
_IDENTIFIER = re.compile(r"\w+")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


__all__ = ["FORMAT", "FunctionKeys"]
