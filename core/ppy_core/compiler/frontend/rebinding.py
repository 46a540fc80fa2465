"""Names bound more than once (a time-step loop's `u = u + dt * f(u)`, `a += b`) keep
a type when every binding gives them the same one.

`single_assignments` types a name assigned once at a function's top level; a
parameter rebound anywhere, or a local bound in a loop or bound twice, stays Unknown.
Here a name whose every binding is `name = value`, `name: T = value` or
`name OP= value` (anywhere in the body, loops and branches included, not in nested
scopes; no for-target, with, del, walrus, import, global or nonlocal, and no nested
scope binding it too: `bound.py` counts them all) gets the type
`T` when typing each bound value under `name: T` gives `T` again: a fixed point, so
`u = u * 0.5 + v` keeps `u: ndarray`. `T` is the parameter's annotation, else the
first binding's type. `name OP= value` is typed as the in-place operator the plugins
answer (`Typer.in_place`): an int64 ndarray `t` stays int64 under `t += a * b` with
float64 operands, since NumPy updates `t` itself or raises (its statement then is no
store site, and says why: `stores.unfused`), where `t = t + a * b` makes it float64.
The runtime guard still checks each leaf on every call: the type decides what
converges, never an answer.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterator
from typing import NamedTuple

from ppy_core.compiler.frontend.bound import binding_counts
from ppy_core.ir.types import UNKNOWN, Type


class Binding(NamedTuple):
    """One binding of a name: the value it binds, `name OP value` for `name OP= value`
    (then `in_place`: the type is the in-place operator's, not the operator's)."""

    value: ast.expr
    in_place: bool = False


#: the type of a binding's value, under the typer's environment at the time
Typing = Callable[[Binding], Type]


def bindings(func: ast.FunctionDef) -> dict[str, list[Binding]]:
    """Per name whose every binding is plain (see the module docstring), its bindings
    in source order: every binding `bound.binding_counts` counts, but the parameter's
    own, is one of them."""
    counts = binding_counts(func)
    args = func.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    found: dict[str, list[Binding]] = {}
    plain: Counter[str] = Counter()
    for node in _own(func.body):
        bound = _binding(node)
        if bound is not None:
            name, binding = bound
            plain[name] += 1
            found.setdefault(name, []).append(binding)
    return {
        name: values
        for name, values in found.items()
        if counts[name] - (name in params) == plain[name]
    }


def consistent_types(
    func: ast.FunctionDef, env: dict[str, Type], params: dict[str, Type], typing: Typing
) -> dict[str, Type]:
    """The names of `bindings(func)` that keep one type, and that type. `env` is the
    typer's environment, updated as names are settled (two rounds, so a name typed
    from another settled later is typed too); `typing` types a value under it."""
    settled: dict[str, Type] = {}
    candidates = bindings(func)
    for _round in range(2):
        for name, values in candidates.items():
            if name in settled:
                continue
            start = params.get(name, UNKNOWN)
            if name in params and start is UNKNOWN:
                continue  # an unannotated parameter: its first value is unknown
            before = env.get(name, UNKNOWN)
            env[name] = start
            if start is UNKNOWN:
                start = typing(values[0])
                env[name] = start
            if start is not UNKNOWN and all(typing(v) == start for v in values):
                settled[name] = start
            else:
                env[name] = before
    return settled


def _binding(node: ast.AST) -> tuple[str, Binding] | None:
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ):
        return node.targets[0].id, Binding(node.value)
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
        return node.target.id, Binding(node.value)
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        read = ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target)
        value = ast.copy_location(ast.BinOp(read, node.op, node.value), node)
        return node.target.id, Binding(value, in_place=True)
    return None


def _own(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Nodes of `body`, not descending into nested functions, lambdas or classes
    (a comprehension's names count: its walrus binds here, and its own loop names
    only make a name look rebound), in source order: the first binding types a local."""
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    todo: list[ast.AST] = list(reversed(body))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, scopes):
            todo.extend(reversed(list(ast.iter_child_nodes(node))))


__all__ = ["Binding", "Typing", "bindings", "consistent_types"]
