"""Typed loops: a function of scalar loops over arrays, built into the `loops` dialect.

A function qualifies when every parameter is annotated `int`, `float` or as an
array the plugins type (NumPy: float64/int64, its rank read from its indexing),
and every statement is one this module builds: `for ... in range(...)`, `while`,
`if`, assignments to locals and to array elements, augmented assignments,
`break`/`continue`/`return`/`pass`; with NumPy's `np.dot(u, v)` / `u @ v` of
float64 vector views (`A[i, :j]`, `A[k + 1:, k]`: NumPy's own BLAS routine, see
ppy_llvm._loops_blas), `np.sqrt` of scalars, in-place updates of arrays and views
by a scalar (`C *= beta`, `C[i, :i + 1] *= beta`), array statements
(`C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]`, `Q[:, k] = A[:, k] / R[k, k]`:
`loops_vector`), and arrays made up front and returned (`x = np.zeros_like(b)`,
`np.zeros((n, n), dtype=b.dtype)` ... `return x, y`, `loops_locals`), leading scalar
statements the site runs as Python (deriche's `a1 = a5 = k`, `b1 = 2.0**(-alpha)`,
`loops_prologue`), whole arrays of rank 2 in array statements (`imgOut[:] = c2 *
(y1 + y2)`, `loops_flat`), and the mean or sum of the elements a mask of comparisons
selects (`m = np.logical_and(lo <= r, r < hi); v = d[m]; t = v.mean()`,
`loops_masked`). Anything else
keeps the whole function Python and the refusal names the statement (`ppy explain`).

Python's meaning is kept exactly: every value carries its Python type (`py`, see
the dialect), a local has one type on every path, a local is read only where it is
definitely assigned, and Python int arithmetic is compiled only where its range is
proven to fit 64 bits (ints from parameters and shapes are guarded below 2**32 at
run time; the bound of every expression is propagated; a bound that keeps growing
through a loop, such as an accumulator, refuses the function).
"""

from __future__ import annotations

import ast
import logging
from typing import Any

from ppy_core.compiler.frontend.loops_bounds import counter_cap
from ppy_core.compiler.frontend.loops_expr import (
    _BINOPS,
    _ELEMENT_KIND,
    _FLOATS,
    ARG_BOUND,
    INT_LIMIT,
    NARROW,
    LoopExpressions,
    Param,
    Refused,
    Typed,
    _shape_axis,
    ir_type,
    subscript_chain,
)
from ppy_core.compiler.frontend.loops_flat import FlatViews
from ppy_core.compiler.frontend.loops_flip import FlipViews
from ppy_core.compiler.frontend.loops_gather import GatherViews
from ppy_core.compiler.frontend.loops_inline import InlineForms, module_helpers
from ppy_core.compiler.frontend.loops_ints import NarrowInts
from ppy_core.compiler.frontend.loops_locals import local_arrays
from ppy_core.compiler.frontend.loops_masked import MaskedReductions
from ppy_core.compiler.frontend.loops_outer import OuterStatements, whole_subscript
from ppy_core.compiler.frontend.loops_prologue import only_prologue, scalar_prologue
from ppy_core.compiler.frontend.loops_vector import VectorStatements
from ppy_core.compiler.frontend.loops_versions import split_versions
from ppy_core.ir.core import Block, Operation, Region, Value
from ppy_core.ir.dialects import loops as L
from ppy_core.ir.dialects.builtin import FuncOp, ReturnOp
from ppy_core.ir.types import F64, I64, ScalarType, TensorType

log = logging.getLogger(__name__)


