"""Lines written as fallbacks: inside a `try` whose handlers catch the error the line
would raise, or under a test of the Python version, the platform or `TYPE_CHECKING`
(a branch that may not run here). The checker reports nothing on them."""

from __future__ import annotations

import ast
import re

#: what a test of the Python version or platform mentions (`six.PY2`, `PY_3`, `IS_PY3K`)
VERSION_MARKERS = re.compile(
    r"PY_?[23]|PYTHON_?[23]|py3k|version|platform|os\.name"
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


def guarded(node: ast.AST, errors: frozenset[str], handlers: bool = False) -> bool:
    """Whether a fallback guards `node` against `errors` (its parents are linked, as
    `check.flatten` does): it is in the body of a `try` whose handlers catch
    one of them, or, with `handlers`, in such a handler (`except ImportError: from
    fractions import gcd` runs only where the first import failed), or in a branch of
    a test of the version or platform."""
    child, parent = node, getattr(node, "_ppy_parent", None)
    while parent is not None:
        if isinstance(parent, ast.Try | getattr(ast, "TryStar", ast.Try)):
            if any(child is s for s in parent.body) and any(
                catches(h.type, errors) for h in parent.handlers
            ):
                return True
            if handlers and isinstance(child, ast.ExceptHandler) and catches(child.type, errors):
                return True
        elif (
            isinstance(parent, ast.If | ast.IfExp)
            and child is not parent.test
            and version_test(parent.test)
        ):
            return True
        child, parent = parent, getattr(parent, "_ppy_parent", None)
    return False


__all__ = ["VERSION_MARKERS", "catches", "guarded", "version_test"]
