"""Finding sites: maximal expression trees whose every node a plugin converges onto
a shared op, and whole functions a plugin takes. Everything else stays Python, and
each reason is recorded for `ppy explain`."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.typer import Typer, parameter_counts, single_assignments
from ppy_core.interface.plugin import Converge, FunctionContext, ModuleContext
from ppy_core.interface.specs import FallbackSpec, GraphRegionSpec, LoweringSpec, RejectSpec
from ppy_core.ir.types import UNKNOWN, TensorType, Type

_OPERATOR_NODES = (ast.BinOp, ast.UnaryOp, ast.Compare)
_PPY_DECORATORS = {"ppy.opt", "ppy.fastmath", "ppy.pure", "ppy.jax"}


@dataclass(slots=True)
class ExprSite:
    """An expression tree to compile; `leaves` are evaluated by Python, in order."""

    id: str
    function: str
    node: ast.expr
    conv: dict[int, Converge]
    operands: dict[int, list[ast.expr]]
    leaves: list[ast.expr]
    fastmath: bool = False
    leaf_types: list[Type] = field(default_factory=list)
    repeats: dict[int, int] = field(default_factory=dict)  # id(repeated leaf) -> index

    def slot(self, node: ast.expr) -> int | None:
        """The argument position of a leaf occurrence, or None if `node` is no leaf."""
        for i, leaf in enumerate(self.leaves):
            if leaf is node:
                return i
        return self.repeats.get(id(node))


@dataclass(slots=True)
class FunctionSite:
    """A whole function a plugin hands to a backend."""

    id: str
    function: str
    node: ast.FunctionDef
    spec: GraphRegionSpec
    plugin: str = ""


@dataclass(slots=True)
class Remark:
    """Why something stays Python (or a note on what was done), for `ppy explain`."""

    function: str
    line: int
    message: str


@dataclass(slots=True)
class Findings:
    expr_sites: list[ExprSite] = field(default_factory=list)
    function_sites: list[FunctionSite] = field(default_factory=list)
    remarks: list[Remark] = field(default_factory=list)
    rejects: list[tuple[ast.AST, RejectSpec]] = field(default_factory=list)


@dataclass(slots=True)
class FunctionOptions:
    opt: int
    fastmath: bool = False
    pure: bool = False
    decorators: tuple[str, ...] = ()
    skip_reason: str = ""


class SiteFinder:
    """Walks a module's functions and collects their sites."""

    def __init__(self, oracle: Oracle, module: ModuleContext, default_opt: int) -> None:
        self.oracle = oracle
        self.module = module
        self.default_opt = default_opt
        self.found = Findings()
        self._counter = 0
        self.operands: dict[int, list[ast.expr]] = {}

    def next_id(self, function: str) -> str:
        self._counter += 1
        return f"{function}.{self._counter}"

    def run(self, tree: ast.Module) -> Findings:
        module_typer = Typer(self.oracle, self.module.imports, self.module.path)
        self.globals = self.module_names(tree, module_typer)
        module_typer.env = dict(self.globals)
        for stmt in tree.body:
            if isinstance(stmt, ast.FunctionDef):
                self.function(stmt)
            elif isinstance(stmt, ast.AsyncFunctionDef | ast.ClassDef):
                kind = "async function" if isinstance(stmt, ast.AsyncFunctionDef) else "class"
                self.remark(stmt.name, stmt, f"{kind} '{stmt.name}' stays Python")
            elif self.default_opt >= 2:
                self.statements("<module>", [stmt], module_typer, FunctionOptions(self.default_opt))
        return self.found

    def module_names(self, tree: ast.Module, typer: Typer) -> dict[str, Type]:
        """Types of module names bound exactly once, by a top-level `name = value`
        (`a = np.ones(n)`). They are hints, as every type here: the run-time guard
        checks what a site assumed, so a name rebound from elsewhere only falls back."""
        counts: Counter[str] = Counter(
            n.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)
        )
        for n in ast.walk(tree):
            if isinstance(n, ast.Global | ast.Nonlocal):
                counts.update(dict.fromkeys(n.names, 2))
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                counts[n.name] += 2
            elif isinstance(n, ast.alias):
                counts[(n.asname or n.name).partition(".")[0]] += 2
        for stmt in tree.body:
            target = _single_target(stmt)
            if target is None or counts[target.id] != 1 or stmt.value is None:
                continue
            conv: dict[int, Converge] = {}
            self.converge(stmt.value, typer, conv)
            typer.env[target.id] = typer.expr(stmt.value, conv)
        return dict(typer.env)

    def remark(self, function: str, node: ast.AST, message: str) -> None:
        self.found.remarks.append(Remark(function, getattr(node, "lineno", 0), message))

    # -- functions ------------------------------------------------------------
    def options(self, func: ast.FunctionDef, typer: Typer) -> FunctionOptions:
        opts = FunctionOptions(self.default_opt)
        names: list[str] = []
        for deco in func.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            name = typer.qualname(target) or ast.unparse(target)
            names.append(name)
            if name == "ppy.opt" and isinstance(deco, ast.Call):
                level = _opt_level(deco)
                if level is not None:
                    opts.opt = level
            elif name == "ppy.fastmath":
                opts.fastmath = True
            elif name == "ppy.pure":
                opts.pure = True
            elif name not in _PPY_DECORATORS:
                opts.skip_reason = (
                    f"decorator '{name}' is not known to leave the function as written"
                )
        opts.decorators = tuple(names)
        if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in _own_nodes(func)):
            opts.skip_reason = "generator functions stay Python"
        if any(isinstance(n, ast.Global | ast.Nonlocal) for n in _own_nodes(func)):
            opts.skip_reason = "functions with global/nonlocal stay Python"
        return opts

    def function(self, func: ast.FunctionDef) -> None:
        typer = Typer(
            self.oracle, self.module.imports, self.module.path, globals=getattr(self, "globals", {})
        )
        opts = self.options(func, typer)
        if opts.skip_reason:
            self.remark(func.name, func, opts.skip_reason)
            return
        if opts.opt <= 1:
            self.remark(func.name, func, f"opt level {opts.opt}: no sites compiled")
            return
        params = self.parameters(func, typer)
        if opts.opt >= 3 and self.region(func, typer, opts, params):
            return
        self.locals(func, typer)
        self.statements(func.name, func.body, typer, opts)

    def parameters(self, func: ast.FunctionDef, typer: Typer) -> dict[str, Any]:
        rebound = parameter_counts(func)
        params: dict[str, Any] = {}
        all_args = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
        for arg in all_args:
            t = typer.annotation(arg.annotation)
            params[arg.arg] = t
            typer.env[arg.arg] = t if rebound[arg.arg] == 0 else UNKNOWN
        for arg in (func.args.vararg, func.args.kwarg):
            if arg is not None:
                typer.env[arg.arg] = UNKNOWN
        return params

    def locals(self, func: ast.FunctionDef, typer: Typer) -> None:
        assigned = single_assignments(func)
        for sub in ast.walk(func):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                typer.env.setdefault(sub.id, UNKNOWN)
        for name, value in assigned.items():
            conv: dict[int, Converge] = {}
            self.converge(value, typer, conv)
            typer.env[name] = typer.expr(value, conv)

    def region(
        self, func: ast.FunctionDef, typer: Typer, opts: FunctionOptions, params: dict[str, Any]
    ) -> bool:
        ctx = FunctionContext(
            node=func,
            module=self.module,
            params=params,
            returns=typer.annotation(func.returns),
            opt=opts.opt,
            decorators=opts.decorators,
            pure=opts.pure,
            fastmath=opts.fastmath,
            location=typer.location(func),
            report=self.module.report,
        )
        spec: LoweringSpec | None = self.oracle.stage(ctx)
        if isinstance(spec, GraphRegionSpec):
            site_id = self.next_id(func.name)
            self.found.function_sites.append(FunctionSite(site_id, func.name, func, spec))
            self.remark(func.name, func, f"whole function handed to backend '{spec.backend}'")
            return True
        if isinstance(spec, FallbackSpec):
            self.remark(func.name, func, f"no region: {spec.reason}")
        elif isinstance(spec, RejectSpec):
            self.found.rejects.append((func, spec))
            return True
        return False

    # -- expressions ----------------------------------------------------------
    def statements(
        self, function: str, body: list[ast.stmt], typer: Typer, opts: FunctionOptions
    ) -> None:
        for stmt in body:
            for root in _expression_roots(stmt, lambda n, m: self.remark(function, n, m)):
                conv: dict[int, Converge] = {}
                self.converge(root, typer, conv)
                first_new = len(self.found.expr_sites)
                self.collect(function, root, conv, opts)
                for site in self.found.expr_sites[first_new:]:
                    site.leaf_types = [typer.expr(leaf, conv) for leaf in site.leaves]

    def converge(self, node: ast.expr, typer: Typer, conv: dict[int, Converge]) -> None:
        """Post-order: decide, for every node under `node`, what it converges onto."""
        for child in _children(node):
            self.converge(child, typer, conv)
        answer: Converge | None = None
        if isinstance(node, _OPERATOR_NODES):
            if isinstance(node, ast.Compare) and len(node.ops) != 1:
                return
            operands = _operands(node)
            reply = self.oracle.operator(typer.operator_context(node, operands, conv))
            answer = reply if isinstance(reply, Converge) else None
        elif isinstance(node, ast.Call) and not node.keywords:
            ctx = typer.call_context(node, conv)
            answer = self.oracle.tensor_operation(ctx) if ctx is not None else None
            is_method = typer.qualname(node.func) is None and isinstance(node.func, ast.Attribute)
            operands = [node.func.value, *node.args] if is_method else list(node.args)
        if answer is not None:
            conv[id(node)] = answer
            picked = answer.operands
            self.operands[id(node)] = operands if picked is None else [operands[i] for i in picked]

    def collect(
        self, function: str, node: ast.expr, conv: dict[int, Converge], opts: FunctionOptions
    ) -> None:
        """Cut maximal trees out of `node`; reductions only at a tree's root."""
        if id(node) not in conv:
            for child in _children(node):
                self.collect(function, child, conv, opts)
            return
        leaves: list[ast.expr] = []
        self._tree(node, conv, leaves, function, opts, root=True)
        if any(
            isinstance(conv[id(n)].result, TensorType) or conv[id(n)].op == "tensor.reduce"
            for n in _tree_nodes(node, conv, self.operands)
        ):
            unique, repeats = _dedupe(leaves)
            site = ExprSite(
                self.next_id(function),
                function,
                node,
                conv,
                self.operands,
                unique,
                opts.fastmath,
                repeats=repeats,
            )
            self.found.expr_sites.append(site)

    def _tree(
        self,
        node: ast.expr,
        conv: dict[int, Converge],
        leaves: list[ast.expr],
        function: str,
        opts: FunctionOptions,
        root: bool,
    ) -> None:
        for child in self.operands[id(node)]:
            if id(child) in conv and conv[id(child)].op != "tensor.reduce":
                self._tree(child, conv, leaves, function, opts, root=False)
            elif id(child) in conv:  # a reduction inside: its own site, a leaf here
                self.collect(function, child, conv, opts)
                leaves.append(child)
            elif not _is_literal(child):
                for grandchild in _children(child):
                    self.collect(function, grandchild, conv, opts)
                leaves.append(child)


