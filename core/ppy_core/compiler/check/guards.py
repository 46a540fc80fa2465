"""Lines written as fallbacks: inside a `try` whose handlers catch the error the line
would raise, or under a test of the Python version, the platform or `TYPE_CHECKING`
(a branch that may not run here). The checker reports nothing on them."""

from __future__ import annotations

import ast
import re

#: what a test of the Python version or platform mentions (`six.PY2`, `PY_3`, `IS_PY3K`)
VERSION_MARKERS = re.compile(
    r"PY_?[23]|PYTHON_?[23]|py3k|version_info|hexversion|sys\.version|platform|os\.name"
    r"|TYPE_CHECKING|IS_PY|WIN|win32|IS_PYPY|JYTHON"
)
#: handlers that catch every error a line can raise
_EVERYTHING = frozenset({"Exception", "BaseException"})


def version_test(test: ast.expr) -> bool:
    return VERSION_MARKERS.search(ast.unparse(test)) is not None


def catches(kind: ast.expr | None, errors: frozenset[str]) -> bool:
    """Whether a handler of `kind` (None: bare `except:`) catches one of `errors`."""
    if kind is None:
        return True
    kinds = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    wanted = errors | _EVERYTHING
    return any(
        (isinstance(k, ast.Name) and k.id in wanted)
        or (isinstance(k, ast.Attribute) and k.attr in wanted)
        for k in kinds
    )


def guarded(tree: ast.AST, errors: frozenset[str], handlers: bool = False) -> set[int]:
    """ids of the nodes a fallback guards against `errors`; with `handlers`, the
    bodies of the handlers that catch them too (`except ImportError: from
    fractions import gcd` runs only where the first import failed)."""
    found: set[int] = set()

    def visit(node: ast.AST, inside: bool) -> None:
        if inside:
            found.add(id(node))
        if isinstance(node, ast.Try | getattr(ast, "TryStar", ast.Try)):
            caught = inside or any(catches(h.type, errors) for h in node.handlers)
            for child in node.body:
                visit(child, caught)
            for handler in node.handlers:
                visit(handler, inside or (handlers and catches(handler.type, errors)))
            for child in [*node.orelse, *node.finalbody]:
                visit(child, inside)
            return
        if isinstance(node, ast.If | ast.IfExp) and version_test(node.test):
            visit(node.test, inside)
            branches = [node.body, node.orelse]
            for branch in branches:
                for child in branch if isinstance(branch, list) else [branch]:
                    visit(child, True)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(tree, False)
    return found


__all__ = ["VERSION_MARKERS", "catches", "guarded", "version_test"]
