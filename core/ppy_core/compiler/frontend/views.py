"""Deferred views: a site takes basic views of names itself, the fallback in place.

`np.sqrt((x[:, None] - x[None, :])**2 + (y[:, None] - y[None, :])**2)` reads `y[:, None]`
after two operations. Evaluating it before them (the site call evaluates its arguments
first) would run an unknown object's `__getitem__` out of Python's order. So where every
leaf of a speculative tree is a name or a basic view of a *steady* name (below), and the
library's runtime adapter `takes_views`, the site call passes the names only (`x`, `y`,
each once) and the manifest says, per kernel leaf, which argument it reads and which
basic index of it (`views`). The adapter takes the view itself on an exact array of its
library (no effect: nothing of the program runs); anything else falls back, and the
fallback expression evaluates `y[:, None]` where Python does. Identical views are one
kernel operand (reading a view twice or once is the same).

Steady: a function's parameter, or a local bound by an assignment on an earlier line of
the same block as the read or of a block around it (`un = u.copy()` at the top of a loop
body, read by the body's later statements: the assignment ran before them on every
path), never deleted (`del`, `except E as name`) nor rebound from a nested function
(`nonlocal`): reading it before the operations that precede it in Python gives the same
object and cannot raise. Every other leaf of such a tree is a name, so the call runs no
code of the program before the operations either. The core describes an index as syntax
(literal slice bounds, new axes, integer literals); no library is named.

An integer of the index may also be a loop counter, `k`, `k + 1` or `k - 1`, read inside
the body of a `for k in ...` loop of the function, a name never deleted nor rebound from
elsewhere (`global`, `nonlocal`): it is bound there (vadv's `u_stage[:, :, k - 1]` in
`for k in range(1, K - 1)`). The call passes `k` too and the runtime adds the offset
itself, to an exact int only; anything else (a bool, an int of another class) runs the
fallback, which evaluates `k - 1` where Python does.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

#: per item of an index: a slice's [lower, upper, step], an int (an integer index), a
#: loop counter plus an offset ({"arg": the call's argument of the counter, "add": c}),
#: or None (a new axis)
Index = list[list[int | None] | int | dict[str, int] | None]
#: where a loop counter is surely bound: its loops' bodies, from (line, column) of the
#: first statement to (end line, end column) of the last
Spans = tuple[tuple[tuple[int, int], tuple[int, int]], ...]
_END = float("inf")  # a binding of the function's own body holds to its end


def view_of(node: ast.expr) -> tuple[str, int] | None:
    """(name, indices) of a basic slice of a name, ``A[1:-1, :-2]``, ``x[:, None]``
    (literal int bounds, new axes, no integer index): stencils and broadcasts read
    several. Once one read of `A` with that many indices succeeded, another cannot fail
    on an array (slices clip) and has no effect."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
        return None
    parts = _parts(node)
    for part in parts:
        if isinstance(part, ast.Constant) and part.value is None:
            continue  # a new axis: `x[:, None]`
        if not isinstance(part, ast.Slice):
            return None
        for bound in (part.lower, part.upper, part.step):
            if bound is not None and _int_value(bound) is None:
                return None
    return node.value.id, len(parts)


def deferred_view(node: ast.expr) -> str | None:
    """The name a deferrable view is taken of: a `view_of` view, or a basic view whose
    index also holds integers beside a slice (a column ``u[1:-1, 0]``, a plane
    ``u[:, :, k - 1]``, still an array): literals or loop counters (`counter_part`).
    Unlike a slice an integer may be out of range: the runtime taking the view then runs
    the fallback, which raises Python's IndexError where Python does."""
    found = view_of(node)
    if found is not None:
        return found[0]
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
        return None
    parts = _parts(node)
    if not any(isinstance(part, ast.Slice) for part in parts):
        return None  # integers only: an element, not a view
    for part in parts:
        if isinstance(part, ast.Slice):
            if any(
                b is not None and _int_value(b) is None for b in (part.lower, part.upper, part.step)
            ):
                return None
        elif (
            not (isinstance(part, ast.Constant) and part.value is None)
            and _int_value(part) is None
            and counter_part(part) is None
        ):
            return None
    return node.value.id