class LoopsBuilder(
    FlatViews,
    FlipViews,
    GatherViews,
    MaskedReductions,
    OuterStatements,
    VectorStatements,
    NarrowInts,
    InlineForms,
    LoopExpressions,
):
    """Builds one function's loops IR, or raises Refused."""

    def __init__(
        self,
        func: ast.FunctionDef,
        typer: Any,
        library: str = "",
        helpers: dict[str, ast.FunctionDef] | None = None,
    ) -> None:
        self.func, self.typer, self.library = func, typer, library
        self.helpers = helpers or {}  # module functions a call builds in place
        self.used_helpers: set[tuple[str, int]] = set()  # (name, line): guarded per call
        self.inlining: list[str] = []
        self.local_names = {a.arg for a in func.args.args} | {
            n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.bounds: dict[str, int] = {}  # int slot -> proven bound, grown to a fixpoint
        self.tagged: set[str] = set()  # slots holding a float or an np.float64 ("fnum")
        self.rerun = False
        self.grown: dict[str, ast.AST] = {}
        self.caps: dict[str, int] = {}  # while-loop counters' proven bounds
        self.compared: dict[int, Typed] = {}  # a Compare's first right operand, as typed
        self.view_locals: dict[str, Any] = {}  # `cols = A_col[lo:hi]` (loops_gather)

    # -- parameters --------------------------------------------------------------
    def params(self) -> list[Param]:
        args = self.func.args
        # a default is the caller's to fill in: the site passes it as any argument
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise Refused(self.func, "only plain positional parameters compile")
        ranks = self._ranks()
        out = []
        for arg in args.args:
            t = self.typer.parameter(arg)  # its annotation's, else its call's: one rule
            if t == I64:
                out.append(Param(arg.arg, "int"))
                continue
            if t == F64:
                out.append(Param(arg.arg, "float"))
                continue
            if isinstance(t, TensorType) and t.library and self.library in ("", t.library):
                self.library = t.library
                if t.element.kind not in _ELEMENT_KIND:
                    raise Refused(arg, f"`{arg.arg}`: only float64 and int64 elements compile")
                if not any(
                    isinstance(n, ast.Name) and n.id == arg.arg for n in ast.walk(self.func)
                ):
                    out.append(Param(arg.arg, "unused"))  # Python ignores it: so do we
                    continue
                rank = ranks.get(arg.arg) or self.implied_rank(arg.arg)
                rank = rank or self.whole_rank(arg.arg, t)  # used whole (loops_flat)
                rank = rank or self._shape_rank(arg.arg)
                if rank not in (1, 2):
                    raise Refused(arg, f"`{arg.arg}` is not indexed as a 1-D or 2-D array")
                if t.shape is not None and len(t.shape) != rank:
                    raise Refused(arg, f"`{arg.arg}` is indexed with {rank} indices")
                out.append(
                    Param(arg.arg, "array", TensorType(t.element, (None,) * rank, t.library))
                )
                continue
            raise Refused(arg, f"parameter `{arg.arg}` is not an int, float or typed array")
        return out

    def _shape_rank(self, name: str) -> int:
        """The rank of an array used only through `len` / `.shape[k]`: the least that
        has those axes (the guard checks it; another rank runs Python)."""
        axes = [0]
        for node in ast.walk(self.func):
            found = _shape_axis(node)
            if found and isinstance(found[0], ast.Name) and found[0].id == name:
                axes.append(found[1])
        return max(axes) + 1

    def _ranks(self) -> dict[str, int]:
        ranks: dict[str, int] = {}
        inner = {id(n.value) for n in ast.walk(self.func) if isinstance(n, ast.Subscript)}
        for node in ast.walk(self.func):
            # `X[:]` says nothing of X's rank
            if (
                isinstance(node, ast.Subscript)
                and id(node) not in inner
                and not whole_subscript(node)
            ):
                base, levels = subscript_chain(node)  # `a[i][j]` indexes a twice
                if not isinstance(base, ast.Name):
                    continue
                n = sum(len(level) for level in levels)
                if ranks.setdefault(base.id, n) != n:
                    raise Refused(
                        node,
                        f"`{base.id}` is indexed with {n} and {ranks[base.id]} indices",
                    )
        return ranks

    # -- the build, repeated until the int bounds stop growing -----------------------
    def build(self) -> FuncOp:
        params = self.params()
        self.prologue = scalar_prologue(self.func, self.typer, params)  # run as Python
        self.locals = local_arrays(self.func, self.typer, params, self.prologue.skipped)
        params = _scales(self.func, params, {p.name for p in self.locals.params})
        params = [only_prologue(p, self.prologue) for p in params]
        # the prologue's numbers and the arrays made up front: passed in
        params = params + self.prologue.params + self.locals.params
        for _ in range(8):  # a bound still growing after this grows with each iteration
            before = dict(self.bounds)
            self.rerun, self.grown = False, {}
            func = self._build_once(params)
            if self.bounds == before and not self.rerun:
                return func
        name, node = next(iter(self.grown.items()), ("", self.func))
        raise Refused(
            node,
            f"line {getattr(node, 'lineno', 0)}: the int `{name}` grows with every iteration "
            "(Python's ints do not overflow; a machine int would)",
            "E1061",
        )

    def _build_once(self, params: list[Param]) -> FuncOp:
        self.arrays = {p.name: p for p in params if p.kind == "array"}
        self.kinds: dict[str, str] = {}
        self.result: str | None = None
        self.writes: set[str] = set()
        types = [p.tensor if p.tensor is not None else ir_type(p.kind) for p in params]
        # an unused parameter is passed to nothing: its type is never guarded
        func = FuncOp.build(self.func.name, types, [], [p.name for p in params])
        self.block = func.entry
        self.args = dict(zip([p.name for p in params], func.entry.args, strict=True))
        assigned: set[str] = set()
        for p in params:
            if p.kind in ("int", "float", "real"):
                bound = ARG_BOUND if p.kind == "int" else 0
                py = "float" if p.kind == "real" else p.kind  # the same double either way
                py = "f64" if p.name in self.prologue.numpy_floats else py  # `A.max()`
                self._assign(p.name, Typed(self.args[p.name], py, bound), self.func, assigned)
        # the site runs the prologue, the allocations and the return
        skipped = self.locals.skipped | self.prologue.skipped
        body = [s for s in self.func.body if not _docstring(s) and id(s) not in skipped]
        names = {p.name for p in params}
        body, versions = split_versions(body, set(self.arrays), names)  # a slot per rebinding
        self.local_names |= versions
        falls = self.statements(body, assigned, loop=False)
        if falls and self.result not in (None, "none"):
            raise Refused(self.func.body[-1], "the function can end without a return value")
        self.block = func.entry
        self.emit(ReturnOp, [])  # falling off the end: Python's None
        func.attributes["py_args"] = tuple(p.kind for p in params)
        func.attributes["py_result"] = self.result or "none"
        func.attributes["writes"] = tuple(sorted(self.writes))
        func.attributes["params"] = tuple(p.name for p in params)
        if self.used_helpers:  # the run-time site checks each is still the module's
            func.attributes["helpers"] = tuple(sorted(self.used_helpers))
        if self.locals.prologue or self.locals.returns or self.prologue.source:
            func.attributes["prologue"] = self.locals.prologue
            func.attributes["returns"] = self.locals.returns
            func.attributes["single"] = self.locals.single
        if self.prologue.source:  # its lines, what it makes, the body left to Python
            made = self.prologue.params + self.locals.params
            func.attributes["made"] = tuple(p.name for p in made)
            func.attributes["scalars"] = (self.prologue.at, *self.prologue.source)
            func.attributes["rest"] = (self.prologue.rest_at, *self.prologue.rest)
        return func

    def emit(
        self,
        cls: type[Operation],
        operands: list[Value],
        result: ScalarType | None = None,
        regions: list[Region] = (),
        **attributes: Any,
    ) -> Operation:  # type: ignore[assignment]
        op = cls(operands, [result] if result is not None else [], attributes, list(regions))
        self.block.append(op)
        return op

    def region(self, fill: Any) -> Region:
        outer, self.block = self.block, Block()
        try:
            fill()
            return Region([self.block])
        finally:
            self.block = outer

    # -- statements --------------------------------------------------------------
    def statements(self, body: list[ast.stmt], assigned: set[str], loop: bool) -> bool:
        """Build `body`; whether control can fall off its end."""
        return all(self.statement(stmt, assigned, loop) for stmt in body)

    def statement(self, stmt: ast.stmt, assigned: set[str], loop: bool) -> bool:
        if isinstance(stmt, ast.Pass) or self.masked_statement(stmt):
            return True  # a mask and its selection are built at their mean (loops_masked)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _pairs(stmt):
            # `a, b = x, y`: the right side's values first, then each name in turn
            values = [self.expr(v, assigned) for v in stmt.value.elts]  # type: ignore[attr-defined]
            for target, value in zip(stmt.targets[0].elts, values, strict=True):  # type: ignore[attr-defined]
                self._store(target, value, stmt, assigned)
            return True
        if isinstance(stmt, ast.Assign) and self.view_local(stmt, assigned):
            return True  # `cols = A_col[A_row[i]:A_row[i + 1]]` (loops_gather)
        if isinstance(stmt, ast.Assign) and self.outer_update(stmt, assigned):
            return True  # `X[:] = np.minimum(X, np.add.outer(u, v))` (loops_outer)
        if isinstance(stmt, ast.Assign) and self.vector_statement(stmt, assigned):
            return True  # `Q[:, k] = A[:, k] / R[k, k]` (loops_vector)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            self._store(stmt.targets[0], self.expr(stmt.value, assigned), stmt, assigned)
            return True
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None and stmt.simple:
            self._store(stmt.target, self.expr(stmt.value, assigned), stmt, assigned)
            return True
        if isinstance(stmt, ast.AugAssign) and self.flip_update(stmt, assigned):
            return True  # `y[:k] += alpha * np.flip(y[:k])` (loops_flip)
        if isinstance(stmt, ast.AugAssign) and self.vector_statement(stmt, assigned):
            return True  # `C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]` (loops_vector)
        if isinstance(stmt, ast.AugAssign) and self.is_view(stmt.target):
            self.inplace(stmt, assigned)
            return True
        if isinstance(stmt, ast.AugAssign) and type(stmt.op) in _BINOPS:
            load = ast.copy_location(_as_load(stmt.target), stmt.target)
            value = ast.copy_location(ast.BinOp(load, stmt.op, stmt.value), stmt)
            self._store(stmt.target, self.expr(value, assigned), stmt, assigned)
            return True
        if isinstance(stmt, ast.For) and not stmt.orelse:
            return self._for(stmt, assigned)
        if isinstance(stmt, ast.While) and not stmt.orelse:
            cond = self.region(
                lambda: self.emit(L.YieldOp, [self.condition(stmt.test, assigned).value])
            )
            inner = set(assigned)
            cap = self._counter_cap(stmt)
            if cap is not None:
                self.caps[cap[0]] = cap[1]
            try:
                body = self.region(lambda: self.statements(stmt.body, inner, loop=True))
            finally:
                if cap is not None:
                    del self.caps[cap[0]]
            self.emit(L.WhileOp, [], regions=[cond, body])
            return True
        if isinstance(stmt, ast.If):
            c = self.condition(stmt.test, assigned)
            a, b = set(assigned), set(assigned)
            fa = fb = True

            def then() -> None:
                nonlocal fa
                fa = self.statements(stmt.body, a, loop)

            def orelse() -> None:
                nonlocal fb
                fb = self.statements(stmt.orelse, b, loop)

            self.emit(L.IfOp, [c.value], regions=[self.region(then), self.region(orelse)])
            # what is assigned after: on every branch that falls through
            live = [s for s, f in ((a, fa), (b, fb)) if f]
            assigned |= set.intersection(*live) if live else set()
            return fa or fb
        if isinstance(stmt, ast.Break | ast.Continue):
            if not loop:
                raise Refused(stmt, "break/continue outside a loop")
            self.emit(L.BreakOp if isinstance(stmt, ast.Break) else L.ContinueOp, [])
            return False
        if isinstance(stmt, ast.Return):
            self._return(stmt, assigned)
            return False
        what = ast.unparse(stmt).splitlines()[0]
        raise Refused(stmt, f"line {stmt.lineno}: `{what}` is not a typed-loop statement")

    def _for(self, stmt: ast.For, assigned: set[str]) -> bool:
        rewritten = self.array_iteration(stmt)  # `for x in a` (loops_inline)
        if rewritten is not None:
            return self._for(rewritten, assigned)
        it = stmt.iter
        if not (
            isinstance(stmt.target, ast.Name)
            and isinstance(it, ast.Call)
            and self._builtin(it.func) == "range"
            and 1 <= len(it.args) <= 3
            and not it.keywords
        ):
            raise Refused(stmt, f"line {stmt.lineno}: only `for name in range(...)` loops compile")
        args = [self.integer(a, assigned) for a in it.args]
        lo = args[0] if len(args) > 1 else self.const(0, "int")
        hi = args[1] if len(args) > 1 else args[0]
        step = 1
        if len(it.args) == 3:
            s = it.args[2]
            value = (
                -s.operand.value
                if isinstance(s, ast.UnaryOp)
                and isinstance(s.op, ast.USub)
                and isinstance(s.operand, ast.Constant)
                else getattr(s, "value", None)
            )
            if type(value) is not int or value == 0:
                raise Refused(
                    stmt, f"line {stmt.lineno}: a range step must be a nonzero int constant"
                )
            step = value
        name = stmt.target.id
        if name in self.arrays:
            raise Refused(stmt, f"line {stmt.lineno}: array parameter `{name}` is rebound")
        self._slot(name, "int", max(lo.bound, hi.bound), stmt)
        inner = set(assigned) | {name}
        body = self.region(lambda: self.statements(stmt.body, inner, loop=True))
        self.emit(L.ForOp, [lo.value, hi.value], regions=[body], slot=name, step=step)
        return True

    def _return(self, stmt: ast.Return, assigned: set[str]) -> None:
        if stmt.value is None or (
            isinstance(stmt.value, ast.Constant) and stmt.value.value is None
        ):
            py, operands = "none", []
        else:
            t = self.expr(stmt.value, assigned)
            self.wide(stmt, t)
            py, operands = t.py, [t.value]
        if self.result is not None and self.result != py:
            raise Refused(
                stmt, f"line {stmt.lineno}: returns a {py} here and a {self.result} elsewhere"
            )
        self.result = py
        self.emit(L.ReturnOp, operands)

    def _store(self, target: ast.expr, value: Typed, stmt: ast.stmt, assigned: set[str]) -> None:
        if isinstance(target, ast.Name):
            self._assign(target.id, value, stmt, assigned)
            return
        if isinstance(target, ast.Subscript):
            array, indices, axes = self._element(target, assigned)
            kind = _ELEMENT_KIND[array.tensor.element.kind]  # type: ignore[union-attr]
            if kind in NARROW or value.py in NARROW:  # np.int32 / np.uint8 (loops_ints)
                value = self.narrow_store(kind, value, stmt)
            elif kind == "f64" and value.py in ("int", "i64"):
                value = self.cast(value, "float")
            elif kind == "i64" and value.py not in ("int", "i64"):
                raise Refused(stmt, f"line {stmt.lineno}: stores a {value.py} into an int64 array")
            elif kind == "f64" and value.py == "bool":
                raise Refused(stmt, f"line {stmt.lineno}: stores a bool into a float64 array")
            self.writes.add(array.name)
            self.emit(L.StoreOp, [self.args[array.name], value.value, *indices], axes=axes)
            return
        raise Refused(stmt, f"line {stmt.lineno}: assigns to `{ast.unparse(target)}`")

    def _assign(self, name: str, value: Typed, node: ast.AST, assigned: set[str]) -> None:
        if name in self.arrays:
            raise Refused(
                node, f"line {getattr(node, 'lineno', 0)}: array parameter `{name}` is rebound"
            )
        self._slot(name, value.py, value.bound, node)
        if name in self.tagged and value.py != "fnum":
            value = self.cast(self.cast(value, "float") if value.py == "int" else value, "fnum")
        self.emit(L.SetOp, [value.value], slot=name)
        assigned.add(name)

    def _counter_cap(self, stmt: ast.While) -> tuple[str, int] | None:
        return counter_cap(stmt, self.kinds, self.compared)

    def _slot(self, name: str, py: str, bound: int, node: ast.AST) -> None:
        if name in self.tagged:
            py = "fnum"
        known = self.kinds.setdefault(name, py)
        if known != py and {known, py} <= _FLOATS:
            # a float here, an np.float64 there: one tagged slot (the build reruns)
            self.tagged.add(name)
            self.rerun = True
            return
        if known != py:
            raise Refused(
                node,
                f"line {getattr(node, 'lineno', 0)}: `{name}` is a {known} and a {py}: "
                "its Python type would depend on the path taken",
                "E1062",
            )
        if py == "int":
            if name in self.caps:  # a counter of `while name < limit` (`_counter_cap`)
                bound = self.caps[name]  # every value it takes in the body: no fixpoint climb
            grown = max(self.bounds.get(name, 0), bound)
            if grown > self.bounds.get(name, 0):
                self.grown.setdefault(name, node)
            if grown >= INT_LIMIT:
                raise Refused(
                    node,
                    f"line {getattr(node, 'lineno', 0)}: `{name}` is an int not proven "
                    "to fit 64 bits",
                    "E1061",
                )
            self.bounds[name] = grown


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _scales(func: ast.FunctionDef, params: list[Param], made: set[str]) -> list[Param]:
    """A `float` parameter used only as the whole right side of in-place updates
    (`B *= alpha`) or as an operand of + - * / beside an array's element or view
    (`alpha * A[i, k]`, `A[:n, k] * alpha`, `alpha * x` of an array x) takes an
    np.float64 as well ("real"): NumPy's scalar math or ufunc makes the same double
    of either, with the same warnings, so the answer cannot tell them apart (NPBench
    passes them). `made`: the arrays the function makes up front."""
    arrays = {p.name for p in params if p.kind == "array"} | made

    def updated(target: ast.expr) -> bool:  # an array parameter, or a view of one
        if isinstance(target, ast.Name):
            return target.id in arrays
        base, levels = subscript_chain(target) if isinstance(target, ast.Subscript) else (None, [])
        slices = any(isinstance(item, ast.Slice) for level in levels for item in level)
        return isinstance(base, ast.Name) and base.id in arrays and slices

    whole = {
        id(n.value)
        for n in ast.walk(func)
        if isinstance(n, ast.AugAssign) and isinstance(n.value, ast.Name) and updated(n.target)
    }

    def of_array(node: ast.expr) -> bool:  # an array, its element or its view
        base = subscript_chain(node)[0] if isinstance(node, ast.Subscript) else node
        return isinstance(base, ast.Name) and base.id in arrays

    for n in ast.walk(func):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
            for mine, other in ((n.left, n.right), (n.right, n.left)):
                if isinstance(mine, ast.Name) and of_array(other):
                    whole.add(id(mine))
    out = []
    for p in params:
        if p.kind == "float":
            uses = [
                n
                for n in ast.walk(func)
                if isinstance(n, ast.Name) and n.id == p.name and isinstance(n.ctx, ast.Load)
            ]
            stored = any(
                isinstance(n, ast.Name) and n.id == p.name and not isinstance(n.ctx, ast.Load)
                for n in ast.walk(func)
            )
            if uses and not stored and all(id(n) in whole for n in uses):
                p = Param(p.name, "real")
        out.append(p)
    return out


def _pairs(stmt: ast.Assign) -> bool:
    """`a, b = x, y`: names on the left, as many values on the right."""
    target, value = stmt.targets[0], stmt.value
    return (
        isinstance(target, ast.Tuple)
        and isinstance(value, ast.Tuple)
        and len(target.elts) == len(value.elts)
        and all(isinstance(t, ast.Name) for t in target.elts)
        and not any(isinstance(v, ast.Starred) for v in value.elts)
    )


def _as_load(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    if isinstance(target, ast.Subscript):
        return ast.Subscript(target.value, target.slice, ast.Load())
    return target


def build_loops(
    func: ast.FunctionDef, typer: Any, helpers: dict[str, ast.FunctionDef] | None = None
) -> FuncOp:
    """The function as loops IR (verified), or Refused naming what stopped it."""
    builder = LoopsBuilder(func, typer, helpers=helpers)
    out = builder.build()
    out.attributes["library"] = builder.library
    from ppy_core.ir.core import verify

    verify(out)
    return out


def offer_loops(finder: Any, func: ast.FunctionDef, typer: Any) -> bool:
    """The site finder's hook: a function with a loop whose whole body compiles as
    typed loops becomes one function site (for the first backend that lowers it);
    one that does not gets a remark naming the statement that stopped it."""
    from ppy_core.compiler.frontend.sites import FunctionSite
    from ppy_core.interface.specs import GraphRegionSpec

    if not any(isinstance(n, ast.For | ast.While) for n in ast.walk(func)):
        return False
    try:
        graph = build_loops(func, typer, module_helpers(finder.tree))
    except Refused as exc:
        finder.remark(
            func.name, exc.node, f"typed loops: stays Python: {exc.message}  [{exc.code}]"
        )
        return False
    except Exception as exc:  # a builder bug must cost this function only, never the module
        log.debug("typed loops: %s failed", func.name, exc_info=True)
        finder.remark(
            func.name, func, f"typed loops: stays Python: {type(exc).__name__}: {exc}  [E1060]"
        )
        return False
    effects = frozenset(
        {"ReadMemory", "WriteMemory"} if graph.attributes["writes"] else {"ReadMemory"}
    )
    site_id = finder.next_id(func.name)
    # backend "": the driver hands it to the first enabled backend that lowers it
    finder.found.function_sites.append(
        FunctionSite(site_id, func.name, func, GraphRegionSpec("", graph, effects))
    )
    return True


__all__ = ["Refused", "build_loops", "ARG_BOUND"]
