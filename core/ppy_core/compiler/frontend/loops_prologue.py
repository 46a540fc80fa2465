"""Typed loops: the scalar statements a function starts with, run as Python.

deriche starts with its filter's constants, `k = (1.0 - np.exp(-alpha)) * ... ;
a1 = a5 = k; b1 = 2.0**(-alpha); c1 = c2 = 1`, then loops over views scaled by them.
NumPy's scalar `np.exp` is not something the loops reproduce (its SIMD loop or
libm's, chosen per call by NumPy), but nothing needs it compiled: the run-time site
runs exactly those leading statements in Python, before the call, and hands their
values in as more parameters (`prologue`, as it does for the arrays a function makes
up front, `loops_locals`). Python's own code computes them, in Python's order, with
Python's warnings and errors; what the compiled function gets is guarded per call.

A leading statement qualifies when it binds plain names, each bound nowhere else,
to a number (int or float, as the plugins type it) computed from numbers: constants,
parameters, earlier such names, arithmetic and calls of the array library's
functions. A float name the rest reads must be read only beside an array (`a1 *
imgIn[:, j]`, `c1 * (y1 + y2)`), where a float and an np.float64 make the same
double ("real"); an int is passed as an int. `x = A.max()` / `A.min()` of a float64
array parameter (azimint_naive's `rmax = radius.max()`) is an np.float64 wherever it
is read: passed as its double, typed np.float64 in the function. Once the prologue ran, a call the
compiled function leaves to Python runs the rest of the body only (`rest`), so
nothing of the prologue runs twice. Both are the program's own lines, compiled onto
the lines they have in its file: warnings and tracebacks name the program's lines.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field
from typing import Any

from ppy_core.compiler.frontend.bound import binding_counts
from ppy_core.compiler.frontend.loops_expr import Param, subscript_chain
from ppy_core.ir.types import F64, I64, UNKNOWN, ScalarType

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div)  # what array statements compile


@dataclass(frozen=True, slots=True)
class Prologue:
    """The leading scalar statements: what they bind that the rest reads, as params."""

    params: list[Param] = field(default_factory=list)
    skipped: frozenset[int] = frozenset()  # ids of the statements the site runs
    source: tuple[str, ...] = ()  # their lines, indented, from line `at` on
    at: int = 0
    rest: tuple[str, ...] = ()  # the rest of the body's lines, from line `rest_at` on
    rest_at: int = 0
    only_prologue: frozenset[str] = frozenset()  # parameters only the prologue reads
    numpy_floats: frozenset[str] = frozenset()  # made names that are np.float64 (extrema)


def scalar_prologue(func: ast.FunctionDef, typer: Any, params: list[Param]) -> Prologue:
    """The function's leading scalar statements (module docstring), or an empty one."""
    counts = binding_counts(func)
    body = [s for s in func.body if not _docstring(s)]
    arrays = {p.name for p in params if p.tensor is not None}
    numbers = {p.name: typer.parameter(a) for p, a in zip(params, func.args.args, strict=False)}
    numbers = {k: t for k, t in numbers.items() if k not in arrays and t in (F64, I64)}
    bound: dict[str, ScalarType] = {}
    taken: list[ast.Assign] = []
    floats = {p.name for p in params if p.tensor is not None and p.tensor.element.kind == "f64"}
    extrema: set[str] = set()
    for stmt in body:
        name = _extremum(stmt, typer, counts, floats)
        if name is not None:  # `rmax = radius.max()`: an np.float64, whatever reads it
            bound[name] = F64
            extrema.add(name)
            taken.append(stmt)  # type: ignore[arg-type]
            continue
        t = _scalar_statement(stmt, typer, counts, numbers | bound)
        if t is None:
            break
        for target in stmt.targets:  # type: ignore[attr-defined]
            bound[target.id] = t
        taken.append(stmt)  # type: ignore[arg-type]
    if not taken or len(taken) == len(body) or _mangled(func):
        return Prologue()
    rest = body[len(taken) :]
    reads = _reads(rest)
    if not reads & set(bound):
        return Prologue()
    beside = _beside_arrays(rest, arrays | _made(rest))
    made: list[Param] = []
    for name, t in bound.items():
        if name not in reads:
            continue
        if name in extrema:  # passed as its double, read as the np.float64 it is
            made.append(Param(name, "real"))
        elif t == I64:
            made.append(Param(name, "int"))
        elif all(id(n) in beside for n in _loads(rest, name)):
            made.append(Param(name, "real"))
        else:
            return Prologue()  # a float read where its Python type may matter
    params_read = {n for n in numbers if n in _reads(taken)} - reads
    end = func.end_lineno or rest[-1].end_lineno or rest[-1].lineno
    source, rest_text = _text(typer, taken, taken[-1].end_lineno), _text(typer, rest, end)
    if rest_text[0] <= taken[-1].end_lineno:  # type: ignore[operator]
        return Prologue()  # `c = 1; y = ...`: one line holds both parts
    return Prologue(
        made,
        frozenset(id(s) for s in taken),
        source[1],
        source[0],
        rest_text[1],
        rest_text[0],
        frozenset(params_read),
        frozenset(extrema),
    )


