"""Store sites: a statement whose elementwise result goes straight into its target.

`B[1:-1, 1:-1] = expr`, `out[...] = expr`, `a += expr` and `A[i, :] -= expr` become
one site called as ``site(obj, key, *leaves)``: the library's runtime adapter writes
the fused result into ``obj[key]`` (``obj`` itself for `a += expr`) instead of the
expression's result being built and then copied, and the site's Python path runs
the whole statement. An augmented store is the tree ``target OP expr`` whose first
leaf is the target (NumPy's in-place ufunc ``np.subtract(t, expr, out=t)`` has the
same elements). Which overlaps a runtime must write through a temporary is the
runtime's business (ppy-numpy: `_store.h`).

What keeps Python's semantics: the target is a name or a subscript of a name with a
basic-looking key (names, literals, slices, simple arithmetic on them), and neither
the key nor any leaf calls anything, so evaluating the target before the value (the
call's argument order) cannot differ from Python's order. The runtime checks the
key's values (ints, slices, Ellipsis, None: a view) on every call. Only a result
whose element type its library's adapter `store_elements` lists gets a store site,
and only into a target of that type where the target's type is known (`refusal`,
`unfused`: `t += a * b` of an int64 `t` and float64 `a, b` is Python's, its value
`a * b` a site alone); the core names no library.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ppy_core.interface.plugin import Converge
from ppy_core.ir.types import UNKNOWN, TensorType

if TYPE_CHECKING:
    from ppy_core.compiler.frontend.typer import Typer

#: forms a runtime adapter's `store_site` knows (see `RuntimeAdapter.store_site`)
ASSIGN, ITEM, NAME = "=", "item", "name"
#: the operator module's in-place function of each augmented operator
IN_PLACE: dict[type[ast.operator], str] = {
    ast.Add: "iadd",
    ast.Sub: "isub",
    ast.Mult: "imul",
    ast.Div: "itruediv",
    ast.FloorDiv: "ifloordiv",
    ast.Mod: "imod",
    ast.Pow: "ipow",
}
_CALLING = (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda)
_SIMPLE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)


@dataclass(slots=True)
class Store:
    """How an expression site's statement stores its result."""

    form: str  # ASSIGN, ITEM or NAME
    stmt: ast.stmt  # the statement the site's call replaces
    obj: ast.expr  # `B` of `B[k] = ...`, `a` of `a += ...`
    key: ast.expr | None  # the subscript's key (None for NAME)
    op: str = ""  # the operator module's in-place function (ITEM, NAME)
    masked: bool = False  # `X[c] = f(X[c])` stored whole into `X[...]` (masked.py)


