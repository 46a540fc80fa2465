"""How often each name of a scope is bound: the one count behind "is this name bound
once?" (`typer.single_assignments`, a parameter never rebound, a module name the
site finder types).

A name is bound by a store or `del` of it (assignments, loops, `with`, walrus,
comprehensions), a parameter of the scope, a `def` or `class` of it, an import of it,
`except ... as` it and a `match` capture of it; `global`/`nonlocal` names are bound
elsewhere too (counted twice: never once). Nested scopes' bindings are counted as
well, conservatively (a closure may rebind a name through `nonlocal`), but not their
parameters: those name the nested scope's own locals."""

from __future__ import annotations

import ast
from collections import Counter

Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Module
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_CAPTURES = (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)


def binding_counts(scope: Scope) -> Counter[str]:
    """Each name's number of bindings in `scope` (0: never bound there)."""
    counts: Counter[str] = Counter()
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            counts[node.id] += 1
        elif isinstance(node, ast.Global | ast.Nonlocal):
            counts.update(dict.fromkeys(node.names, 2))
        elif isinstance(node, _DEFINITIONS) and node is not scope:
            counts[node.name] += 1
        elif isinstance(node, ast.alias):
            counts[(node.asname or node.name).partition(".")[0]] += 1
        elif isinstance(node, _CAPTURES) and node.name:
            counts[node.name] += 1
        elif isinstance(node, ast.MatchMapping) and node.rest:
            counts[node.rest] += 1
    if not isinstance(scope, ast.Module):
        args = scope.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                counts[arg.arg] += 1
    return counts


__all__ = ["Scope", "binding_counts"]
