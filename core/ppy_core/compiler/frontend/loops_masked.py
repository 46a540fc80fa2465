"""Typed loops: a boolean mask, the elements it selects and their mean or sum
(azimint_naive).

The mixin of `loops.LoopsBuilder`. NPBench's azimint_naive is

    mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
    values_r12 = data[mask_r12]
    res[i] = values_r12.mean()

Three consecutive statements of one block: `m = M`, M comparisons (< <= > >= == !=) of
whole 1-D float64 arrays and numbers joined by `np.logical_and` / `&` / `np.logical_or`
/ `|`; `v = X[m]`, X a 1-D float64 array; then `t = v.mean()` / `np.mean(v)` / `v.sum()`
/ `np.sum(v)` as the whole right side. m and v are bound nowhere else and read nowhere
else, so nobody sees the mask or the copy, and the three become one
`loops.masked_reduce` at the reduction: nothing between the statements writes an operand
or rebinds a name M reads (the middle one binds v only, and a Python assignment
evaluates its right side before its target). NumPy's answers the op does not give itself
(an empty selection's mean: its "Mean of empty slice" and NaN; a sum that is inf or NaN:
its warnings, its NaN's bits; operands of lengths that differ: its broadcast or
IndexError) rerun the call as Python from its start, so the function must write no array
but those it makes up front (`FlipViews._rerunnable`).
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any

from ppy_core.compiler.frontend.bound import binding_counts
from ppy_core.compiler.frontend.loops_expr import EXACT_FLOAT_INT, Param, Refused, Typed
from ppy_core.ir.core import Value
from ppy_core.ir.dialects.loops_masked import MaskedReduceOp
from ppy_core.ir.types import ScalarType

_COMPARES = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq"}
_COMPARES[ast.NotEq] = "ne"
_LOGICAL = {"numpy.logical_and": "and", "numpy.logical_or": "or"}
_BITWISE = {ast.BitAnd: "and", ast.BitOr: "or"}
_REDUCTIONS = ("mean", "sum")


class MaskedReductions:
    """`m = M; v = X[m]; t = v.mean()`; mixed into LoopsBuilder."""

    func: ast.FunctionDef
    arrays: dict[str, Param]
    args: dict[str, Value]
    typer: Any
    emit: Any
    cast: Any
    _number: Any
    _rerunnable: Any
    _masked: dict[int, tuple[ast.Assign, ast.Assign]] | None = None  # mean call -> (m, v)
    _masked_skip: frozenset[int] = frozenset()

    def _masked_plan(self) -> dict[int, tuple[ast.Assign, ast.Assign]]:
        """The triples of the function (module docstring), keyed by the mean call."""
        if self._masked is not None:
            return self._masked
        counts = binding_counts(self.func)
        loads = Counter(
            n.id
            for n in ast.walk(self.func)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        )
        found: dict[int, tuple[ast.Assign, ast.Assign]] = {}
        skip: set[int] = set()
        for node in ast.walk(self.func):
            for field in ("body", "orelse"):
                block = getattr(node, field, None)
                if not isinstance(block, list):
                    continue
                for s0, s1, s2 in zip(block, block[1:], block[2:], strict=False):
                    call = _triple(self.typer, s0, s1, s2)
                    if call is None:
                        continue
                    m, v = _target(s0), _target(s1)
                    if counts[m] == counts[v] == 1 and loads[m] == loads[v] == 1:
                        found[id(call)] = (s0, s1)  # type: ignore[assignment]
                        skip |= {id(s0), id(s1)}
        self._masked, self._masked_skip = found, frozenset(skip)
        return found

    def masked_statement(self, stmt: ast.stmt) -> bool:
        """Whether `stmt` is a triple's mask or selection: built at its mean."""
        self._masked_plan()
        return id(stmt) in self._masked_skip

    def masked_reduce(self, node: ast.Call, assigned: set[str]) -> Typed | None:
        """`v.mean()` / `np.mean(v)` / `v.sum()` / `np.sum(v)` of a triple as one
        `loops.masked_reduce`; None for any other call."""
        pair = self._masked_plan().get(id(node))
        if pair is None:
            return None
        s0, s1 = pair
        where = f"line {s0.lineno}: `{ast.unparse(s0)}`"
        self._rerunnable(s0, where)
        data = s1.value.value  # type: ignore[attr-defined]
        names: list[str] = []
        scalars: list[Value] = []
        tree: list[str] = []

        def vector(name: str) -> str:
            self._float_vector(name, s0, where)
            if name not in names:
                names.append(name)
            return f"a{names.index(name)}"

        def leaf(x: ast.expr) -> str:
            if isinstance(x, ast.Name) and x.id in self.arrays:
                return vector(x.id)
            if not (isinstance(x, ast.Name) or (isinstance(x, ast.Constant) and _number(x))):
                raise Refused(x, f"{where}: a mask compares arrays with names or numbers")
            t = self._number(x, assigned)
            if t.py not in ("float", "f64", "fnum", "int") or (
                t.py == "int" and t.bound > EXACT_FLOAT_INT
            ):
                raise Refused(x, f"{where}: a mask compares a {t.py}, not a float")
            scalars.append(self.cast(t, "float").value)
            return f"s{len(scalars) - 1}"

        def walk(x: ast.expr) -> None:
            if isinstance(x, ast.Compare) and len(x.ops) == 1 and type(x.ops[0]) in _COMPARES:
                left, right = leaf(x.left), leaf(x.comparators[0])
                if left[0] == right[0] == "s":
                    raise Refused(x, f"{where}: a comparison of two numbers is no mask")
                tree.extend((left, right, _COMPARES[type(x.ops[0])]))
                return
            logical = _logical(self.typer, x)
            if logical is None:
                raise Refused(x, f"{where}: not a mask of comparisons and logical and/or")
            op, a, b = logical
            walk(a)
            walk(b)
            tree.append(op)

        walk(s0.value)
        self._float_vector(data.id, s1, where)  # operand 0; a mask may read it too
        operands = [self.args[data.id], *(self.args[n] for n in names), *scalars]
        out = self.emit(
            MaskedReduceOp,
            operands,
            ScalarType("f64"),
            arrays=len(names),
            reduce=_reduction(self.typer, node),
            tree=tuple(tree),
            py="f64",
        )
        return Typed(out.results[0], "f64")

    def _float_vector(self, name: str, stmt: ast.stmt, where: str) -> None:
        p = self.arrays.get(name)
        t = p.tensor if p is not None else None
        if t is None or len(t.shape or ()) != 1 or t.element.kind != "f64":
            raise Refused(stmt, f"{where}: `{name}` is not a 1-D float64 array")


