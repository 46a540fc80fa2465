"""Rewriting a module: each compiled site becomes a call to its dispatcher.

Leaves move into the call's arguments (so they are evaluated once, in Python's
order; a view the runtime takes passes its name, `views.py`); the original expression
survives as the fallback, a lambda over the arguments placed at the site's own line,
so a traceback from the Python path points at the user's code. An argument fed by an
expression (a call's result) is read there through FRESH, so a dispatcher can hand it
over as the temporary it was (`dispatch.Temporary`). Region functions get
the dispatcher as their outermost decorator (inside the transparent ones, which wrap
the region at run time).
"""

from __future__ import annotations

import ast
import bisect
import copy
from collections.abc import Mapping, Sequence
from types import CodeType

from ppy_core.compiler.frontend.implied import RANK
from ppy_core.compiler.frontend.sites import ExprSite, FunctionSite
from ppy_core.compiler.frontend.stores import ASSIGN, BUILTINS, NAME, OPERATOR, key_value
from ppy_core.compiler.frontend.views import counter_argument, counters_of
from ppy_core.runtime.module import FALLBACK_MARK, FRESH

BIND = "__ppy_bind__"


RANK_MODULE = "ppy_core.runtime.ranked"  # `rank_is`, the test of an annotated rank
PREFIX = "__ppy_"  # a module's own names; a specialization's carry its own prefix


def site_name(index: int, prefix: str = PREFIX) -> str:
    return f"{prefix}site_{index}"


def function_name(index: int, prefix: str = PREFIX) -> str:
    return f"{prefix}fn_{index}"


def specializing_name(index: int) -> str:
    """A dunder name: in a class body a `__name` would be mangled (`_C__name`)."""
    return f"{PREFIX}spec_{index}__"


class _Replace(ast.NodeTransformer):
    def __init__(
        self,
        sites: dict[int, tuple[int, ExprSite]],
        prefix: str = PREFIX,
        originals: Mapping[int, ast.AST] | None = None,
    ) -> None:
        self.sites = sites
        self.prefix = prefix
        self.originals = originals or {}  # id(node) -> its unrewritten copy (`_bounded`)

    def visit(self, node: ast.AST) -> ast.AST:
        found = self.sites.get(id(node))
        if found is None:
            return super().visit(node)
        index, site = found
        if site.store is not None:
            stmt = self.store(index, site)
            return _bounded(site, stmt, self.originals.get(id(node)))
        args = [self.visit(arg) for arg in site.args]
        name = site_name(index, self.prefix)
        call = ast.copy_location(ast.Call(ast.Name(name, ast.Load()), args, []), node)
        return _bounded(site, call, self.originals.get(id(node)))

    def store(self, index: int, site: ExprSite) -> ast.stmt:
        """`site(obj, key, *leaves)` in place of the store's statement (an augmented
        store's first leaf, the target, is the runtime's to read; `a OP= x` keeps its
        rebinding: `a = site(a, None, ...)`)."""
        store = site.store
        assert store is not None
        stmt = store.stmt
        obj = ast.copy_location(ast.Name(store.obj.id, ast.Load()), store.obj)  # type: ignore[attr-defined]
        key = ast.Constant(None) if store.key is None else self.visit(key_value(store.key))
        args = [obj, key, *(self.visit(arg) for arg in site.args)]
        name = site_name(index, self.prefix)
        call = ast.Call(func=ast.Name(name, ast.Load()), args=args, keywords=[])
        if store.form == NAME:
            bound = ast.Name(store.obj.id, ast.Store())  # type: ignore[attr-defined]
            return ast.copy_location(ast.Assign([bound], ast.copy_location(call, stmt)), stmt)
        return ast.copy_location(ast.Expr(ast.copy_location(call, stmt)), stmt)


def _bounded(site: ExprSite, new: ast.AST, original: ast.AST | None) -> ast.AST:
    """`new if <tests> else <original>` for a site whose late leaves could raise
    (`ExprSite.tests`: `-b < dx < b`, `dx != 0` over Python floats the body never
    rebinds, so they run no code and raise nothing); where one fails (inf, NaN, 0.0)
    Python runs the statement as written, raising where it raises."""
    if not site.tests or original is None:
        return new
    tests = [copy.deepcopy(t) for t in site.tests]
    test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
    if isinstance(new, ast.stmt):
        assert isinstance(original, ast.stmt)
        out: ast.AST = ast.If(test, [new], [original])
    else:
        assert isinstance(new, ast.expr)
        assert isinstance(original, ast.expr)
        out = ast.IfExp(test, new, original)
    for node in ast.walk(test):
        ast.copy_location(node, new)
    return ast.copy_location(out, new)