def _opt_level(deco: ast.Call) -> int | None:
    """The level of `@ppy.opt(3)` or `@ppy.opt(level=3)`; None if not a literal 0-3."""
    given = [*deco.args[:1], *(k.value for k in deco.keywords if k.arg == "level")]
    if len(given) != 1 or not isinstance(given[0], ast.Constant):
        return None
    value = given[0].value
    return value if value in (0, 1, 2, 3) and not isinstance(value, bool) else None


def _single_target(stmt: ast.stmt) -> ast.Name | None:
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        return stmt.targets[0]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target
    return None


def _dedupe(leaves: list[ast.expr]) -> tuple[list[ast.expr], dict[int, int]]:
    """Pass a repeated name once (`a*b + a` takes a and b), unless some leaf could
    rebind it between the two reads (a call, a walrus, an await)."""
    risky = (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)
    if any(isinstance(n, risky) for leaf in leaves for n in ast.walk(leaf)):
        return leaves, {}
    unique: list[ast.expr] = []
    first: dict[str, int] = {}
    repeats: dict[int, int] = {}
    for leaf in leaves:
        if isinstance(leaf, ast.Name) and leaf.id in first:
            repeats[id(leaf)] = first[leaf.id]
            continue
        if isinstance(leaf, ast.Name):
            first[leaf.id] = len(unique)
        unique.append(leaf)
    return unique, repeats