def counter_part(part: ast.expr) -> tuple[ast.Name, int] | None:
    """(the name, the offset) of an index item `k`, `k + c` or `k - c` (c an int
    literal): a loop counter where `deferrable` finds it one."""
    if isinstance(part, ast.Name):
        return part, 0
    if (
        isinstance(part, ast.BinOp)
        and isinstance(part.op, ast.Add | ast.Sub)
        and isinstance(part.left, ast.Name)
        and (offset := _int_value(part.right)) is not None
    ):
        return part.left, offset if isinstance(part.op, ast.Add) else -offset
    return None


def counters_of(node: ast.Subscript) -> list[ast.Name]:
    """The loop counters an index of a deferred view reads (`counter_part`)."""
    found = []
    for part in _parts(node):
        if not isinstance(part, ast.Slice) and _int_value(part) is None:
            counter = counter_part(part)
            if counter is not None:
                found.append(counter[0])
    return found


def counter_spans(func: ast.FunctionDef) -> dict[str, Spans]:
    """Each name a `for NAME in ...` loop of `func`'s own body binds -> the bodies of
    those loops, where it is surely bound; none for a name deleted, an `except ... as`
    target, or `global`/`nonlocal` anywhere in `func` (then a read may find it unbound)."""
    found: dict[str, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue  # another scope
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.body:
            first, last = node.body[0], node.body[-1]
            end = (last.end_lineno or last.lineno, last.end_col_offset or 0)
            found.setdefault(node.target.id, []).append(((first.lineno, first.col_offset), end))
        todo.extend(ast.iter_child_nodes(node))
    unsteady = _unsteady(func)
    return {k: tuple(v) for k, v in found.items() if k not in unsteady}


def index_record(node: ast.Subscript, args: list[ast.expr] | None = None) -> Index:
    """The manifest's form of a basic view's index: ``x[1:-1, None]`` is
    ``[[1, -1, None], None]``, ``u[1:-1, -2]`` is ``[[1, -1, None], -2]``, and with
    the site's arguments `args` (which pass its counters, `arguments`) ``u[:, k - 1]``
    is ``[[None, None, None], {"arg": <k's>, "add": -1}]``."""
    out: Index = []
    for part in _parts(node):
        if isinstance(part, ast.Slice):
            out.append([_bound(b) for b in (part.lower, part.upper, part.step)])
        elif _int_value(part) is None and (counter := counter_part(part)) is not None:
            name, offset = counter
            out.append({"arg": counter_argument(args or [], name.id), "add": offset})
        else:
            out.append(_int_value(part))  # None for a new axis
    return out


def counter_argument(args: list[ast.expr], name: str) -> int:
    """The position of the site's argument passing loop counter `name` (`arguments`)."""
    return next(i for i, a in enumerate(args) if isinstance(a, ast.Name) and a.id == name)


#: the lines where a steady name is surely bound: (after, until) means every line L
#: with after < L <= until
Bound = tuple[tuple[int, float], ...]


def steady_names(func: ast.FunctionDef) -> dict[str, Bound]:
    """Steady names of `func` (module docstring) -> the lines where they are bound: a
    parameter everywhere, a local from the line after its assignment to the end of the
    block holding it (the function's body: to its end)."""
    args = func.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found: dict[str, list[tuple[int, float]]] = {a.arg: [(0, _END)] for a in params if a}
    _block_bindings(func.body, _END, found)
    unsteady = _unsteady(func)
    return {k: tuple(v) for k, v in found.items() if k not in unsteady}


def _unsteady(func: ast.FunctionDef) -> set[str]:
    """Names `func` may leave unbound or that another scope rebinds."""
    unsteady = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del):
            unsteady.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:  # unbound after the handler
            unsteady.add(node.name)
        elif isinstance(node, ast.Nonlocal | ast.Global):
            unsteady.update(node.names)
    return unsteady