def _fallback(site: ExprSite) -> ast.Lambda:
    """`lambda __ppy_0, ...: <the site's expression over its arguments>`; for a store,
    `lambda __ppy_t, __ppy_k, ...: <the whole statement>` (`_store_body`). A view the
    runtime takes stays in the expression, over its name's argument."""
    params = _params(site)
    if site.store is not None:
        return _store_fallback(site, params)
    body = _over_leaves(site.node, params, _fresh_params(site))
    names = [f"__ppy_{i}" for i in range(len(site.args))]
    args = ast.arguments(
        posonlyargs=[], args=[ast.arg(p) for p in names], kwonlyargs=[], kw_defaults=[], defaults=[]
    )
    return ast.copy_location(ast.Lambda(args=args, body=body), site.node)


def _store_fallback(site: ExprSite, params: dict[int, str]) -> ast.Lambda:
    """The statement as Python runs it, through the operator module: `t[k] = v` is
    `setitem(t, k, v)`; `t[k] -= v` is `setitem(t, k, isub(getitem(t, k), v))` (the
    read before `v`, as Python's order); `a -= v` is `a = isub(a, v)`."""
    store = site.store
    assert store is not None
    value = site.node if store.form == ASSIGN else site.node.right  # type: ignore[attr-defined]
    body = _over_leaves(value, params, _fresh_params(site))
    t, k = ast.Name("__ppy_t", ast.Load()), ast.Name("__ppy_k", ast.Load())

    def op(name: str, *args: ast.expr) -> ast.Call:
        func = ast.Attribute(ast.Name(OPERATOR, ast.Load()), name, ast.Load())
        return ast.Call(func, list(args), [])

    if store.masked:  # `X[c] = f(X[c])` as written, over the same names (masked.py)
        body = _masked_statement(store.stmt, site, params)
    elif store.form == NAME:
        body = op(store.op, t, body)
    elif store.form == ASSIGN:
        body = op("setitem", t, k, body)
    else:
        body = op("setitem", t, k, op(store.op, op("getitem", t, k), body))
    names = ["__ppy_t", "__ppy_k", *(f"__ppy_{i}" for i in range(len(site.args)))]
    args = ast.arguments(
        posonlyargs=[], args=[ast.arg(p) for p in names], kwonlyargs=[], kw_defaults=[], defaults=[]
    )
    return ast.copy_location(ast.Lambda(args=args, body=body), store.stmt)


