"""Typed loops: names bound to slices, and `u @ x[idx]` of a gathered vector (spmv).

The mixin of `loops.LoopsBuilder`. NPBench's spmv is

    cols = A_col[A_row[i]:A_row[i + 1]]
    vals = A_val[A_row[i]:A_row[i + 1]]
    y[i] = vals @ x[cols]

*View locals.* `cols = A[lo:hi]` (A a 1-D array parameter, the slice without a step)
binds a view: its bounds are evaluated there, in Python's order, and creating it
cannot raise (slices clip). The name is assigned nowhere else, and every use comes
after it in the same statement list, as an operand of `np.dot` / `@` or as the index
of a gather: there the view reads A's elements as they are then, as NumPy's does.

*Gathers.* `x[idx]` with x a 1-D float64 array parameter and idx a 1-D view of an
int32/uint32/int64 array, as one operand of `np.dot` / `@`: NumPy makes the
temporary `x[idx]` first (each index wrapped if negative; the first out of range
raises its IndexError, before any length check), then calls its dot on two
contiguous vectors, which `loops.gather_dot` does with the same routine (NumPy's
own `ddot`, `ppy_llvm._loops_blas`, proven per build).
"""

from __future__ import annotations

import ast
from typing import Any

from ppy_core.compiler.frontend.loops_expr import FLOAT, Param, Refused, Typed, subscript_chain
from ppy_core.ir.core import Value
from ppy_core.ir.dialects import loops as L

_INDEX_KINDS = ("i32", "u32", "i64")


class GatherViews:
    """View locals and gathers; mixed into LoopsBuilder."""

    func: ast.FunctionDef
    arrays: dict[str, Param]
    args: dict[str, Value]
    typer: Any
    _view: Any
    vector_view: Any
    emit: Any

    def view_local(self, stmt: ast.Assign, assigned: set[str]) -> bool:
        """`cols = A[lo:hi]`: the view recorded under its name; False for any other
        assignment (another statement kind's business)."""
        if not (
            len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Subscript)
            and _slices(stmt.value)
        ):
            return False
        name = stmt.targets[0].id
        where = f"line {stmt.lineno}: `{ast.unparse(stmt).splitlines()[0]}`"
        base, levels = subscript_chain(stmt.value)
        if not (isinstance(base, ast.Name) and base.id in self.arrays):
            raise Refused(stmt, f"{where}: a view compiles only of an array parameter")
        items = [item for level in levels for item in level]
        rank = len(self.arrays[base.id].tensor.shape)  # type: ignore[union-attr,arg-type]
        if rank != 1 or len(items) != 1 or items[0].step is not None:  # type: ignore[attr-defined]
            raise Refused(stmt, f"{where}: a named view is a slice of a 1-D array, no step")
        _check_uses(self, stmt, name, where)
        array = self.arrays[base.id]
        lo, hi = items[0].lower, items[0].upper  # type: ignore[attr-defined]
        bounds = [
            self.integer(lo, assigned).value if lo is not None else self.const(0, "int").value,
            self.integer(hi, assigned).value if hi is not None else self._dim(base, base, 0).value,
        ]
        self.view_locals[name] = (array, "s", bounds)
        return True

    def local_view(self, node: ast.expr) -> tuple[Param, str, list[Value]] | None:
        """The recorded view a name stands for, or None."""
        if isinstance(node, ast.Name):
            return self.view_locals.get(node.id)
        return None

    def gathered(self, node: ast.expr) -> bool:
        """`x[idx]`: x a 1-D array parameter, idx a view (a view local or a slice)."""
        if not (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.arrays
        ):
            return False
        index = node.slice
        return self.local_view(index) is not None or (
            isinstance(index, ast.Subscript) and _slices(index)
        )

    def gather_dot(
        self, node: ast.expr, operands: list[ast.expr], kind: str, assigned: set[str]
    ) -> Typed:
        """`np.dot(u, x[idx])` / `u @ x[idx]` (either side): one `loops.gather_dot`."""
        where = f"line {getattr(node, 'lineno', 0)}: `{ast.unparse(node)}`"
        sides = [self.gathered(o) for o in operands]
        if all(sides):
            raise Refused(node, f"{where}: a gather on both sides does not compile yet")
        side = "left" if sides[0] else "right"
        parts: dict[str, tuple[Param, str, list[Value]]] = {}
        for operand, is_gather in zip(operands, sides, strict=True):
            raising = not any("i" in part[1] for part in parts.values())
            if is_gather:
                parts["data"], parts["index"] = self._gather(operand, assigned, raising, where)
            else:
                parts["vector"] = self.vector_view(operand, assigned, raising)
        (vector, view, bounds), (data, _, _), (index, index_view, index_bounds) = (
            parts["vector"],
            parts["data"],
            parts["index"],
        )
        out = self.emit(
            L.GatherDotOp,
            [
                self.args[vector.name],
                self.args[data.name],
                self.args[index.name],
                *bounds,
                *index_bounds,
            ],
            FLOAT,
            kind=kind,
            views=(view, index_view),
            side=side,
            py="f64",
        )
        return Typed(out.results[0], "f64")

    def _gather(
        self, node: ast.Subscript, assigned: set[str], raising: bool, where: str
    ) -> tuple[tuple[Param, str, list[Value]], tuple[Param, str, list[Value]]]:
        data = self.arrays[node.value.id]  # type: ignore[attr-defined]
        tensor = data.tensor
        if tensor.element.kind != "f64" or len(tensor.shape) != 1:  # type: ignore[union-attr,arg-type]
            raise Refused(node, f"{where}: a gather compiles from a 1-D float64 array")
        index = self.local_view(node.slice)
        if index is None:
            index = self._any_view(node.slice, assigned, raising, where)
        if index[0].tensor.element.kind not in _INDEX_KINDS:  # type: ignore[union-attr]
            raise Refused(node, f"{where}: gather indices are int32, uint32 or int64 arrays")
        return (data, "", []), index

    def _any_view(
        self, node: ast.expr, assigned: set[str], raising: bool, where: str
    ) -> tuple[Param, str, list[Value]]:
        """A 1-D slice view of an index array, inline (`x[A_col[lo:hi]]`)."""
        base, levels = subscript_chain(node)  # type: ignore[arg-type]
        items = [item for level in levels for item in level]
        if not (isinstance(base, ast.Name) and base.id in self.arrays) or len(items) != 1:
            raise Refused(node, f"{where}: a gather's index is a slice of a 1-D array")
        slice_ = items[0]
        if slice_.step is not None:  # type: ignore[attr-defined]
            raise Refused(node, f"{where}: a slice with a step does not compile yet")
        bounds = []
        for bound in (slice_.lower, slice_.upper):  # type: ignore[attr-defined]
            if bound is not None and not raising and not _plain(bound):
                raise Refused(node, f"{where}: a slice bound that may raise")
        lo, hi = slice_.lower, slice_.upper  # type: ignore[attr-defined]
        bounds.append(
            self.integer(lo, assigned).value if lo is not None else self.const(0, "int").value
        )
        bounds.append(
            self.integer(hi, assigned).value if hi is not None else self._dim(node, base, 0).value
        )
        return self.arrays[base.id], "s", bounds

    view_locals: dict[str, tuple[Param, str, list[Value]]]
    integer: Any
    const: Any
    _dim: Any


