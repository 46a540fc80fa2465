"""Typed loops: `X[:] = np.minimum(X, np.add.outer(u, v))` as one fused 2-D loop.

The mixin of `loops.LoopsBuilder`; NPBench's floyd_warshall is
`path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))`. X is a 2-D
int32, int64 or float64 array parameter (written whole, `X[:]` or `X[:, :]`; read
as `X`, `X[:]` or `X[:, :]`), u and v whole vector views (`A[:, k]`, `B[k, :]`, `x`) of
arrays of X's dtype; `np.maximum` as well. NumPy makes `np.add.outer(u, v)` in full,
then the minimum, then copies it into X: so the loop reads u and v as they were
before the statement (a copy of each first: they may be a row and a column of X
itself), and every element of X once. Integer addition wraps as NumPy's does,
silently; `np.minimum` of ints is exact. A u or v whose length is not X's, which
NumPy would broadcast or refuse, makes the call run as Python before anything runs
(their lengths are the arrays' own dims, known on entry).

float64: which NaN, and which of 0.0 and -0.0, `np.minimum` returns depends on the
inner loop NumPy takes (its SIMD loops and its scalar one differ). The function
copies X on entry; where such a case (or an overflow's warning) arises, X is
restored and the call runs as Python (`ppy_llvm._loops_outer`). So X must be the
only array the function writes.
"""

from __future__ import annotations

import ast
from typing import Any

from ppy_core.compiler.frontend.loops_expr import Param, Refused, subscript_chain
from ppy_core.ir.core import Value
from ppy_core.ir.dialects import loops as L

_FNS = {"numpy.minimum": "minimum", "numpy.maximum": "maximum"}
_INTS = ("i32", "i64")


class OuterStatements:
    """`X[:] = np.minimum(X, np.add.outer(u, v))`; mixed into LoopsBuilder."""

    func: ast.FunctionDef
    typer: Any
    arrays: dict[str, Param]
    args: dict[str, Value]
    writes: set[str]
    const: Any
    integer: Any
    _dim: Any
    emit: Any

    def outer_update(self, stmt: ast.Assign, assigned: set[str]) -> bool:
        """One `loops.outer_update`; False when the right side is no np.minimum /
        np.maximum call (another statement kind's business)."""
        value = stmt.value
        fn = (
            _FNS.get(self.typer.qualname(value.func) or "") if isinstance(value, ast.Call) else None
        )
        if fn is None or len(stmt.targets) != 1:
            return False
        where = f"line {stmt.lineno}: `{ast.unparse(stmt).splitlines()[0]}`"
        # `X[:] = ...` writes X; `X = ...` would rebind the name (refused below)
        target = _whole(stmt.targets[0]) if isinstance(stmt.targets[0], ast.Subscript) else None
        assert isinstance(value, ast.Call)
        outer = value.args[1] if len(value.args) == 2 else None
        if (
            target is None
            or target not in self.arrays
            or value.keywords
            or outer is None
            or _whole(value.args[0]) != target
            or not isinstance(outer, ast.Call)
            or self.typer.qualname(outer.func) != "numpy.add.outer"
            or len(outer.args) != 2
            or outer.keywords
        ):
            raise Refused(
                stmt,
                f"{where}: an np.{fn} statement compiles as X[:] = np.{fn}(X, "
                "np.add.outer(u, v)), X a 2-D array parameter",
            )
        array = self.arrays[target]
        kind = array.tensor.element.kind  # type: ignore[union-attr]
        if kind not in (*_INTS, "f64") or len(array.tensor.shape) != 2:  # type: ignore[union-attr]
            raise Refused(stmt, f"{where}: only of 2-D int32, int64 or float64 arrays")
        others = _written(self.func, set(self.arrays)) - {target}
        if kind == "f64" and others:
            raise Refused(
                stmt,
                f"{where}: the function also writes `{sorted(others)[0]}`; a float64 "
                f"np.{fn} statement compiles only where X is the one array written (its "
                "cases NumPy's loop decides restore X and run the call as Python)",
            )
        views, bounds, sources = [], [], []
        for operand in outer.args:
            source, view, values = self._whole_view(operand, assigned, kind, where)
            views.append(view)
            bounds.extend(values)
            sources.append(self.args[source.name])
        self.writes.add(target)
        self.emit(
            L.OuterUpdateOp,
            [self.args[target], *sources, *bounds],
            fn=fn,
            views=tuple(views),
        )
        return True

    def implied_rank(self, name: str) -> int | None:
        """2 for an array the function uses only whole, as such a statement's X
        (`path[:] = np.minimum(path[:], ...)` says nothing else of its rank)."""
        for node in ast.walk(self.func):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Subscript)
                and _whole(node.targets[0]) == name
                and isinstance(node.value, ast.Call)
                and _FNS.get(self.typer.qualname(node.value.func) or "")
            ):
                return 2
        return None

    def _whole_view(
        self, node: ast.expr, assigned: set[str], kind: str, where: str
    ) -> tuple[Param, str, list[Value]]:
        """A vector view whose slice is whole (`A[:, k]`), of an array of `kind`."""
        base, levels = subscript_chain(node) if isinstance(node, ast.Subscript) else (node, [])
        items = [item for level in levels for item in level]
        if not (isinstance(base, ast.Name) and base.id in self.arrays):
            raise Refused(node, f"{where}: np.add.outer of array parameters' views only")
        if self.arrays[base.id].tensor.element.kind != kind:  # type: ignore[union-attr]
            raise Refused(node, f"{where}: np.add.outer of arrays of another dtype")
        if any(isinstance(item, ast.Slice) and not _bare(item) for item in items):
            raise Refused(node, f"{where}: np.add.outer of whole rows and columns (`A[:, k]`)")
        rank = len(self.arrays[base.id].tensor.shape)  # type: ignore[union-attr,arg-type]
        if not levels:
            items = [ast.Slice()] * rank  # the array itself
        if len(levels) > 1 or len(items) != rank or sum(map(_bare, items)) != 1:
            raise Refused(node, f"{where}: a vector view gives every axis, one of them `:`")
        view, values = "", []
        for axis, item in enumerate(items):  # Python's order: each index, left to right
            if _bare(item):
                view += "s"
                values += [self.const(0, "int").value, self._dim(node, base, axis).value]
            else:
                view += "i"
                values.append(self.integer(item, assigned).value)
        return self.arrays[base.id], view, values


def _written(func: ast.FunctionDef, arrays: set[str]) -> set[str]:
    """The arrays of `arrays` that `func` assigns to or updates (whole or in part)."""
    out = set()
    for node in ast.walk(func):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            base = subscript_chain(target)[0] if isinstance(target, ast.Subscript) else target
            if isinstance(base, ast.Name) and base.id in arrays:
                out.add(base.id)
    return out


def _bare(item: ast.expr) -> bool:
    return isinstance(item, ast.Slice) and item.lower is item.upper is item.step is None


def _whole(node: ast.expr) -> str | None:
    """X for `X`, `X[:]`, `X[:, :]`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if all(_bare(item) for item in items):
            return node.value.id
    return None


def whole_subscript(node: ast.Subscript) -> bool:
    """`X[:]`, `X[:, :]`: a subscript that says nothing of X's rank."""
    return _whole(node) is not None


__all__ = ["OuterStatements", "whole_subscript"]