def _own_nodes(func: ast.FunctionDef) -> Iterator[ast.AST]:
    """Nodes of `func`'s body, not descending into nested functions, lambdas, classes."""
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(node))


_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _expression_roots(stmt: ast.stmt, remark: Any) -> Iterator[ast.expr]:
    """Top-level expressions of a statement (and of statements nested in it)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        remark(stmt, f"nested definition '{stmt.name}' stays Python")
        return
    for field_name, value in ast.iter_fields(stmt):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.stmt):
                yield from _expression_roots(item, remark)
            elif isinstance(item, ast.expr) and field_name not in ("annotation", "returns"):
                if isinstance(item, _SCOPES):
                    remark(item, f"{type(item).__name__.lower()} stays Python")
                    continue
                if isinstance(stmt, ast.AugAssign) and field_name == "target":
                    continue
                for scope in _scopes_inside(item):
                    remark(scope, f"{type(scope).__name__.lower()} stays Python")
                yield item
            elif isinstance(item, ast.excepthandler | ast.match_case | ast.withitem):
                for sub in ast.iter_child_nodes(item):
                    if isinstance(sub, ast.stmt):
                        yield from _expression_roots(sub, remark)
                    elif isinstance(sub, ast.expr):
                        yield sub


def _scopes_inside(node: ast.AST) -> Iterator[ast.AST]:
    """The lambdas and comprehensions inside `node` (not inside each other)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _SCOPES):
            yield child
        else:
            yield from _scopes_inside(child)