def statements_of(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of `body`, nested ones too (not inside nested definitions)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for value in ast.iter_fields(stmt):
            items = value[1] if isinstance(value[1], list) else [value[1]]
            nested = [s for s in items if isinstance(s, ast.stmt)]
            for handler in items:
                if isinstance(handler, ast.ExceptHandler | ast.match_case):
                    nested.extend(handler.body)
            yield from statements_of(nested)


def candidates(body: Iterable[ast.stmt]) -> dict[int, Store]:
    """id(the value expression Python evaluates) -> the store its statement makes,
    for each assignment that may become a store site."""
    found: dict[int, Store] = {}
    for stmt in statements_of(body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Subscript) and _simple_target(target):
                found[id(stmt.value)] = Store(ASSIGN, stmt, target.value, target.slice)
        elif isinstance(stmt, ast.AugAssign) and type(stmt.op) in IN_PLACE:
            op = IN_PLACE[type(stmt.op)]
            target = stmt.target
            if isinstance(target, ast.Name):
                found[id(stmt.value)] = Store(NAME, stmt, target, None, op)
            elif isinstance(target, ast.Subscript) and _simple_target(target):
                found[id(stmt.value)] = Store(ITEM, stmt, target.value, target.slice, op)
    return found


def augmented_root(store: Store) -> ast.BinOp:
    """`target OP value` of an augmented store: the tree its site computes, whose
    first leaf (the target, read) the runtime fills with the target's view."""
    assert isinstance(store.stmt, ast.AugAssign)
    read = _as_load(store.stmt.target)
    root = ast.BinOp(left=read, op=store.stmt.op, right=store.stmt.value)
    return ast.copy_location(root, store.stmt)


def refusal(
    store: Store, root: ast.expr, conv: dict[int, Converge], leaves: list[ast.expr], typer: Typer
) -> str | None:
    """None if the site at `root` may store into its statement's target. Else why not:
    a sentence for `ppy explain` where the types say the store could never run fast (a
    result the library's runtime does not store, a target of another type, which
    NumPy-like libraries cast into or refuse), "" where the statement is simply no
    store (the value is no library array, a leaf calls something)."""
    converge = conv.get(id(root))
    result = converge.result if converge is not None else None
    if not isinstance(result, TensorType) or not result.library:
        return ""
    if store.form != ASSIGN and (
        root is getattr(store.stmt, "value", None)  # the value alone: `augmented_root` is not
        or not leaves
        or leaves[0] is not getattr(root, "left", None)  # the target converged: no plain read
    ):
        return ""
    if any(isinstance(n, _CALLING) for leaf in leaves for n in ast.walk(leaf)):
        return ""
    kind = getattr(result.element, "kind", "?")
    if kind not in typer.oracle.store_elements(result.library):
        return f"{result.library}'s runtime stores no {kind} result into a target"
    target = typer.expr(store.obj, conv)
    if target is UNKNOWN or target == result:
        return None
    if not isinstance(target, TensorType) or target.library != result.library:
        return f"the target {ast.unparse(store.obj)} is no {result.library} array"
    if target.element != result.element:
        why = _into(result, target)
        if any(typer.expr(leaf, conv) is UNKNOWN for leaf in leaves):
            why += f" (leaves of no known type are taken as {kind} arrays)"
        return why
    return None


def unfused(store: Store, root: ast.expr, conv: dict[int, Converge], typer: Typer) -> str:
    """Why `target OP= value` is no store site where its tree `root` (`target OP value`,
    see `augmented_root`) converged nowhere though its value did: the target and the
    value are arrays of one library with other element types, which the plugin does
    not fuse (an int64 `t += a * b` of float64 `a, b`: NumPy casts into `t` or raises).
    "" otherwise."""
    value = conv.get(id(getattr(root, "right", None)))
    target = typer.expr(store.obj, conv)
    if id(root) in conv or value is None or not isinstance(target, TensorType):
        return ""
    result = value.result
    if not isinstance(result, TensorType) or result.library != target.library:
        return ""
    return _into(result, target) if result.element != target.element else ""


def _into(result: TensorType, target: TensorType) -> str:
    kinds = (getattr(t.element, "kind", "?") for t in (result, target))
    return "the {} result goes into a {} target".format(*kinds)


def _simple_target(target: ast.Subscript) -> bool:
    return isinstance(target.value, ast.Name) and _simple_key(target.slice)


def _simple_key(node: ast.expr) -> bool:
    """Names, literals, slices and +,-,*,// of them: evaluating it calls nothing a
    program could observe (the runtime still checks its values)."""
    if isinstance(node, ast.Tuple):
        return all(_simple_key(e) for e in node.elts)
    if isinstance(node, ast.Slice):
        parts = (node.lower, node.upper, node.step)
        return all(p is None or _simple_scalar(p) for p in parts)
    return _simple_scalar(node)


def _simple_scalar(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None or node.value is Ellipsis or type(node.value) is int
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _simple_scalar(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _SIMPLE_OPS):
        return _simple_scalar(node.left) and _simple_scalar(node.right)
    return False


def _as_load(node: ast.expr) -> ast.expr:
    """A copy of a target read as a value (the key's nodes are shared: not a site)."""
    if isinstance(node, ast.Name):
        return ast.copy_location(ast.Name(node.id, ast.Load()), node)
    assert isinstance(node, ast.Subscript)
    read = ast.Subscript(value=_as_load(node.value), slice=node.slice, ctx=ast.Load())
    return ast.copy_location(read, node)


def key_value(key: ast.expr) -> ast.expr:
    """The key as the value `obj[key]` passes to `__getitem__`: a slice becomes
    ``builtins.slice(lower, upper, step)`` (through the module prelude's name)."""
    if isinstance(key, ast.Tuple):
        tup = ast.Tuple([key_value(e) for e in key.elts], ast.Load())
        return ast.copy_location(tup, key)
    if isinstance(key, ast.Slice):
        parts = [
            p if p is not None else ast.Constant(None) for p in (key.lower, key.upper, key.step)
        ]
        func = ast.Attribute(ast.Name(BUILTINS, ast.Load()), "slice", ast.Load())
        return ast.copy_location(ast.Call(func, parts, []), key)
    return key


BUILTINS = "__ppy_builtins__"
OPERATOR = "__ppy_operator__"

__all__ = [
    "ASSIGN",
    "BUILTINS",
    "IN_PLACE",
    "ITEM",
    "NAME",
    "OPERATOR",
    "Store",
    "augmented_root",
    "candidates",
    "key_value",
    "refusal",
    "statements_of",
    "unfused",
]