def _block_bindings(
    body: list[ast.stmt], until: float, found: dict[str, list[tuple[int, float]]]
) -> None:
    """Record each name a statement of `body` assigns as bound from the line after that
    statement to `until` (the block's last line), and so for the blocks nested in it;
    a nested definition's body is another scope."""
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for name in _names(target):
                    found.setdefault(name, []).append((stmt.end_lineno or stmt.lineno, until))
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                _block_bindings(block, block[-1].end_lineno or block[-1].lineno, found)
        for handler in [*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())]:
            block = handler.body
            if block:
                _block_bindings(block, block[-1].end_lineno or block[-1].lineno, found)


def deferrable(
    node: ast.expr, steady: Mapping[str, Bound], counters: Mapping[str, Spans] | None = None
) -> bool:
    """Is `node` a basic view (`deferred_view`) of a name surely bound at its line
    (`steady_names`), each counter of its index inside a loop binding it
    (`counter_spans`)?"""
    name = deferred_view(node)
    if name is None:
        return False
    if not any(after < node.lineno <= until for after, until in steady.get(name, ())):
        return False
    assert isinstance(node, ast.Subscript)
    for counter in counters_of(node):
        at = (counter.lineno, counter.col_offset)
        if not any(start <= at < end for start, end in (counters or {}).get(counter.id, ())):
            return False
    return True


def share(
    leaves: list[ast.expr], repeats: dict[int, int], deferred: set[int]
) -> tuple[list[ast.expr], dict[int, int]]:
    """`leaves` with each deferred view that repeats an earlier one (same name, same
    index) taken out: its occurrences join `repeats` (id -> the kept leaf's index)."""
    unique: list[ast.expr] = []
    first: dict[str, int] = {}
    old = {index: [k for k, v in repeats.items() if v == index] for index in set(repeats.values())}
    moved: dict[int, int] = {}
    for i, leaf in enumerate(leaves):
        key = ast.dump(leaf) if id(leaf) in deferred else None
        if key is not None and key in first:
            for node_id in [id(leaf), *old.get(i, ())]:
                moved[node_id] = first[key]
            continue
        if key is not None:
            first[key] = len(unique)
        for node_id in old.get(i, ()):
            moved[node_id] = len(unique)
        unique.append(leaf)
    return unique, moved


def arguments(
    leaves: Iterable[ast.expr], deferred: set[int]
) -> tuple[list[ast.expr], list[tuple[int, ast.Subscript | None]]]:
    """The site call's arguments and, per leaf, (its argument, the view taken of it or
    None): a deferred view passes its name (once per name), any other leaf itself; the
    loop counters of the views' indexes follow, once each."""
    args: list[ast.expr] = []
    by_name: dict[str, int] = {}
    sources: list[tuple[int, ast.Subscript | None]] = []
    counters: dict[str, ast.Name] = {}
    for leaf in leaves:
        if id(leaf) in deferred and isinstance(leaf, ast.Subscript):
            name = leaf.value
            assert isinstance(name, ast.Name)
            if name.id not in by_name:
                by_name[name.id] = len(args)
                args.append(name)
            sources.append((by_name[name.id], leaf))
            for counter in counters_of(leaf):
                counters.setdefault(counter.id, counter)
        else:
            sources.append((len(args), None))
            args.append(leaf)
    args.extend(ast.copy_location(ast.Name(c.id, ast.Load()), c) for c in counters.values())
    return args, sources


def _parts(node: ast.Subscript) -> list[ast.expr]:
    return node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]


def _int_value(node: ast.expr) -> int | None:
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    if negative:
        node = node.operand  # type: ignore[attr-defined]
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return -node.value if negative else node.value
    return None


def _bound(node: ast.expr | None) -> int | None:
    return None if node is None else _int_value(node)


def _names(target: ast.expr) -> Iterable[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _names(element)


__all__ = [
    "Bound",
    "Index",
    "Spans",
    "arguments",
    "counter_argument",
    "counter_part",
    "counter_spans",
    "counters_of",
    "deferrable",
    "deferred_view",
    "index_record",
    "share",
    "steady_names",
    "view_of",
]
