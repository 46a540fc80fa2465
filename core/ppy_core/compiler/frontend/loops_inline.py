"""Typed loops, forms built from others: conditional expressions, calls of the
module's small helper functions, and `for x in a` over a 1-D array.

The mixin of `loops.LoopsBuilder`.

- `a if c else b`: one slot set on each branch (one Python type on both, as any local).
- `match(seq[i], seq[j])`, `match` a module-level function bound once whose body is
  returns under `if`s (`if b1 + b2 == 3: return 1 else: return 0`): its arguments are
  evaluated in order into fresh slots and its body is built in their place, as one
  conditional expression. The run-time site checks on each call that the module's
  global is still that function (`helpers`: name and line; `ppy_numpy._runtime.loops`),
  else Python runs, so rebinding the helper changes what runs exactly as in Python.
- `for x in a` with `a` a 1-D array: `for k in range(len(a)): x = a[k]` (NumPy's
  iterator reads element k at step k, after the body's earlier writes, as the load does).
"""

from __future__ import annotations

import ast
from typing import Any

from ppy_core.compiler.frontend.loops_expr import Refused, Typed, ir_type
from ppy_core.ir.dialects import loops as L

_MAX_DEPTH = 8  # helpers calling helpers: deeper is refused (recursion among them)


class InlineForms:
    """Conditional expressions, helper calls, array iteration; mixed into LoopsBuilder."""

    func: ast.FunctionDef
    arrays: dict[str, Any]
    kinds: dict[str, str]
    bounds: dict[str, int]
    local_names: set[str]
    emit: Any
    region: Any
    expr: Any
    condition: Any
    _assign: Any

    helpers: dict[str, ast.FunctionDef]
    used_helpers: set[tuple[str, int]]
    inlining: list[str]

    def _at(self, node: ast.AST) -> str:
        """A name part unique to where `node` is in the function: its line relative to
        the function's (the IR is the same wherever the function starts) and column."""
        return f"{node.lineno - self.func.lineno}.{node.col_offset}"  # type: ignore[attr-defined]

    def conditional(self, node: ast.IfExp, assigned: set[str]) -> Typed:
        c = self.condition(node.test, assigned)
        slot = f"$if@{self._at(node)}.{len(self.inlining)}"

        def side(branch: ast.expr) -> Any:  # each side sets the one slot
            inner = set(assigned)
            return self.region(lambda: self._assign(slot, self.expr(branch, inner), node, inner))

        self.emit(L.IfOp, [c.value], regions=[side(node.body), side(node.orelse)])
        py = self.kinds[slot]
        out = self.emit(L.GetOp, [], ir_type(py), slot=slot, py=py)
        return Typed(out.results[0], py, self.bounds.get(slot, 0))

    def inline_call(self, node: ast.Call, assigned: set[str]) -> Typed | None:
        """A call of a module helper built in place; None for any other call."""
        f = node.func
        if not (isinstance(f, ast.Name) and f.id in self.helpers and f.id not in self.local_names):
            return None
        helper = self.helpers[f.id]
        where = f"line {node.lineno}: `{ast.unparse(node)}`"
        params = [a.arg for a in helper.args.args]
        if node.keywords or len(node.args) != len(params):
            raise Refused(node, f"{where}: call `{f.id}` with its {len(params)} arguments")
        if f.id in self.inlining or len(self.inlining) >= _MAX_DEPTH:
            raise Refused(node, f"{where}: `{f.id}` calls itself")
        body = helper_expression(helper)
        assert body is not None  # module_helpers keeps only those
        tag = f"@{self._at(node)}.{len(self.inlining)}"
        names = {p: f"{f.id}.{p}{tag}" for p in params}
        inner = set(assigned)
        for p, arg in zip(params, node.args, strict=True):  # Python's order, each once
            self._assign(names[p], self.expr(arg, assigned), node, inner)
        self.used_helpers.add((f.id, helper.lineno))
        self.inlining.append(f.id)
        try:
            return self.expr(_renamed(body, names), inner)  # type: ignore[no-any-return]
        finally:
            self.inlining.pop()

    def array_iteration(self, stmt: ast.For) -> ast.For | None:
        """`for x in a` (a 1-D array parameter) as the range loop it is; None otherwise."""
        it = stmt.iter
        if not (isinstance(it, ast.Name) and it.id in self.arrays):
            return None
        tensor = self.arrays[it.id].tensor
        if tensor is None or len(tensor.shape) != 1:
            raise Refused(stmt, f"line {stmt.lineno}: iterating a {len(tensor.shape)}-D array")
        if not isinstance(stmt.target, ast.Name):
            raise Refused(stmt, f"line {stmt.lineno}: iterate an array into one name")
        k = f"$k@{self._at(stmt)}"
        self.local_names.add(k)
        length = ast.Call(ast.Name("len", ast.Load()), [ast.Name(it.id, ast.Load())], [])
        element = ast.Subscript(ast.Name(it.id, ast.Load()), ast.Name(k, ast.Load()), ast.Load())
        bind = ast.Assign([ast.Name(stmt.target.id, ast.Store())], element)
        loop = ast.For(
            ast.Name(k, ast.Store()),
            ast.Call(ast.Name("range", ast.Load()), [length], []),
            [bind, *stmt.body],
            [],
        )
        return ast.fix_missing_locations(ast.copy_location(loop, stmt))