def _number(node: ast.Constant) -> bool:
    return type(node.value) in (int, float)


def _target(stmt: ast.stmt) -> str:
    return stmt.targets[0].id  # type: ignore[attr-defined, no-any-return]


def _name_assign(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    )


def _logical(typer: Any, x: ast.expr) -> tuple[str, ast.expr, ast.expr] | None:
    if isinstance(x, ast.BinOp) and type(x.op) in _BITWISE:
        return _BITWISE[type(x.op)], x.left, x.right
    if isinstance(x, ast.Call) and len(x.args) == 2 and not x.keywords:
        op = _LOGICAL.get(typer.qualname(x.func) or "")
        if op is not None:
            return op, x.args[0], x.args[1]
    return None


def _reduction(typer: Any, call: ast.Call) -> str | None:
    """ "mean" / "sum" for `v.mean()`, `np.mean(v)`, `v.sum()`, `np.sum(v)` (no other
    arguments), else None."""
    if isinstance(call.func, ast.Attribute) and call.func.attr in _REDUCTIONS and not call.args:
        return call.func.attr
    qualname = typer.qualname(call.func) or ""
    if qualname in ("numpy.mean", "numpy.sum") and len(call.args) == 1:
        return qualname.removeprefix("numpy.")
    return None


def _triple(typer: Any, s0: ast.stmt, s1: ast.stmt, s2: ast.stmt) -> ast.Call | None:
    """The mean call of `m = M; v = X[m]; t = v.mean()` (shapes only), else None."""
    if not (_name_assign(s0) and _name_assign(s1) and isinstance(s2, ast.Assign)):
        return None
    m, v = _target(s0), _target(s1)
    sel = s1.value  # type: ignore[attr-defined]
    if not (
        m != v
        and isinstance(sel, ast.Subscript)
        and isinstance(sel.value, ast.Name)
        and isinstance(sel.slice, ast.Name)
        and sel.slice.id == m
        and sel.value.id not in (m, v)
        and (isinstance(s0.value, ast.Compare) or _logical(typer, s0.value) is not None)  # type: ignore[attr-defined]
    ):
        return None
    call = s2.value
    if not (isinstance(call, ast.Call) and not call.keywords and len(s2.targets) == 1):
        return None
    if _reduction(typer, call) is None:
        return None
    operand = call.args[0] if call.args else call.func.value  # type: ignore[attr-defined]
    if not (isinstance(operand, ast.Name) and operand.id == v):
        return None
    return call


__all__ = ["MaskedReductions"]