def _children(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, _SCOPES):
        return []
    return [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]


def _operands(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Compare):
        return [node.left, node.comparators[0]]
    return []


def _is_literal(node: ast.expr) -> bool:
    return literal_value(node) is not None


def literal_value(node: ast.expr) -> float | None:
    """The f64 constant the IR holds for a number literal (`2`, `2.5`, `-2.5`), or None.
    An int float64 cannot hold exactly stays a leaf: NumPy, not the compiler, converts it."""
    negate = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    if negate:
        node = node.operand  # type: ignore[attr-defined]
    if (
        not isinstance(node, ast.Constant)
        or isinstance(node.value, bool)
        or not isinstance(node.value, int | float)
    ):
        return None
    value = -node.value if negate else node.value  # -0 is 0, -0.0 is -0.0
    if isinstance(value, float) or (isinstance(value, int) and abs(value) <= 2**53):
        return float(value)
    return None


def _tree_nodes(
    node: ast.expr, conv: dict[int, Converge], operands: dict[int, list[ast.expr]]
) -> Iterator[ast.expr]:
    yield node
    for child in operands[id(node)]:
        if id(child) in conv and conv[id(child)].op != "tensor.reduce":
            yield from _tree_nodes(child, conv, operands)


__all__ = [
    "SiteFinder",
    "ExprSite",
    "FunctionSite",
    "Remark",
    "Findings",
    "FunctionOptions",
    "literal_value",
]
