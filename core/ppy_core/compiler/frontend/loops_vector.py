"""Typed loops: array statements `V op= E` and `V = E` inside loops (`loops.vector`).

V is a float64 vector view of an array (`C[i, :i + 1]`, `Q[:, k]`), E an
elementwise expression of + - * / and unary - over vector views (or whole 1-D
arrays) and scalars, holding at least one operation on a view, or for `V = E` a lone scalar
(a fill: adi's `v[0, 1:N - 1] = 1.0`) or a lone view (a copy,
`q[1:N - 1, 0] = v[0, 1:N - 1]`): syrk's
`C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]`, seidel_2d's sum of seven row
views, gramschmidt's `Q[:, k] = A[:, k] / R[k, k]`. Python's order is kept: the
scalar parts are evaluated where Python evaluates them (`alpha * A[i, k]` first,
as a scalar), each view's index is checked where Python takes the view
(`loops.index_check`), and NumPy's one ufunc call per operation is what the
backend reproduces, NaN rule, warnings, broadcasting and errors included.

Where Python raises after NumPy has computed a temporary (a view's IndexError,
an element's, a broadcast error), the statement makes the check at that point
itself (`late` views, `loads`), so the warnings of what came before are given.

Refused by name (the function stays Python): an operation NumPy may run through
its temporary elision with the operands swapped (`A[i, :] + (B[i, :] * s)`:
a view on the left of a temporary, for + and *), any other scalar that may raise
after an operation, a view with a step, a lone view on the right of an update
(`V += W`: NumPy's overlap copy decides its NaN rule), and anything that is not
float64.
"""

from __future__ import annotations

import ast
from typing import Any

from ppy_core.compiler.frontend.loops_expr import (
    EXACT_FLOAT_INT,
    Refused,
    _cannot_raise,
    subscript_chain,
)
from ppy_core.ir.core import Value
from ppy_core.ir.dialects import loops_vector as LV

_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv"}


class _Tree:
    """What one statement's E collects while it is built, in Python's order."""

    def __init__(self) -> None:
        self.target: tuple[Value, str, list[Value]] | None = None
        self.arrays: list[Value] = []  # one per view of E, in Python's order
        self.views: list[str] = []
        self.bounds: list[Value] = []
        self.scalars: list[Value] = []
        self.tokens: list[str] = []
        self.loads: list[Value] = []  # each element read inside the statement: array, indices
        self.ranks: list[int] = []
        self.late: list[int] = []  # the views whose index checks the statement makes
        self.computed = False  # an operation is behind: NumPy has computed a temporary


