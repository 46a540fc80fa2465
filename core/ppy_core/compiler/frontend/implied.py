"""Views an operation implies: `np.outer(u, v)` of two vectors is `u[:, None] * v[None, :]`.

A plugin's `Converge.views` says, per operand, the basic index its op reads that
operand through. The core makes each such view a leaf of the tree, a `Subscript` node
of the operand's own `Name` that the program never wrote: the runtime takes the view
from the name (the deferred views of `views.py`, the same manifest record), and the
fallback still calls what the program wrote, over the same arguments (`transform`
maps the view's name to its argument: `ExprSite.implied`). So `A += np.outer(u1, v1) +
np.outer(u2, v2)` is one pass over `A` where NumPy makes three temporaries.

The view means what the call means only for the operand's type (`np.outer` ravels an
array of rank 2, where `u[:, None]` would not). So an operand is taken only where its
type is proven on every call: a parameter that the body never rebinds, of a
specialization (the dispatcher checks each call's signature exactly, rank included)
or annotated with its rank (`ppy.Shape`): the site then runs only where
`runtime.ranked.rank_is` holds of it (`rank_test`, the dispatcher's own description),
else Python's statement. Anything else keeps the call the library's. A view of a
parameter runs nothing of the program, so taking it before the tree's other leaves
changes no order.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from ppy_core.ir.types import UNKNOWN, TensorType, Type

RANK = "__ppy_rank__"  # `runtime.ranked.rank_is` in a rewritten module


def implied_views(
    operands: Sequence[ast.expr],
    views: Sequence[tuple[Any, ...] | None],
    proven: Mapping[str, Type],
    env: Mapping[str, Type],
) -> list[ast.expr] | None:
    """The operands with each implied view made a `Subscript` of its name, or None
    when one with a view is no parameter whose type is `proven` (a specialization's
    described types, an annotation's rank) and still that type where it is read
    (`env`: never rebound)."""
    if len(views) != len(operands):
        return None
    out: list[ast.expr] = []
    for operand, index in zip(operands, views, strict=True):
        if index is None:
            out.append(operand)
            continue
        if not isinstance(operand, ast.Name):
            return None
        t = proven.get(operand.id)
        if not isinstance(t, TensorType) or t.shape is None or env.get(operand.id, UNKNOWN) != t:
            return None
        view = _subscript(operand, index)
        if view is None:
            return None
        out.append(view)
    return out


def ranked_parameters(params: Mapping[str, Type], annotated: set[str]) -> dict[str, Type]:
    """The annotated parameters whose annotation says their rank (`ppy.Shape`)."""
    return {
        name: t
        for name, t in params.items()
        if name in annotated and isinstance(t, TensorType) and t.shape is not None
    }


def rank_test(name: str, t: Type) -> ast.expr:
    """`__ppy_rank__(name, <rank>)`: the per-call test of an annotated rank
    (`runtime.ranked.rank_is`, imported so by the rewrite)."""
    assert isinstance(t, TensorType)
    assert t.shape is not None
    args: list[ast.expr] = [ast.Name(name, ast.Load()), ast.Constant(len(t.shape))]
    return ast.Call(ast.Name(RANK, ast.Load()), args, [])


def view_type(t: Type) -> Type:
    """A view's leaf type: the array's element and library, of a rank the guard does
    not check (the parameter's own rank is the dispatcher's)."""
    assert isinstance(t, TensorType)
    return TensorType(t.element, None, t.library)


def _subscript(name: ast.Name, index: tuple[Any, ...]) -> ast.Subscript | None:
    """`name[<index>]` as syntax `views.index_record` reads back, placed at `name`."""
    parts: list[ast.expr] = []
    for item in index:
        if item is None:
            parts.append(ast.Constant(None))
        elif type(item) is int:
            parts.append(ast.Constant(item))
        elif isinstance(item, tuple) and len(item) == 3:
            if not all(b is None or type(b) is int for b in item):
                return None
            bounds = [None if b is None else ast.Constant(b) for b in item]
            parts.append(ast.Slice(*bounds))
        else:
            return None
    key: ast.expr = parts[0] if len(parts) == 1 else ast.Tuple(parts, ast.Load())
    view = ast.Subscript(name, key, ast.Load())
    for node in ast.walk(view):
        if node is not name:
            ast.copy_location(node, name)
    return view


__all__ = ["RANK", "implied_views", "rank_test", "ranked_parameters", "view_type"]
