"""Which functions and methods are typed by their calls (`runtime/observed.py`), and
which `self` attributes a method's signature describes.

A function qualifies when one of its parameters is unannotated, its parameters are
plain (no `*args`/`**kwargs`), no decorator but ppy's wraps it, and its body holds
something that could compile (an operation or a loop: one `np.maximum(x, 0)` is a
site once `x` is typed, as it is when annotated). A method of a class
defined at module level qualifies the same way when it can run outside its class
unchanged: no zero-argument `super()` or `__class__` (they need the class's cell),
no private name (`self.__x` is mangled by the class), not a static or class method.

A method's `self` attributes are leaves typed by observation: those it reads while
their value is still the one the call began with. Here, conservatively: read in the
method, and never written in it, or written only by top-level assignment statements
after (or in) the last statement that reads them. The dispatcher describes each from
the instance's `__dict__` (no property, `__getattr__` or other descriptor runs for
it); an attribute that lives elsewhere is described as missing and typed Unknown, and
every value the site reads is still guarded by the site itself.
"""

from __future__ import annotations

import ast

from ppy_core.compiler.frontend.syntax import own_nodes

MIN_OPERATIONS = 1


def could_compile(func: ast.FunctionDef) -> bool:
    """An operation or a loop: a body a signature's types could make a site of."""
    operations = sum(
        isinstance(n, ast.BinOp | ast.UnaryOp | ast.Compare | ast.Call | ast.For | ast.While)
        for n in own_nodes(func)
    )
    return operations >= MIN_OPERATIONS


def plain_parameters(func: ast.FunctionDef) -> tuple[str, ...] | None:
    """The parameters in the order the dispatcher binds them; None with `*args` or
    `**kwargs` (a signature of those is not a fixed tuple)."""
    args = func.args
    if args.vararg or args.kwarg:
        return None
    return tuple(a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])


def movable_method(func: ast.FunctionDef) -> bool:
    """Whether the method means the same compiled outside its class body."""
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and node.id in ("super", "__class__"):
            return False
        name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
        if isinstance(name, str) and name.startswith("__") and not name.endswith("__"):
            return False
    return True


def observed_attributes(func: ast.FunctionDef, self_name: str) -> tuple[str, ...]:
    """The `self` attributes whose values at the call's start the method reads."""
    reads: dict[str, int] = {}
    writes: dict[str, list[tuple[int, bool]]] = {}
    for index, stmt in enumerate(func.body):
        top_assign = isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign)
        for node in ast.walk(stmt):
            if not (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == self_name
            ):
                continue
            if isinstance(node.ctx, ast.Load):
                reads[node.attr] = index
            else:
                plain = top_assign and node in _targets(stmt)
                writes.setdefault(node.attr, []).append((index, plain))
            if isinstance(stmt, ast.AugAssign) and node in _targets(stmt):
                reads[node.attr] = index  # `self.x += v` reads it first
    found = []
    for attr, last_read in sorted(reads.items()):
        if any(isinstance(n, ast.Name) and n.id == self_name for n in _rebinding(func, self_name)):
            return ()  # `self` rebound: its attributes are another object's
        done = writes.get(attr, [])
        if all(plain and index >= last_read for index, plain in done):
            found.append(attr)
    return tuple(found)


def _targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, ast.AugAssign | ast.AnnAssign):
        return [stmt.target]
    return []


def _rebinding(func: ast.FunctionDef, name: str) -> list[ast.Name]:
    return [
        n
        for n in ast.walk(func)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store | ast.Del)
    ]


__all__ = [
    "could_compile",
    "movable_method",
    "observed_attributes",
    "plain_parameters",
]