class VectorStatements:
    """Array statements; mixed into LoopsBuilder (which supplies emit, expr, ...)."""

    arrays: dict[str, Any]
    args: dict[str, Value]
    writes: set[str]
    emit: Any
    is_view: Any
    _view: Any
    _number: Any
    cast: Any

    def vector_statement(self, stmt: ast.stmt, assigned: set[str]) -> bool:
        """Build `stmt` if it is an array statement (False: not one)."""
        if isinstance(stmt, ast.AugAssign):
            target, value, op = stmt.target, stmt.value, _OPS.get(type(stmt.op))
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value, op = stmt.targets[0], stmt.value, "set"
        else:
            return False
        # a view, or a 1-D array updated whole (`x += y * s`; `x = E` only rebinds x)
        whole = isinstance(stmt, ast.AugAssign) and isinstance(target, ast.Name)
        whole = whole or self.filled(target)  # `x = E` into x made for it (loops_flat)
        if not ((isinstance(target, ast.Subscript) or whole) and self.is_view(target)):
            return False
        # `V = s` fills the view (adi's `v[0, 1:N - 1] = 1.0`); `V op= s` is `inplace`'s
        fill = op == "set" and isinstance(target, ast.Subscript)
        if not (self._holds_view(value) or fill):
            return False
        where = f"line {stmt.lineno}: `{ast.unparse(stmt).splitlines()[0]}`"
        if op is None:
            raise Refused(stmt, f"{where}: only = += -= *= /= of array expressions compile")
        # `V = W` copies W's bytes (read whole first where they overlap, as NumPy's copy
        # does); `V op= W` would hand W itself to the in-place ufunc, whose NaN rule
        # depends on whether NumPy copied it
        copy = op == "set" and self.is_view(value)
        if not (isinstance(value, ast.BinOp | ast.UnaryOp) or copy or not self._holds_view(value)):
            raise Refused(
                stmt,
                f"{where}: a lone view on the right (NumPy copies it where it overlaps "
                "the target) does not compile yet",
            )
        tree = _Tree()
        if op != "set":  # Python takes the target's view before it evaluates E
            self._leaf_view(target, tree, assigned, target=True)
        self._tree(value, tree, assigned, where)
        if op == "set":  # `V = E`: E first, then the view it is copied into
            self._leaf_view(target, tree, assigned, target=True)
        base = subscript_chain(target)[0] if isinstance(target, ast.Subscript) else target
        self.writes.add(base.id)  # type: ignore[attr-defined]
        array, view, bounds = tree.target  # type: ignore[misc]
        self.flat_only((view, *tree.views), where, stmt)
        operands = [array, *tree.arrays, *bounds, *tree.bounds, *tree.scalars, *tree.loads]
        self.emit(
            LV.VectorOp,
            operands,
            op=op,
            views=(view, *tree.views),
            tree=tuple(tree.tokens),
            loads=tuple(tree.ranks),
            late=tuple(tree.late),
        )
        return True

    def _holds_view(self, node: ast.expr) -> bool:
        """Whether the expression reads a view or an array whole (not only elements),
        outside calls (`np.dot(u, v) * y[:j]`: the call is a scalar operand)."""
        nodes = list(_outside_calls(node))
        indexed = {id(n.value) for n in nodes if isinstance(n, ast.Subscript)}
        return any(
            self.is_view(n)
            for n in nodes
            if isinstance(n, ast.Name | ast.Subscript) and id(n) not in indexed
        )

    def _tree(self, node: ast.expr, tree: _Tree, assigned: set[str], where: str) -> str:
        """Append `node` to the tree; its kind: "view", "temp" or "scalar"."""
        if not self._holds_view(node):
            if tree.computed and not _cannot_raise(node):
                # Python raises here after NumPy computed (and warned about) a temporary:
                # the statement makes the check itself, in its order
                self._late_load(node, tree, assigned, where)
                return "scalar"
            t = self._number(node, assigned)
            if t.py not in ("float", "f64", "fnum", "int") or (
                t.py == "int" and t.bound > EXACT_FLOAT_INT
            ):
                raise Refused(node, f"{where}: `{ast.unparse(node)}` is a {t.py}, not a float")
            tree.tokens.append(f"s{len(tree.scalars)}")
            tree.scalars.append(self.cast(t, "float").value)
            return "scalar"
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            op = _OPS[type(node.op)]
            left = self._tree(node.left, tree, assigned, where)
            right = self._tree(node.right, tree, assigned, where)
            if op in ("add", "mul") and left == "view" and right == "temp":
                # NumPy's temporary elision would run it as np.op(temp, view, out=temp)
                raise Refused(
                    node,
                    f"{where}: `{ast.unparse(node)}`: a view on the left of an array "
                    "temporary (NumPy may swap them); write the temporary first",
                )
            tree.computed = True
            tree.tokens.append(op)
            return "temp"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            # np.negative of a view or a temporary: a fresh temporary, a sign flip
            self._tree(node.operand, tree, assigned, where)
            tree.computed = True
            tree.tokens.append("neg")
            return "temp"
        if self.is_view(node):
            self._leaf_view(node, tree, assigned, target=False)
            tree.tokens.append(f"v{len(tree.views)}")  # view 0 is the target
            return "view"
        raise Refused(
            node, f"{where}: `{ast.unparse(node)}` does not compile in an array statement"
        )

    def _late_load(self, node: ast.expr, tree: _Tree, assigned: set[str], where: str) -> None:
        """An element `X[i, j]` read after an operation: checked and read by the statement."""
        base, levels = subscript_chain(node) if isinstance(node, ast.Subscript) else (None, [])
        items = [item for level in levels for item in level]
        array = self.arrays.get(base.id) if isinstance(base, ast.Name) else None
        if (
            array is None
            or len(levels) != 1
            or array.tensor.element.kind != "f64"
            or len(items) != len(array.tensor.shape)
            or not all(_cannot_raise(i) and not isinstance(i, ast.Slice) for i in items)
        ):
            raise Refused(
                node,
                f"{where}: `{ast.unparse(node)}` may raise after an operation NumPy has "
                "computed (its warnings would come first): compute it before the statement",
            )
        tree.tokens.append(f"e{len(tree.ranks)}")
        tree.ranks.append(len(items))
        tree.loads.append(self.args[array.name])
        tree.loads.extend(self.integer(i, assigned).value for i in items)

    def _leaf_view(self, node: ast.expr, tree: _Tree, assigned: set[str], target: bool) -> None:
        """A vector view: its bounds evaluated here; its index checks made here, or by
        the statement where an operation comes before it (`late`)."""
        late = tree.computed
        base = subscript_chain(node)[0] if isinstance(node, ast.Subscript) else node
        if isinstance(base, ast.Name) and base.id in self.arrays:
            kind = self.arrays[base.id].tensor.element.kind
            if kind != "f64":
                raise Refused(
                    node,
                    f"line {node.lineno}: `{ast.unparse(node)}`: array statements compile "
                    f"only over float64 arrays, not {kind}",
                )
        flat = self.flat_view(node)  # a whole array of rank 2 or more (loops_flat)
        array, view, bounds = flat or self._view(node, assigned, raising=not late)
        if late:
            tree.late.append(0 if target else len(tree.views) + 1)
        values = iter(bounds)
        for axis, how in enumerate(view):
            if how == "i":
                index = next(values)
                if not late:
                    self.emit(LV.IndexCheckOp, [self.args[array.name], index], axis=axis)
            elif how == "s":
                next(values)
                next(values)
        if target:
            tree.target = (self.args[array.name], view, bounds)
        else:
            tree.arrays.append(self.args[array.name])
            tree.views.append(view)
            tree.bounds.extend(bounds)


def _outside_calls(node: ast.expr) -> Any:
    """The nodes of `node` that are not inside a call (a call is itself yielded)."""
    yield node
    if not isinstance(node, ast.Call):
        for child in ast.iter_child_nodes(node):
            yield from _outside_calls(child)  # type: ignore[arg-type]


__all__ = ["VectorStatements"]