def _masked_statement(stmt: ast.stmt, site: ExprSite, params: dict[int, str]) -> ast.Call:
    """`setitem(__ppy_t, c, f(...))` of a masked update `X[c] = f(X[c])`: its leaves are
    names (masked.py), each read of one through the argument of that name's leaf."""
    names = {
        n.id: params[id(n)]
        for n in ast.walk(site.node)
        if isinstance(n, ast.Name) and id(n) in params
    }

    class _Names(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            return ast.copy_location(ast.Name(names.get(n.id, n.id), ast.Load()), n)

    assert isinstance(stmt, ast.Assign)
    assert isinstance(stmt.targets[0], ast.Subscript)
    key = _Names().visit(copy.deepcopy(stmt.targets[0].slice))
    value = _Names().visit(copy.deepcopy(stmt.value))
    func = ast.Attribute(ast.Name(OPERATOR, ast.Load()), "setitem", ast.Load())
    return ast.Call(func, [ast.Name("__ppy_t", ast.Load()), key, value], [])


def _params(site: ExprSite) -> dict[int, str]:
    """id(node) -> the fallback's parameter it reads: each occurrence of a leaf its
    argument's; of a view the runtime takes, the view's name (the view is evaluated in
    place; a view an op implies is not in the tree, its name is the op's operand); of
    an augmented store's target leaf `__ppy_t` (for `a OP= v`, the value's
    other reads of `a` are the same object)."""
    first = len(site.leaves) - len(site.sources)
    slots = {id(leaf): i for i, leaf in enumerate(site.leaves)}
    slots.update(site.repeats)
    params: dict[int, str] = {}
    # a view an op implies is no node of the tree; its name is (`implied.py`)
    for node in [*ast.walk(site.node), *site.implied]:
        i = slots.get(id(node))
        if i is None:
            continue
        if i < first:
            params[id(node)] = "__ppy_t"
            continue
        arg, view = site.sources[i - first]
        read = node.value if isinstance(node, ast.Subscript) and view is not None else node
        params[id(read)] = f"__ppy_{arg}"
        if isinstance(node, ast.Subscript) and view is not None:  # its index's loop counters
            for counter in counters_of(node):
                params[id(counter)] = f"__ppy_{counter_argument(site.args, counter.id)}"
    return params


def _fresh_params(site: ExprSite) -> frozenset[str]:
    """The parameters fed by an expression, not a name or a constant (a call's result):
    the fallback reads them through FRESH (`dispatch.fresh`), so a dispatcher can hand
    over a temporary as one (`dispatch.Temporary`)."""
    return frozenset(
        f"__ppy_{i}"
        for i, arg in enumerate(site.args)
        if not isinstance(arg, ast.Name | ast.Constant)
    )


def _over_leaves(
    node: ast.expr, params: dict[int, str], fresh: frozenset[str] = frozenset()
) -> ast.expr:
    """A copy of `node` whose leaves (ids in `params`) read the lambda's parameters
    (those in `fresh` through FRESH)."""

    class _Leaves(ast.NodeTransformer):
        def visit(self, n: ast.AST) -> ast.AST:
            if id(n) in params:
                read: ast.expr = ast.Name(params[id(n)], ast.Load())
                if params[id(n)] in fresh:
                    read = ast.Call(ast.Name(FRESH, ast.Load()), [read], [])
                return ast.copy_location(read, n)
            return super().visit(n)

    out = _Leaves().visit(_shallow_tree_copy(node, set(params)))
    assert isinstance(out, ast.expr)
    return out


def _shallow_tree_copy(node: ast.AST, keep: set[int]) -> ast.AST:
    """Copy `node`'s tree, keeping leaf nodes (ids in `keep`) as the same objects so
    the leaf substitution can find them."""
    if id(node) in keep:
        return node
    new = copy.copy(node)
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            setattr(
                new,
                name,
                [_shallow_tree_copy(v, keep) if isinstance(v, ast.AST) else v for v in value],
            )
        elif isinstance(value, ast.AST):
            setattr(new, name, _shallow_tree_copy(value, keep))
    return new


def rewrite_module(
    tree: ast.Module,
    expr_sites: list[tuple[int, ExprSite]],
    function_sites: list[tuple[int, FunctionSite]],
    prefix: str = PREFIX,
    specializable: Sequence[tuple[int, ast.FunctionDef]] = (),
) -> ast.Module:
    """The module tree, rewritten in place: the given sites (numbered as in the
    manifest) replaced by calls to their dispatchers, and each specializable function
    given its specializing dispatcher as innermost decorator (`runtime/observed.py`)."""
    fallbacks = {index: _fallback(site) for index, site in expr_sites}
    replaced = {
        id(site.store.stmt if site.store else site.node): (index, site)
        for index, site in expr_sites
    }
    originals = {  # copied before the rewrite changes them in place
        key: copy.deepcopy(site.store.stmt if site.store else site.node)
        for key, (_i, site) in replaced.items()
        if site.tests
    }
    visitor = _Replace(replaced, prefix, originals)
    holding = _holding(
        tree, [site.store.stmt if site.store else site.node for _i, site in expr_sites]
    )
    if holding is None:
        module = visitor.visit(tree)
    else:  # only the statements that hold a site: a big module's others stay as parsed
        module = tree
        for i in holding:
            module.body[i] = visitor.visit(module.body[i])
    assert isinstance(module, ast.Module)
    made = [module.body[i] for i in holding or ()]  # where the rewrite made new nodes
    for index, fsite in function_sites:
        for stmt in ast.walk(module):
            if (
                isinstance(stmt, ast.FunctionDef)
                and stmt.lineno == fsite.node.lineno
                and stmt.name == fsite.node.name
            ):
                deco = ast.copy_location(ast.Name(function_name(index, prefix), ast.Load()), stmt)
                # inside its transparent decorators (`@torch.no_grad()`): they wrap the region
                stmt.decorator_list.insert(fsite.position, deco)
    for index, func in specializable:
        deco = ast.copy_location(ast.Name(specializing_name(index), ast.Load()), func)
        func.decorator_list.append(deco)
    prelude_at = _prelude_index(module)
    anchor = module.body[prelude_at] if prelude_at < len(module.body) else module
    table = ast.Dict(keys=[ast.Constant(i) for i in fallbacks], values=list(fallbacks.values()))
    bind = ast.Expr(ast.Call(ast.Name(BIND, ast.Load()), [table], []))
    ast.copy_location(bind, anchor)
    ast.copy_location(bind.value, anchor)
    ast.copy_location(bind.value.func, anchor)
    ast.copy_location(table, anchor)
    module.body.insert(prelude_at, bind)
    made.append(bind)
    if any(site.store is not None for _i, site in expr_sites):  # what store sites' code names
        names = [ast.alias("builtins", BUILTINS), ast.alias("operator", OPERATOR)]
        module.body.insert(prelude_at, ast.copy_location(ast.Import(names), anchor))
        made.append(module.body[prelude_at])
    if any(_tests_rank(site) for _i, site in expr_sites):  # an annotated rank's test
        ranked = ast.ImportFrom(RANK_MODULE, [ast.alias("rank_is", RANK)], 0)
        module.body.insert(prelude_at, ast.copy_location(ranked, anchor))
        made.append(module.body[prelude_at])
    if holding is None:
        return ast.fix_missing_locations(module)
    # every node the rewrite made lies in a statement it visited or in the prelude, each
    # with a position its new nodes take (as fixing the whole module would give them);
    # the decorators it added were placed where they stand
    for stmt in made:
        ast.fix_missing_locations(stmt)
    return module


def _holding(tree: ast.Module, anchors: Sequence[ast.AST]) -> list[int] | None:
    """The indexes of the top-level statements whose lines hold the `anchors` (the
    nodes the rewrite replaces), or None when one has no line or falls in none."""
    spans = [
        (
            min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))]),
            stmt.end_lineno or stmt.lineno,
        )
        for stmt in tree.body
    ]
    starts = [start for start, _end in spans]
    found: set[int] = set()
    for node in anchors:
        line = getattr(node, "lineno", None)
        if line is None:
            return None
        i = bisect.bisect_right(starts, line) - 1
        if i < 0 or not spans[i][0] <= line <= spans[i][1]:
            return None
        found.add(i)
    return sorted(found)


