"""Typed loops: `np.flip` of a vector view, and the update that reads one (durbin).

The mixin of `loops.LoopsBuilder`. `np.flip(r[:k])` is the view reversed, a
negative stride: as an operand of `np.dot` / `@` it is view kind "r" of `loops.dot`
(NumPy copies such a view contiguous before its BLAS call, or takes its plain loop
for `@`; `ppy_llvm._loops_blas` does the same and its per-build proof covers
negative strides). `V op= s * np.flip(W)` (also `np.flip(W) * s`, or `np.flip(W)`
alone) is one `loops.flip_update`: NumPy makes the temporary first, so W may be V
itself and the update reads W's old values.

Where NumPy's answer depends on what the function does not model (W's length
differing from V's, or broadcasting; two different NaNs meeting in one operation,
whose pick NumPy's inner loop makes) the call reruns as Python from its start. That
is exact only if nothing the caller sees was written, so such an update compiles
only in a function that writes no array but the ones it makes up front
(`loops_locals`): durbin writes only its `y = np.empty_like(r)`.
"""

from __future__ import annotations

import ast
from typing import Any

from ppy_core.compiler.frontend.loops_expr import (
    EXACT_FLOAT_INT,
    Param,
    Refused,
    _cannot_raise,
    subscript_chain,
)
from ppy_core.ir.core import Value
from ppy_core.ir.dialects import loops as L

_UPDATES = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv"}


class FlipViews:
    """`np.flip` views; mixed into LoopsBuilder (which supplies `_view`, `emit`, ...)."""

    typer: Any
    arrays: dict[str, Param]
    args: dict[str, Value]
    func: ast.FunctionDef
    locals: Any
    writes: set[str]
    _view: Any
    _number: Any
    local_view: Any
    is_view: Any
    cast: Any
    const: Any
    emit: Any

    def flipped(self, node: ast.expr) -> ast.expr | None:
        """W for `np.flip(W)` (no axis), else None."""
        if (
            isinstance(node, ast.Call)
            and len(node.args) == 1
            and not node.keywords
            and self.typer.qualname(node.func) == "numpy.flip"
        ):
            return node.args[0]
        return None

    def vector_view(
        self, node: ast.expr, assigned: set[str], raising: bool
    ) -> tuple[Param, str, list[Value]]:
        """`_view`'s vector view, a named one (`loops_gather`), or `np.flip` of one:
        its slice "r" (reversed)."""
        named = self.local_view(node)
        if named is not None:
            return named  # type: ignore[no-any-return]
        inner = self.flipped(node)
        if inner is None:
            return self._view(node, assigned, raising=raising)  # type: ignore[no-any-return]
        array, view, values = self._view(inner, assigned, raising=raising)
        return array, view.replace("s", "r"), values

    def flip_update(self, stmt: ast.AugAssign, assigned: set[str]) -> bool:
        """`V op= s * np.flip(W)` as one `loops.flip_update`; False when the right
        side holds no `np.flip` (another statement kind's business)."""
        calls = [n for n in ast.walk(stmt.value) if self.flipped(n) is not None]  # type: ignore[arg-type]
        if not calls or not self.is_view(stmt.target):  # `s += np.dot(np.flip(u), v)`
            return False
        where = f"line {stmt.lineno}: `{ast.unparse(stmt).splitlines()[0]}`"
        op = _UPDATES.get(type(stmt.op))
        form, scale_node, flip = _form(stmt.value, calls[0])
        if op is None or form is None or len(calls) != 1:
            raise Refused(
                stmt, f"{where}: an update by np.flip compiles as V op= s * np.flip(W), op + - * /"
            )
        self._rerunnable(stmt, where)
        target, target_view, target_bounds = self._view(stmt.target, assigned, raising=True)
        indexed = "i" in target_view or _indexes(flip)
        if scale_node is not None and indexed and not _cannot_raise(scale_node):
            # Python checks a view's index before or after it evaluates s: keep that
            # order only where s cannot raise
            raise Refused(stmt, f"{where}: the scale beside an indexed view may raise")
        scale, source = None, None
        if form == "left":
            scale = self._scale(scale_node, assigned, where)
        source, source_view, source_bounds = self._view(
            self.flipped(flip), assigned, raising="i" not in target_view
        )
        if form == "right":
            scale = self._scale(scale_node, assigned, where)
        if scale is None:  # `V op= np.flip(W)`: the operand is unused
            scale = self.const(1.0, "float")
        self.writes.add(target.name)
        views = (target_view, source_view.replace("s", "r"))
        self.emit(
            L.FlipUpdateOp,
            [
                self.args[target.name],
                self.args[source.name],
                scale.value,
                *target_bounds,
                *source_bounds,
            ],
            op=op,
            form=form,
            views=views,
        )
        return True

    def _scale(self, node: ast.expr | None, assigned: set[str], where: str) -> Any:
        value = self._number(node, assigned)
        if value.py not in ("float", "f64", "fnum", "int") or (
            value.py == "int" and value.bound > EXACT_FLOAT_INT
        ):
            raise Refused(node, f"{where}: the scale is a {value.py}, not a float")
        return self.cast(value, "float")

    def _rerunnable(self, stmt: ast.stmt, where: str) -> None:
        """Refuse unless every array the function writes is one it makes up front."""
        made = {p.name for p in self.locals.params}
        for node in ast.walk(self.func):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                base = subscript_chain(target)[0] if isinstance(target, ast.Subscript) else target
                if isinstance(base, ast.Name) and base.id in self.arrays and base.id not in made:
                    raise Refused(
                        stmt,
                        f"{where}: the function also writes its parameter `{base.id}`; an "
                        "update by np.flip compiles only where every array written is made "
                        "in the function (its rare cases rerun the call as Python)",
                    )


def _form(value: ast.expr, call: ast.expr) -> tuple[str | None, ast.expr | None, ast.expr]:
    """("left", s, flip) for `s * flip`, ("right", s, flip) for `flip * s`, ("none",
    None, flip) for `flip` alone; (None, None, call) otherwise."""
    if value is call:
        return "none", None, call
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        if value.right is call:
            return "left", value.left, call
        if value.left is call:
            return "right", value.right, call
    return None, None, call


def _indexes(flip: ast.expr) -> bool:
    """Whether the flipped view gives an integer index (its check may raise)."""
    inner = flip.args[0] if isinstance(flip, ast.Call) and flip.args else flip
    if not isinstance(inner, ast.Subscript):
        return False
    items = [item for level in subscript_chain(inner)[1] for item in level]
    return any(not isinstance(item, ast.Slice) for item in items)


__all__ = ["FlipViews"]
