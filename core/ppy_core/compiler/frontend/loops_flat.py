"""Typed loops: flat views, array statements over whole arrays of rank 2 and more.

deriche ends its passes with `imgOut = c1 * (y1 + y2)` and `imgOut[:] = c2 * (y1 +
y2)` over 2-D arrays. NumPy runs each operation of such a statement as one inner-loop
call over all of the arrays' elements: its iterator coalesces C-contiguous operands of
one shape into a single axis. So the statement is the 1-D array statement
(`loops_vector`) over the arrays' flat buffers, NaN rule by position in that one call
included. Its views are "flat" (`"ff"`: every axis "f", no bounds); the backend
returns "run as Python" on entry unless every array a flat statement reads or writes
is C-contiguous and all have one shape (NumPy would broadcast them, or raise).

A flat view is a name of an array of rank 2 or more, or its whole subscript (`X[:]`,
`X[:, :]`); a statement with one has only flat views, of one rank. `x = E` where x
is made up front for it (`loops_locals`' fills) is `x[:] = E`.
"""

from __future__ import annotations

import ast
from typing import Any

from ppy_core.compiler.frontend.loops_expr import Param, Refused
from ppy_core.compiler.frontend.loops_outer import whole_subscript

FLAT = "f"


def is_flat(view: str) -> bool:
    return bool(view) and set(view) == {FLAT}


class FlatViews:
    """Flat views; mixed into LoopsBuilder (which supplies arrays, locals)."""

    arrays: dict[str, Param]
    locals: Any

    def flat_view(self, node: ast.expr) -> tuple[Param, str, list[Any]] | None:
        """(array, "ff..", no bounds) where `node` is a flat view, else None."""
        base = node
        if isinstance(node, ast.Subscript) and whole_subscript(node):
            base = node.value
        if not (isinstance(base, ast.Name) and base.id in self.arrays):
            return None
        rank = len(self.arrays[base.id].tensor.shape)  # type: ignore[union-attr,arg-type]
        return (self.arrays[base.id], FLAT * rank, []) if rank >= 2 else None

    def whole_rank(self, name: str, tensor: Any) -> int | None:
        """The rank the call's signature gives an array the body uses only whole
        (never indexed: `z = c * (A + B)`), if it is 2 or more: its flat views'."""
        func: ast.FunctionDef = self.func  # type: ignore[attr-defined]
        if tensor.shape is None or len(tensor.shape) < 2:
            return None
        for node in ast.walk(func):
            # indexed (not whole), or an attribute (`B.shape[0]` asks for its axes)
            if not (
                isinstance(node, ast.Subscript | ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == name
            ):
                continue
            if isinstance(node, ast.Attribute) or not whole_subscript(node):
                return None
        return len(tensor.shape)

    def filled(self, target: ast.expr) -> bool:
        """`x = E` fills x, an array made up front for it."""
        return isinstance(target, ast.Name) and target.id in self.locals.filled

    def flat_only(self, views: tuple[str, ...], where: str, node: ast.AST) -> None:
        """A statement's views are all flat, of one rank, or none is."""
        flat = [v for v in views if is_flat(v)]
        if flat and (len(flat) != len(views) or len(set(flat)) != 1):
            raise Refused(
                node,
                f"{where}: whole arrays of rank 2 and more compile only beside whole "
                "arrays of their rank (NumPy would broadcast them)",
            )


__all__ = ["FLAT", "FlatViews", "is_flat"]