def specialization_module(module: ast.Module, function: str, prefix: str) -> ast.Module:
    """One function of a rewritten module, alone: the module's `__future__` imports,
    what the rewrite put first (the bind call, the store sites' imports), and the
    function without its own decorators (ppy's, read at compile time) and with its
    defaults left to the generic function's (`observed.load_specialization` copies
    them, so a default is the same object, evaluated once, as in Python)."""
    body: list[ast.stmt] = []
    target: ast.FunctionDef | None = None
    head, _, method = function.partition(".")  # `f`, or a method `Class.m`
    for stmt in module.body:
        if (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__") or _inserted(stmt):
            body.append(stmt)
        elif target is None and getattr(stmt, "name", None) == head:
            if isinstance(stmt, ast.FunctionDef) and not method:
                target = stmt
            elif isinstance(stmt, ast.ClassDef) and method:
                target = next(
                    (s for s in stmt.body if isinstance(s, ast.FunctionDef) and s.name == method),
                    None,
                )
    assert target is not None, f"no function {function} in the module"
    target.decorator_list = [
        d for d in target.decorator_list if isinstance(d, ast.Name) and d.id.startswith(prefix)
    ]
    target.args.defaults = [ast.Constant(None) for _ in target.args.defaults]
    target.args.kw_defaults = [
        None if d is None else ast.Constant(None) for d in target.args.kw_defaults
    ]
    body.append(target)
    return ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))


def _inserted(stmt: ast.stmt) -> bool:
    """Whether `stmt` is one `rewrite_module` put in the prelude."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return isinstance(func, ast.Name) and func.id == BIND
    if isinstance(stmt, ast.Import):
        return [a.asname for a in stmt.names] == [BUILTINS, OPERATOR]
    if isinstance(stmt, ast.ImportFrom) and stmt.module == RANK_MODULE:
        return [a.asname for a in stmt.names] == [RANK]
    return False


def _tests_rank(site: ExprSite) -> bool:
    """Whether a site runs under the test of an annotated rank (`implied.rank_test`)."""
    return any(isinstance(n, ast.Name) and n.id == RANK for t in site.tests for n in ast.walk(t))


def _prelude_index(module: ast.Module) -> int:
    """After the docstring and `from __future__` imports."""
    index = 0
    body = module.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        index = 1
    while (
        index < len(body)
        and isinstance(body[index], ast.ImportFrom)
        and body[index].module == "__future__"
    ):
        index += 1
    return index


def compile_module_code(
    module: ast.Module, filename: str, fallback_names: Mapping[int, str] | None = None
) -> CodeType:
    """Compile the rewritten module. `fallback_names` maps a site's first line to
    the function it is in: its fallback lambda is renamed after that function (and
    its qualname marked with FALLBACK_MARK), so a traceback through the Python path
    reads `in f` as under `python`, and the runtime can drop the dispatcher frames."""
    code = compile(module, filename, "exec", dont_inherit=True)
    if not fallback_names:
        return code
    consts = tuple(_renamed(c, fallback_names) for c in code.co_consts)
    return code.replace(co_consts=consts)


def _renamed(const: object, names: Mapping[int, str]) -> object:
    if not isinstance(const, CodeType) or const.co_name != "<lambda>":
        return const
    name = names.get(const.co_firstlineno)
    params = const.co_varnames[: const.co_argcount]
    if name is None or not all(p.startswith("__ppy_") for p in params):
        return const
    return const.replace(co_name=name, co_qualname=f"{name}.{FALLBACK_MARK}")


__all__ = [
    "rewrite_module",
    "compile_module_code",
    "site_name",
    "function_name",
    "specializing_name",
    "specialization_module",
    "PREFIX",
    "BIND",
    "FALLBACK_MARK",
]
