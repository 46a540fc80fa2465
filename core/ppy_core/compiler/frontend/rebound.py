"""The element type of an array name a loop keeps rebinding to parts of itself.

    Z = np.zeros(C.shape, np.complex128)
    for i in range(itermax):
        ...abs(Z) > horizon...
        Z = Z[I]

At the site Z is Unknown to the typer (a value subscript types nothing: what it gives
depends on the index), so the speculative guess would be its library's default array
(NumPy: float64), which the guard refuses on every call. Where every binding of a name
in the body is a plain `name = value` whose value the typer types an array, all of one
library and element kind, or a subscript of such a name (itself included), the guess
for that name is an array of that kind, of unknown rank. It is a guess like any other:
the guard checks each call's operand (an integer index giving a scalar runs Python).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping

from ppy_core.compiler.frontend.bound import binding_counts
from ppy_core.compiler.frontend.typer import Typer
from ppy_core.ir.types import TensorType


def rebound_arrays(body: list[ast.stmt], typer: Typer) -> dict[str, TensorType]:
    """Name -> the array its bindings in `body` agree on (see the module docstring)."""
    values = _bindings(body)
    if not values:
        return {}
    counts = binding_counts(ast.Module(body=body, type_ignores=[]))
    typed: dict[str, TensorType] = {}
    parts: dict[str, set[str]] = {}
    for name, found in values.items():
        if len(found) != counts[name]:
            continue  # also bound otherwise (a loop target, an augmented assignment)
        kinds, bases = _kinds(found, typer)
        if kinds is not None and len(kinds) == 1:
            typed[name] = next(iter(kinds))
            parts[name] = bases
    return _settled(typed, parts)


def _bindings(body: Iterable[ast.stmt]) -> dict[str, list[ast.expr]]:
    """Each name's values bound by `name = value` (a single plain target)."""
    out: dict[str, list[ast.expr]] = {}
    for node in body_nodes(body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                out.setdefault(target.id, []).append(node.value)
    return out


def _kinds(found: list[ast.expr], typer: Typer) -> tuple[set[TensorType] | None, set[str]]:
    """(the arrays the typed values are, the names the others subscript), or None
    where a value is neither."""
    kinds: set[TensorType] = set()
    bases: set[str] = set()
    for value in found:
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
            bases.add(value.value.id)
            continue
        t = typer.expr(value, {})
        if not isinstance(t, TensorType) or not t.library:
            return None, bases
        kinds.add(TensorType(t.element, None, t.library))
    return kinds, bases


def _settled(typed: dict[str, TensorType], parts: Mapping[str, set[str]]) -> dict[str, TensorType]:
    """Drop, until none is left to drop, a name subscripting a name of another array."""
    changed = True
    while changed:
        changed = False
        for name in list(typed):
            if any(typed.get(base) != typed[name] for base in parts[name]):
                del typed[name]
                changed = True
    return typed


def body_nodes(body: Iterable[ast.stmt]) -> Iterator[ast.AST]:
    """Nodes of a body, not descending into nested functions, lambdas or classes."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))


__all__ = ["body_nodes", "rebound_arrays"]
