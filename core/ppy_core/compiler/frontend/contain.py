"""One function's failure stays that function's: the site finder's step guarded.

A bug in typing or cutting one function (or a tree too deep for the recursive
walkers, `compiler/deep.py`) must not cost the module: what the step found is
taken back, the failure is recorded in `Findings.failures`, and the driver reports
it as a warning (E9001, or E0010 for depth) while the function stays Python.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from ppy_core.diagnostics import Error
from ppy_core.interface.progress import step as progress_step


def is_internal(exc: BaseException) -> bool:
    """A compiler bug, not a coded answer to the user's code: any exception but a
    coded `Error` (whose own code says what to do), and E9001 `Error`s."""
    if isinstance(exc, Error):
        return exc.code == "E9001"
    return isinstance(exc, Exception)


def contained(finder: Any, stmt: ast.stmt, step: Callable[[ast.stmt], None]) -> None:
    """`step(stmt)` on `finder` (a SiteFinder); if it fails internally, its findings
    are undone and `(stmt, exc)` goes to `finder.found.failures`."""
    module = finder.tree
    if module is not None and module.body:  # how far the module's typing is, by line
        progress_step("typing line", stmt.lineno, module.body[-1].end_lineno or 0)
    found = finder.found
    lists = (found.expr_sites, found.function_sites, found.remarks, found.rejects)
    marks = [len(items) for items in lists]
    specializable, counter = len(found.specializable), finder._counter
    try:
        step(stmt)
    except Exception as exc:
        if not is_internal(exc):
            raise
        for items, mark in zip(lists, marks, strict=True):
            del items[mark:]
        del found.specializable[specializable:]
        finder._counter = counter
        found.failures.append((stmt, exc))


__all__ = ["contained", "is_internal"]