def _slices(node: ast.Subscript) -> bool:
    """Whether the subscript holds a slice."""
    items = [item for level in subscript_chain(node)[1] for item in level]
    return any(isinstance(item, ast.Slice) for item in items)


def _plain(node: ast.expr) -> bool:
    from ppy_core.compiler.frontend.loops_expr import _cannot_raise

    return _cannot_raise(node)


def _original(func: ast.FunctionDef, stmt: ast.stmt) -> ast.stmt:
    """The statement of `func` at `stmt`'s place: the builder may work on a renamed
    copy of the body (a name bound once keeps its name there)."""
    place = (type(stmt), stmt.lineno, stmt.col_offset, stmt.end_lineno, stmt.end_col_offset)
    for node in ast.walk(func):
        if isinstance(node, ast.stmt) and place == (
            type(node),
            node.lineno,
            node.col_offset,
            node.end_lineno,
            node.end_col_offset,
        ):
            return node
    return stmt


def _check_uses(builder: Any, stmt: ast.Assign, name: str, where: str) -> None:
    """The view's name is bound only here, and read only after it in the statement
    list holding it, as an operand of np.dot / @ or the index of a gather."""
    func, arrays = builder.func, builder.arrays
    stores = [
        n
        for n in ast.walk(func)
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
    ]
    if len(stores) != 1:
        raise Refused(stmt, f"{where}: a named view is bound once")
    stmt = _original(func, stmt)
    body = next(
        block
        for n in ast.walk(func)
        for block in (getattr(n, "body", None), getattr(n, "orelse", None))
        if isinstance(block, list) and any(s is stmt for s in block)
    )
    after = body[[id(s) for s in body].index(id(stmt)) + 1 :]
    allowed: set[int] = set()
    for node in (n for s in after for n in ast.walk(s)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            allowed.update(id(o) for o in (node.left, node.right))
        elif isinstance(node, ast.Call) and builder.typer.qualname(node.func) == "numpy.dot":
            allowed.update(id(o) for o in node.args)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in arrays
        ):
            allowed.add(id(node.slice))
    inside = {id(n) for s in after for n in ast.walk(s)}
    reads = [
        n
        for n in ast.walk(func)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]
    for node in reads:
        if id(node) not in inside or id(node) not in allowed:
            raise Refused(
                node,
                f"line {node.lineno}: the view `{name}` is read other than after its "
                "assignment as an operand of np.dot / @ or a gather's index",
            )


__all__ = ["GatherViews"]
