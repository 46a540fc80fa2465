"""Masked updates: `X[c] = f(X[c])` as one elementwise store into the whole of `X`.

`inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** (-1.5)` gathers the selected elements,
computes on them, compares again and scatters back: five library calls where one
pass suffices. Where the mask `c` is an elementwise expression (the same text on both
sides) and every read of `X` in the value is `X[c]`, the statement is the tree

    where(c, f(where(c, X, 1.0)), X)

stored into `X[...]`: each element where `c` holds becomes `f` of itself, the others
stay (NaN in `c` compares false, as NumPy's mask). NumPy computes `f` on the selected
elements only, so its warnings are theirs: the inner `where` hands `f` a 1.0 at the
others, where NumPy never looks, and a flag the kernel still raises there (`f` of 1.0,
e.g. `1.0 / (x - 1.0)`) only sends the call to the Python path, which answers and warns
as written (a store site's flags rule). The site reads `X` whole, so it writes through a
temporary (the store runtime's overlap rule): nothing is written before all is read.

What keeps this exact: the mask and the value call nothing but what converges into the
one tree (the finder keeps the form only where the whole tree is one store site), every
leaf is a plain name (the fallback is the statement as written, over the same names),
and `X` appears in the mask only whole and in the value only as `X[c]` (a read at
another position, `X.T` or `X[c][::-1]`, keeps the statement the library's).
The core names no library: the tree is tried with `M.where` of each module name `M`
the module imports, and only one whose plugin converges it (`numpy.where` onto
`tensor.select`) makes the site; `f` reading an array besides `X[c]` (`admits`) or
anything not elementwise keeps the statement the library's.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ppy_core.compiler.frontend.stores import ASSIGN, Store, statements_of
from ppy_core.compiler.frontend.syntax import tree_nodes
from ppy_core.interface.plugin import Converge
from ppy_core.ir.types import ColumnType, TensorType

if TYPE_CHECKING:
    from ppy_core.compiler.frontend.typer import Typer


@dataclass(slots=True)
class Masked:
    """One masked update: its statement, the array it updates, the mask (the value's
    first `X[c]`'s key) and the value."""

    stmt: ast.Assign
    name: str
    mask: ast.expr
    value: ast.expr


def candidates(body: list[ast.stmt]) -> dict[int, Masked]:
    """id(the target) and id(the value) of each masked update in `body` -> it."""
    found: dict[int, Masked] = {}
    for stmt in statements_of(body):
        masked = _masked(stmt)
        if masked is not None:
            found[id(stmt.targets[0])] = found[id(stmt.value)] = masked  # type: ignore[attr-defined]
    return found


def _masked(stmt: ast.stmt) -> Masked | None:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    target = stmt.targets[0]
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
        return None
    name, key = target.value.id, ast.dump(target.slice)
    if isinstance(target.slice, ast.Tuple | ast.Slice) or not _mask_like(target.slice, name):
        return None
    reads = [n for n in ast.walk(stmt.value) if _reads(n, name)]
    selected = [
        n
        for n in ast.walk(stmt.value)
        if isinstance(n, ast.Subscript) and _reads(n.value, name) and ast.dump(n.slice) == key
    ]
    # every read of X in the value is one of the X[c] (or in its mask)
    inside = {id(n) for sub in selected for n in (sub.value, *ast.walk(sub.slice))}
    if not selected or any(id(n) not in inside for n in reads):
        return None
    return Masked(stmt, name, selected[0].slice, stmt.value)


def _reads(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _mask_like(node: ast.expr, name: str) -> bool:
    """An operator expression (not a plain value) over names and literals that reads
    `name` whole: nothing in it is called, so evaluating it twice (NumPy: once per
    side) or once (the site) is the same. `and`/`or`/`not` are Python's truth tests."""
    if not isinstance(node, _MASK_NODES[:3]):
        return False
    if not all(isinstance(n, _MASK_NODES) for n in ast.walk(node)):
        return False
    return any(_reads(n, name) for n in ast.walk(node))


_MASK_NODES = (
    ast.Compare,
    ast.BinOp,
    ast.UnaryOp,
    ast.Name,
    ast.Constant,
    ast.expr_context,
    ast.operator,
    ast.cmpop,
    ast.UAdd,
    ast.USub,
    ast.Invert,
)


@dataclass(slots=True)
class Rewritten:
    """A masked update's tree, its store, and the names `f` reads besides `X[c]`."""

    root: ast.Call
    store: Store
    values: list[ast.Name]


def tree(masked: Masked, where: ast.expr) -> Rewritten:
    """The tree `where(c, f(where(c, X, 1.0)), X)` (each `c` a fresh copy of the
    mask) and its store into `X[...]`. `where` is the library's function's name."""
    selects: list[ast.Call] = []

    def call(*args: ast.expr) -> ast.Call:
        return ast.Call(copy.deepcopy(where), list(args), [])

    def x() -> ast.Name:
        return ast.Name(masked.name, ast.Load())

    key = ast.dump(masked.mask)

    class _Select(ast.NodeTransformer):
        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            if _reads(node.value, masked.name) and ast.dump(node.slice) == key:
                selects.append(call(copy.deepcopy(masked.mask), x(), ast.Constant(1.0)))
                return selects[-1]
            return self.generic_visit(node)

    value = _Select().visit(copy.deepcopy(masked.value))
    root = call(copy.deepcopy(masked.mask), value, x())
    for node in ast.walk(root):
        ast.copy_location(node, masked.stmt)
    target = masked.stmt.targets[0]
    assert isinstance(target, ast.Subscript)
    whole = ast.copy_location(ast.Constant(Ellipsis), target.slice)
    store = Store(ASSIGN, masked.stmt, target.value, whole, masked=True)
    inside = {id(n) for sel in selects for n in ast.walk(sel)}
    values = [n for n in ast.walk(value) if isinstance(n, ast.Name) and id(n) not in inside]
    return Rewritten(root, store, values)


#: the ops a masked update's tree may hold: each element's result is of that element
ELEMENTWISE = frozenset(
    "tensor." + op
    for op in (
        *("add", "sub", "mul", "div", "pow", "maximum", "minimum", "neg", "abs"),
        *("unary", "binary", "clip", "compare", "logical", "select", "cast"),
    )
)


def admits(
    made: Rewritten,
    conv: dict[int, Converge],
    operands: dict[int, list[ast.expr]],
    types: Typer,
) -> bool:
    """Is the converged tree elementwise, and is every name `f` reads besides `X[c]` no
    array? (NumPy broadcasts `f`'s arrays against the selected elements, k of them, the
    tree against `X`: only scalars mean the same in both.)"""
    if any(conv[id(n)].op not in ELEMENTWISE for n in tree_nodes(made.root, conv, operands)):
        return False
    name = made.store.obj.id  # type: ignore[attr-defined]
    others = [n for n in made.values if n.id != name]
    return not any(isinstance(types.expr(n, conv), TensorType | ColumnType) for n in others)


__all__ = ["ELEMENTWISE", "Masked", "Rewritten", "admits", "candidates", "tree"]