def _scalar_statement(
    stmt: ast.stmt, typer: Any, counts: Any, known: dict[str, ScalarType]
) -> ScalarType | None:
    """The number type `stmt` binds, if it is a prologue statement (module docstring)."""
    if not (
        isinstance(stmt, ast.Assign)
        and all(isinstance(t, ast.Name) and counts[t.id] == 1 for t in stmt.targets)
        and _numeric(stmt.value, typer, known)
    ):
        return None
    saved, saved_memo = typer.env, typer.memo
    typer.env, typer.memo = {**saved, **known}, None
    try:
        t = typer.expr(stmt.value, {})
    finally:
        typer.env, typer.memo = saved, saved_memo
    if t in (F64, I64):
        return t
    # a number the plugins do not type (`2.0 ** (-alpha)`): taken as a float, which the
    # site's guard checks (anything else there runs the rest as Python)
    return F64 if t is UNKNOWN else None


def _extremum(stmt: ast.stmt, typer: Any, counts: Any, floats: set[str]) -> str | None:
    """x for `x = A.max()` / `A.min()` / `np.max(A)` / `np.min(A)`, A a float64 array
    parameter and x bound nowhere else: Python computes it (NumPy's value, its error
    for an empty A), and it is always an np.float64 (the site guards A's dtype)."""
    if not (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and counts[stmt.targets[0].id] == 1
        and isinstance(stmt.value, ast.Call)
        and not stmt.value.keywords
    ):
        return None
    call = stmt.value
    if isinstance(call.func, ast.Attribute) and call.func.attr in ("max", "min") and not call.args:
        array = call.func.value
    elif typer.qualname(call.func) in ("numpy.max", "numpy.min") and len(call.args) == 1:
        array = call.args[0]
    else:
        return None
    return stmt.targets[0].id if isinstance(array, ast.Name) and array.id in floats else None


def _numeric(node: ast.expr, typer: Any, known: dict[str, ScalarType]) -> bool:
    """Numbers only: constants, known names, arithmetic, the library's functions of those."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.Name):
        return node.id in known
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub | ast.UAdd) and _numeric(node.operand, typer, known)
    if isinstance(node, ast.BinOp):
        return (
            isinstance(node.op, _ARITHMETIC)
            and _numeric(node.left, typer, known)
            and _numeric(node.right, typer, known)
        )
    if isinstance(node, ast.Call):
        name = typer.qualname(node.func) or ""
        return (
            name.startswith("numpy.")
            and not node.keywords
            and all(_numeric(a, typer, known) for a in node.args)
        )
    return False


def _reads(stmts: list[ast.stmt]) -> set[str]:
    return {
        n.id
        for s in stmts
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def _loads(stmts: list[ast.stmt], name: str) -> list[ast.Name]:
    return [
        n
        for s in stmts
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
    ]


def _made(stmts: list[ast.stmt]) -> set[str]:
    """Names the rest binds at its top level to a call or an array expression: they
    may be arrays (the loops builder decides; here they only widen 'beside arrays')."""
    return {
        t.id
        for s in stmts
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call | ast.BinOp)
        for t in s.targets
        if isinstance(t, ast.Name)
    }


def _beside_arrays(stmts: list[ast.stmt], arrays: set[str]) -> set[int]:
    """ids of the names that are an operand of + - * / whose other operand holds an
    array: a name of `arrays`, a view of one, or arithmetic holding either."""

    def holds(node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id in arrays
        if isinstance(node, ast.Subscript):
            base, levels = subscript_chain(node)
            slices = any(isinstance(i, ast.Slice) for level in levels for i in level)
            return isinstance(base, ast.Name) and base.id in arrays and slices
        if isinstance(node, ast.BinOp):
            return holds(node.left) or holds(node.right)
        return False

    out: set[int] = set()
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.BinOp) and isinstance(n.op, _ELEMENTWISE):
                for mine, other in ((n.left, n.right), (n.right, n.left)):
                    if isinstance(mine, ast.Name) and holds(other):
                        out.add(id(mine))
    return out


def _text(typer: Any, stmts: list[Any], end: Any) -> tuple[int, tuple[str, ...]]:
    """(first line, lines) of the statements as the program has them (lines
    `stmts[0].lineno` to `end` of its file, where they parse to these very
    statements), so that Python running them gives the program's lines and columns
    to warnings and tracebacks; else each unparsed onto the line it starts on."""
    first = stmts[0].lineno
    try:
        with open(typer.path, encoding="utf-8") as f:  # the file this module was read from
            lines = f.read().splitlines()[first - 1 : end]
        tree = ast.parse(textwrap.dedent("\n".join(lines)))
        if [ast.dump(s) for s in tree.body] == [ast.dump(s) for s in stmts]:
            return first, tuple(lines)
    except (OSError, SyntaxError, ValueError, TypeError):
        pass
    out: list[str] = []
    for s in stmts:
        out.extend([""] * (s.lineno - first - len(out)))
        out.extend(f"    {line}" for line in ast.unparse(s).splitlines())
    return first, tuple(out)


def _mangled(func: ast.FunctionDef) -> bool:
    """Whether the body names a private `__x`, which Python mangles inside a class: the
    site's own Python for the prologue and the rest, made outside it, could not."""

    def private(name: str) -> bool:
        return name.startswith("__") and not name.endswith("__")

    return any(
        (isinstance(n, ast.Name) and private(n.id))
        or (isinstance(n, ast.Attribute) and private(n.attr))
        for n in ast.walk(func)
    )


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def only_prologue(p: Param, prologue: Prologue) -> Param:
    """A float parameter only the prologue reads takes an np.float64 too: the compiled
    function never reads it, and what the prologue makes of it is guarded itself."""
    if p.kind == "float" and p.name in prologue.only_prologue:
        return Param(p.name, "real")
    return p


__all__ = ["Prologue", "only_prologue", "scalar_prologue"]
