"""Typed loops: the arrays a function makes up front and the arrays it returns.

`x = np.zeros_like(b)` / `np.empty_like(b)`, and `x = np.zeros(shape, dtype=b.dtype)` /
`np.empty(...)` with a tuple shape, a length or an array's `.shape` (adi's
`np.empty(u.shape, dtype=u.dtype)`), as the function's first statements (b a typed
array parameter, x assigned nowhere else) make x one more array of b's element type:
the runtime site runs exactly those statements in Python before the call (NumPy's
own allocation, its layout and its errors) and hands the arrays in. A later
top-level `x = np.empty_like(b)` / `np.zeros_like(b)`, x named by no statement before
it, is made up front too (no one can tell when an array nobody has seen was made).
So is a later `x = E` (deriche's `imgOut = c1 * (y1 + y2)`), E + - * / of whole
float64 arrays and scalars: x is made as `np.empty_like` of E's first array and the
statement fills it (`filled`, `loops_flat`), which is NumPy's own result only where
E's arrays are C-contiguous of one shape (the function checks; else Python runs). A last
statement `return x, y` (or `return x`) of such arrays or array parameters, and no
other return, gives the call's value: the site builds it from the same objects.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ppy_core.compiler.frontend.loops_expr import Param, Refused
from ppy_core.ir.types import TensorType

MAKERS = ("numpy.zeros_like", "numpy.empty_like")
#: makers of a shape given as a tuple, `dtype=b.dtype` naming the element type
SHAPED = ("numpy.zeros", "numpy.empty")


@dataclass(frozen=True, slots=True)
class Locals:
    params: list[Param]  # the arrays made up front, after the real parameters
    skipped: frozenset[int]  # ids of the statements the site runs or answers itself
    prologue: tuple[str, ...]  # those statements' source, in order
    returns: tuple[str, ...]  # the names `return` gives, () for none
    single: bool  # `return x` (not a tuple)
    filled: frozenset[str] = frozenset()  # made for a later `x = E`, which fills them


def local_arrays(
    func: ast.FunctionDef, typer: Any, params: list[Param], skip: frozenset[int] = frozenset()
) -> Locals:
    """`skip`: ids of leading statements the site runs already (`loops_prologue`)."""
    arrays = {p.name: p for p in params if p.kind in ("array", "unused")}
    stores: dict[str, int] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    body = [s for s in func.body if not _docstring(s) and id(s) not in skip]
    made: list[Param] = []
    skipped: set[int] = set()
    source: list[str] = []
    for stmt in body:
        found = _maker(stmt, typer, arrays)
        if found is None:
            break
        name, base, rank = found
        p = arrays.get(base) if isinstance(base, str) else Param(name, "array", base)
        if p is None or p.tensor is None or name in arrays or stores.get(name) != 1:
            break
        tensor = (
            p.tensor
            if rank is None
            else TensorType(p.tensor.element, (None,) * rank, p.tensor.library)
        )
        made.append(Param(name, "array", tensor))
        arrays[name] = made[-1]
        skipped.add(id(stmt))
        source.append(ast.unparse(stmt))
    # an array updated in place (`z += w * c`) is still the one object it was made
    updated = [
        n.target.id
        for n in ast.walk(func)
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
    ]
    binds = {name: count - updated.count(name) for name, count in stores.items()}
    filled = _later(body, len(made), typer, arrays, binds, made, skipped, source)
    returns: tuple[str, ...] = ()
    single = False
    last = body[-1] if body else None
    if isinstance(last, ast.Return) and last.value is not None:
        names = last.value.elts if isinstance(last.value, ast.Tuple) else [last.value]
        if names and all(isinstance(n, ast.Name) and n.id in arrays for n in names):
            others = [n for n in ast.walk(func) if isinstance(n, ast.Return) and n is not last]
            if others:
                raise Refused(others[0], "a function returning its arrays returns only at its end")
            returns = tuple(n.id for n in names)  # type: ignore[union-attr]
            single = not isinstance(last.value, ast.Tuple)
            skipped.add(id(last))
    return Locals(made, frozenset(skipped), tuple(source), returns, single, filled)


def _later(
    body: list[ast.stmt],
    start: int,
    typer: Any,
    arrays: dict[str, Param],
    stores: dict[str, int],
    made: list[Param],
    skipped: set[int],
    source: list[str],
) -> frozenset[str]:
    """The later top-level makers and fills (module docstring), appended to `made`,
    `skipped`, `source`; the names filled."""
    numpy = next((k for k, v in typer.imports.items() if v == "numpy"), None)
    filled: set[str] = set()
    seen: set[str] = set()  # names the statements before this one mention
    for stmt in body[start:]:
        target = _single_name(stmt)
        if target is not None and target not in seen and stores.get(target) == 1:
            found = _maker(stmt, typer, arrays)
            like = None
            if found is not None and isinstance(found[1], str) and found[2] is None:
                like = found[1] if found[1] in arrays else None  # `np.empty_like(b)`
            elif found is None and numpy is not None:
                like = _filled(stmt.value, arrays)  # type: ignore[attr-defined]
                if like is not None:
                    filled.add(target)
            if like is not None:
                made.append(Param(target, "array", arrays[like].tensor))
                arrays[target] = made[-1]
                if target in filled:
                    source.append(f"{target} = {numpy}.empty_like({like})")
                else:
                    skipped.add(id(stmt))
                    source.append(ast.unparse(stmt))
        seen |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    return frozenset(filled)


def _single_name(stmt: ast.stmt) -> str | None:
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        return stmt.targets[0].id
    return None


def _filled(value: ast.expr, arrays: dict[str, Param]) -> str | None:
    """E's first array where E is + - * / of whole float64 arrays (names) and
    scalars holding at least one array, each array of one type; else None."""
    leaves: list[str] = []

    def walk(node: ast.expr) -> bool:
        if isinstance(node, ast.BinOp):
            ok = isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div)
            return ok and walk(node.left) and walk(node.right)
        if isinstance(node, ast.Name) and node.id in arrays:
            leaves.append(node.id)
            return True
        # a scalar: anything naming no array (the builder types it, or refuses)
        return not any(isinstance(n, ast.Name) and n.id in arrays for n in ast.walk(node))

    if not isinstance(value, ast.BinOp) or not walk(value) or not leaves:
        return None
    tensors = {arrays[n].tensor for n in leaves}
    first = arrays[leaves[0]].tensor
    if len(tensors) != 1 or first is None or first.element.kind != "f64":
        return None
    return leaves[0]


def _maker(
    stmt: ast.stmt, typer: Any, arrays: dict[str, Param]
) -> tuple[str, str | TensorType, int | None] | None:
    """(x, b, None) for `x = np.zeros_like(b)` / `np.empty_like(b)`; (x, b, rank) for
    `x = np.zeros((n, ...), dtype=b.dtype)` / `np.empty(...)`, and rank 1 for a length
    (`np.empty(A_row.size - 1, A_val.dtype)`, spmv's; the dtype by keyword or second);
    (x, the array type the plugins give the call, rank) for a dtype they name
    (`np.zeros((N, N), np.int32)`, nussinov's); an array's shape, `np.empty(u.shape, ...)`,
    gives that array's rank."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
        and 1 <= len(stmt.value.args) <= 2
    ):
        return None
    call, name = stmt.value, stmt.targets[0].id
    maker = typer.qualname(call.func)
    if maker in MAKERS and len(call.args) == 1 and not call.keywords:
        return (name, call.args[0].id, None) if isinstance(call.args[0], ast.Name) else None
    shape = call.args[0]
    rank = (
        _length(shape)
        or _shape_rank(shape, arrays)
        or (
            len(shape.elts)
            if isinstance(shape, ast.Tuple)
            and 1 <= len(shape.elts) <= 2
            and not any(isinstance(e, ast.Starred) for e in shape.elts)
            else None
        )
    )
    given = [k.value for k in call.keywords if k.arg == "dtype"] + call.args[1:]
    if maker not in SHAPED or rank is None or len(given) != 1 or len(call.keywords) > 1:
        return None
    if call.keywords and call.keywords[0].arg != "dtype":
        return None
    dtype = given[0]  # `b.dtype`: b's element type, whatever it is
    if not (
        isinstance(dtype, ast.Attribute)
        and dtype.attr == "dtype"
        and isinstance(dtype.value, ast.Name)
    ):
        made = typer.expr(call, {})  # the plugin's type of what the call makes
        known = isinstance(made, TensorType) and made.library and made.element.kind != "?"
        return (name, made, rank) if known else None
    return name, dtype.value.id, rank


def _shape_rank(node: ast.expr, arrays: dict[str, Param]) -> int | None:
    """The rank of `b.shape`, b a typed array made or passed before (its value is a tuple
    of that many ints: reading it runs no code of the program)."""
    if not (
        isinstance(node, ast.Attribute)
        and node.attr == "shape"
        and isinstance(node.value, ast.Name)
    ):
        return None
    array = arrays.get(node.value.id)
    tensor = array.tensor if array is not None else None
    return len(tensor.shape) if tensor is not None and tensor.shape is not None else None


def _length(node: ast.expr) -> int | None:
    """1 where `node` is an int expression (a length): constants, names' `.size` and
    `.shape[k]`, `len(...)` and arithmetic of those; no other call runs in it. Its
    value's rank is guarded anyway: the site checks each array it made."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return 1
    if isinstance(node, ast.Name):  # a parameter (makers come first): the site guards it
        return 1
    if isinstance(node, ast.Attribute) and node.attr == "size":
        return 1 if isinstance(node.value, ast.Name) else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
        shape = node.value
        plain = isinstance(shape.value, ast.Name) and isinstance(node.slice, ast.Constant)
        return 1 if shape.attr == "shape" and plain else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
        return 1 if len(node.args) == 1 and isinstance(node.args[0], ast.Name) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
        return 1 if _length(node.left) and _length(node.right) else None
    return None


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


__all__ = ["MAKERS", "SHAPED", "Locals", "local_arrays"]