#: the helpers of the last module asked about: each function with a loop asks, and a
#: module of a thousand of them walked its whole tree a thousand times (issue 32: the
#: cold compile of a big module went quadratic); its tree is not changed meanwhile
_LAST: list[tuple[ast.Module, dict[str, ast.FunctionDef]]] = []


def module_helpers(tree: ast.Module | None) -> dict[str, ast.FunctionDef]:
    """The module's functions a typed loop may build in place: defined at top level
    once, bound nowhere else, undecorated, of plain positional parameters, whose body
    is returns under `if`s reading only its parameters (and imported modules). Read
    only (one answer per module tree, shared by its functions)."""
    if tree is None:
        return {}
    if _LAST and _LAST[0][0] is tree:
        return _LAST[0][1]
    out = _helpers(tree)
    _LAST[:] = [(tree, out)]
    return out


def _helpers(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    stores: dict[str, int] = {}
    for n in ast.walk(tree):
        names: list[str] = []
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names = [n.id]
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [n.name]
        elif isinstance(n, ast.Global | ast.Nonlocal):
            names = list(n.names) * 2
        elif isinstance(n, ast.alias):
            names = [(n.asname or n.name).partition(".")[0]]
        for name in names:
            stores[name] = stores.get(name, 0) + 1
    out = {}
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef) or stores.get(stmt.name) != 1:
            continue
        a = stmt.args
        if stmt.decorator_list or a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            continue
        if a.defaults or helper_expression(stmt) is None:
            continue
        params = {p.arg for p in a.args}
        # the body's names only: annotations (`b1: np.int32`) ran when the `def` did,
        # and the body built in place never reads them (Python enforces none of them)
        if any(
            isinstance(n, ast.Name) and n.id not in params and not _callee(stmt, n)
            for body in stmt.body
            for n in ast.walk(body)
        ):
            continue  # it reads a global: the caller's value of it is not the helper's
        out[stmt.name] = stmt
    return out


def helper_expression(func: ast.FunctionDef) -> ast.expr | None:
    """The function's body as one expression (`A if c else B`), or None."""
    return _expression([s for s in func.body if not _docstring(s)])


def _expression(body: list[ast.stmt]) -> ast.expr | None:
    if not body:
        return None
    first = body[0]
    if isinstance(first, ast.Return):
        return first.value  # None: `return` alone is Python's None, which is refused
    if isinstance(first, ast.If):
        then = _expression(first.body)
        rest = _expression(first.orelse + body[1:])
        if then is None or rest is None:
            return None
        return ast.copy_location(ast.IfExp(first.test, then, rest), first)
    return None


def _callee(func: ast.FunctionDef, name: ast.Name) -> bool:
    """Whether `name` starts a called dotted name (`np.abs(x)`, `abs(x)`): resolved
    through the module's imports and the builtins, never the caller's locals."""
    for n in ast.walk(func):
        if isinstance(n, ast.Call):
            f = n.func
            while isinstance(f, ast.Attribute):
                f = f.value
            if f is name:
                return True
    return False


def _renamed(body: ast.expr, names: dict[str, str]) -> ast.expr:
    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.Name:
            if node.id in names:
                return ast.copy_location(ast.Name(names[node.id], node.ctx), node)
            return node

    import copy

    return Rename().visit(copy.deepcopy(body))  # type: ignore[no-any-return]


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


__all__ = ["InlineForms", "helper_expression", "module_helpers"]
