"""Finding sites: maximal expression trees whose every node a plugin converges onto
a shared op, and whole functions a plugin takes. Everything else stays Python, and
each reason is recorded for `ppy explain`."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ppy_core.compiler.frontend.bound import binding_counts
from ppy_core.compiler.frontend.classes import module_classes
from ppy_core.compiler.frontend.contain import contained
from ppy_core.compiler.frontend.decorators import DecoratorSite, FunctionOptions, read_decorator
from ppy_core.compiler.frontend.described import described_types
from ppy_core.compiler.frontend.implied import (
    implied_views,
    rank_test,
    ranked_parameters,
    view_type,
)
from ppy_core.compiler.frontend.loops import offer_loops
from ppy_core.compiler.frontend.masked import Masked
from ppy_core.compiler.frontend.masked import admits as masked_admits
from ppy_core.compiler.frontend.masked import candidates as masked_candidates
from ppy_core.compiler.frontend.masked import tree as masked_tree
from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.rebinding import Binding, consistent_types
from ppy_core.compiler.frontend.specializable import (
    could_compile,
    movable_method,
    observed_attributes,
    plain_parameters,
)
from ppy_core.compiler.frontend.speculate import Speculator, guessed_leaf
from ppy_core.compiler.frontend.stores import (
    ASSIGN,
    Store,
    augmented_root,
    candidates,
    refusal,
    unfused,
)
from ppy_core.compiler.frontend.syntax import (
    children,
    dedupe,
    expression_roots,
    is_literal,
    operator_operands,
    opt_level,
    own_nodes,
    tree_nodes,
)
from ppy_core.compiler.frontend.typer import Typer, single_assignments
from ppy_core.compiler.frontend.views import arguments, share
from ppy_core.interface.plugin import CallContext, Converge, FunctionContext, ModuleContext
from ppy_core.interface.specs import (
    BARRIER_EFFECTS,
    LOWERING_ATTRIBUTE,
    OP_SPEC_KINDS,
    FallbackSpec,
    GraphRegionSpec,
    LoweringSpec,
    RejectSpec,
    spec_attribute,
)
from ppy_core.ir.types import UNKNOWN, ColumnType, TensorType, Type

_OPERATOR_NODES = (ast.BinOp, ast.UnaryOp, ast.Compare)
_LEAVES = (ast.Name, ast.Constant, ast.Attribute, ast.Subscript)  # values with no operation
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
    assumed: tuple[int, ...] = ()  # leaves typed Unknown, taken as arrays: speculative
    store: Store | None = None  # the statement writes the result into its target (stores.py)
    # the call's arguments (after a store's target and key), and per leaf they feed: its
    # argument and the basic view the runtime takes of it, or None (views.py)
    args: list[ast.expr] = field(default_factory=list)
    sources: list[tuple[int, ast.Subscript | None]] = field(default_factory=list)
    # the site runs only where these hold, else Python's statement does: a leaf read
    # late (`dt / dx**2`) must not raise out of Python's order (speculate.safe_tests)
    tests: list[ast.expr] = field(default_factory=list)
    # views an op implies (`implied.py`): leaves the program never wrote, each of a name
    # the fallback reads in place (all occurrences, repeats included)
    implied: list[ast.Subscript] = field(default_factory=list)

    def slot(self, node: ast.expr) -> int | None:
        """The kernel leaf a leaf occurrence is, or None if `node` is no leaf."""
        for i, leaf in enumerate(self.leaves):
            if leaf is node:
                return i
        return self.repeats.get(id(node))


def site_library(site: ExprSite) -> str:
    """The library of the first array or column a node of `site` converges onto."""
    for converge in site.conv.values():
        if isinstance(converge.result, TensorType | ColumnType) and converge.result.library:
            return converge.result.library
    return ""


@dataclass(slots=True)
class FunctionSite:
    """A whole function a plugin hands to a backend."""

    id: str
    function: str
    node: ast.FunctionDef
    spec: GraphRegionSpec
    plugin: str = ""
    position: int = 0  # where its dispatcher goes in the decorator list (inside transparent ones)


@dataclass(slots=True)
class Remark:
    """Why something stays Python (or a note on what was done), for `ppy explain`."""

    function: str
    line: int
    message: str


@dataclass(slots=True)
class Specializable:
    """A function with unannotated parameters: it gets a specializing dispatcher, and
    each signature it is called with is compiled as if annotated with it."""

    function: str  # its qualified name: `f`, or `Class.method`
    node: ast.FunctionDef
    params: tuple[str, ...]
    attributes: tuple[str, ...] = ()  # a method's `self` attributes its signature describes


@dataclass(frozen=True, slots=True)
class Target:
    """Compile one function only, its unannotated parameters (and a method's `self.X`)
    typed as the call `described` them (a specialization, `compiler/specialize.py`;
    `described.py` gives the types); its sites' ids end in `suffix`."""

    function: str
    described: Mapping[str, tuple[Any, ...]]
    suffix: str
    prefix: str  # of the names its sites and regions are bound to in the module
    signature: tuple[Any, ...] = ()  # as the runtime described the call (for the manifest)


@dataclass(slots=True)
class Findings:
    expr_sites: list[ExprSite] = field(default_factory=list)
    function_sites: list[FunctionSite] = field(default_factory=list)
    remarks: list[Remark] = field(default_factory=list)
    rejects: list[tuple[ast.AST, RejectSpec]] = field(default_factory=list)
    specializable: list[Specializable] = field(default_factory=list)
    # functions (or module statements) whose cutting failed inside the compiler; each
    # stays Python and the driver warns once (frontend/contain.py)
    failures: list[tuple[ast.stmt, BaseException]] = field(default_factory=list)


class SiteFinder:
    """Walks a module's functions and collects their sites."""

    def __init__(
        self,
        oracle: Oracle,
        module: ModuleContext,
        default_opt: int,
        target: Target | None = None,
        libraries: bool = False,
    ) -> None:
        self.oracle = oracle
        self.module = module
        self.default_opt = default_opt
        self.target = target
        # a specialization's types, as annotations of the described arguments would be
        self.observed = described_types(target.described, oracle) if target else {}
        self.libraries = libraries  # the module activates a plugin: specializing may pay
        self.found = Findings()
        self._counter = 0
        self._told: set[int] = set()  # calls already remarked on as calling back
        self.operands: dict[int, list[ast.expr]] = {}
        self.speculator: Speculator | None = None
        self.barriers: set[int] = set()  # nodes holding a call that writes, does IO, calls back
        self.deferred: set[int] = set()  # views the runtime takes from their names (views.py)
        # id(a view an op implies) -> (it, its type) (implied.py); holding each view keeps
        # its id from being reused by another node
        self.implied: dict[int, tuple[ast.Subscript, Type]] = {}
        # the function's parameters annotated with their rank (implied.py), and
        # id(a view of one) -> the per-call test of that rank its site runs under
        self.ranked: dict[str, Type] = {}
        self.rank_tests: dict[int, ast.expr] = {}
        # the module's classes (name -> "module.Class", and their types) and the types of
        # the names it binds once: `run` reads them before typing any function
        self.local_names: Mapping[str, str] = {}
        self.local_types: Mapping[str, Type] = {}
        self.globals: dict[str, Type] = {}
        self._function = "<module>"  # the function being typed, for `call`'s remark
        self.tree: ast.Module | None = None  # the module (typed loops build its helpers in)
        # reuses and keeps each top-level function's findings across builds (the
        # driver's `compiler.function_records.FunctionMemo`); None: type every one
        self.memo: Any = None

    def next_id(self, function: str) -> str:
        self._counter += 1
        return f"{function}.{self._counter}{self.target.suffix if self.target else ''}"

    def run(self, tree: ast.Module) -> Findings:
        self.tree = tree
        self.local_names, self.local_types = module_classes(self.oracle, tree, self.module)
        module_typer = self.typer()
        self.globals = self.module_names(tree, module_typer)
        module_typer.env = dict(self.globals)
        self.speculator = Speculator.for_module(self.oracle, tree)
        for index, stmt in enumerate(tree.body):
            if self.target is not None:  # one function's specialization: nothing else
                found = _named(stmt, self.target.function)
                if found is not None:
                    contained(self, found, self.function)
                continue
            if isinstance(stmt, ast.FunctionDef):
                self.top_function(index, stmt)
            elif isinstance(stmt, ast.AsyncFunctionDef | ast.ClassDef):
                kind = "async function" if isinstance(stmt, ast.AsyncFunctionDef) else "class"
                # the class body runs as written; its plain methods are typed by their calls
                self.remark(stmt.name, stmt, f"{kind} '{stmt.name}' stays Python")
                if isinstance(stmt, ast.ClassDef):
                    self.methods(stmt)
            elif self.default_opt >= 2:
                contained(self, stmt, lambda s: self.module_statement(s, module_typer))
        return self.found

    def top_function(self, index: int, stmt: ast.FunctionDef) -> None:
        """Type a top-level function, or take what an earlier build found (`memo`)."""
        if self.memo is None:
            contained(self, stmt, self.function)
        elif not self.memo.restore(self, index, stmt):
            mark = self.memo.mark(self)
            contained(self, stmt, self.function)
            self.memo.keep(self, stmt, mark)

    def module_statement(self, stmt: ast.stmt, typer: Typer) -> None:
        self.ranked = {}  # no function's parameters
        self.statements("<module>", [stmt], typer, FunctionOptions(self.default_opt))

    def module_names(self, tree: ast.Module, typer: Typer) -> dict[str, Type]:
        """Types of module names bound exactly once, by a top-level `name = value`
        (`a = np.ones(n)`). They are hints, as every type here: the run-time guard
        checks what a site assumed, so a name rebound from elsewhere only falls back."""
        self.ranked = {}  # no function's parameters
        for name, value in single_assignments(tree).items():
            conv: dict[int, Converge] = {}
            self.converge(value, typer, conv)
            typer.env[name] = typer.expr(value, conv)
        return dict(typer.env)

    def remark(self, function: str, node: ast.AST, message: str) -> None:
        self.found.remarks.append(Remark(function, getattr(node, "lineno", 0), message))

    # -- functions ------------------------------------------------------------
    def options(self, func: ast.FunctionDef, typer: Typer) -> FunctionOptions:
        opts = FunctionOptions(self.default_opt)
        for index, deco in enumerate(func.decorator_list):
            target = deco.func if isinstance(deco, ast.Call) else deco
            name = typer.qualname(target) or ast.unparse(target)
            if name not in _PPY_DECORATORS:
                self.decorator(func, deco, index, typer, opts)
                continue
            opts.decorators += (name,)
            if name == "ppy.opt" and isinstance(deco, ast.Call):
                level = opt_level(deco)
                if level is not None:
                    opts.opt = level
            elif name == "ppy.fastmath":
                opts.fastmath = True
            elif name == "ppy.pure":
                opts.pure = True
        if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in own_nodes(func)):
            opts.skip_reason = "generator functions stay Python"
        if any(isinstance(n, ast.Global | ast.Nonlocal) for n in own_nodes(func)):
            opts.skip_reason = "functions with global/nonlocal stay Python"
        return opts

    def decorator(
        self, func: ast.FunctionDef, deco: ast.expr, index: int, typer: Typer, opts: FunctionOptions
    ) -> None:
        site = DecoratorSite(func, deco, index, self.module.report)
        remark = read_decorator(self.oracle, typer, site, opts)
        if remark:
            self.remark(func.name, deco, remark)

    def typer(self) -> Typer:
        """A typer of this module: its imports, its classes, the names it binds once."""
        return Typer(
            self.oracle,
            self.module.imports,
            self.module.path,
            globals=self.globals,
            local_names=self.local_names,
            local_types=self.local_types,
            memo={},
        )

    def function(self, func: ast.FunctionDef) -> None:
        typer = self.typer()
        if self.target is not None:
            typer.observed = self.observed
        opts = self.options(func, typer)
        if opts.skip_reason:
            self.remark(func.name, func, opts.skip_reason)
            return
        if opts.opt <= 1:
            self.remark(func.name, func, f"opt level {opts.opt}: no sites compiled")
            return
        params = self.parameters(func, typer)
        every = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
        self.ranked = ranked_parameters(params, {a.arg for a in every if a.annotation})
        # a function whose decorator calls it its own way (`@jax.jit`) or `@ppy.jax` is
        # offered whole at opt 2 too (a plugin exporting it needs no opt level)
        offered = opts.opt >= 3 or bool(opts.calls) or "ppy.jax" in opts.decorators
        # a specialization is offered whole too: its plugin may stage the described
        # objects (an nn.Module's forward, typed by its instance) at the default level
        offered = offered or self.target is not None
        if offered and self.region(func, typer, opts, params):
            return
        if opts.calls:
            return  # its decorator calls it in its own way: the body stays as written
        self.specializable(func, opts, params)
        if len(func.decorator_list) == len(opts.decorators) and offer_loops(self, func, typer):
            return  # typed loops: the whole function is one site (frontend/loops.py)
        self.locals(func, typer, params)
        self._function = func.name  # for `call`'s remark on a call that calls back
        self.statements(func.name, func.body, typer, opts, func)

    def specializable(
        self, func: ast.FunctionDef, opts: FunctionOptions, params: dict[str, Any]
    ) -> None:
        """Mark a function whose types may come from its calls (`specializable.py`)."""
        if self.target is not None or not self.libraries:
            return
        names = plain_parameters(func)
        if names is None or len(func.decorator_list) != len(opts.decorators):
            return
        if all(t is not UNKNOWN for t in params.values()) or not could_compile(func):
            return
        self.found.specializable.append(Specializable(func.name, func, names))

    def methods(self, cls: ast.ClassDef) -> None:
        """A module-level class's plain methods are typed by their calls (their `self`
        attributes too); the class itself stays Python."""
        if not self.libraries or self.default_opt < 2 or cls.decorator_list:
            return
        for stmt in cls.body:
            if not isinstance(stmt, ast.FunctionDef) or stmt.decorator_list:
                continue
            names = plain_parameters(stmt)
            if not names or not movable_method(stmt) or not could_compile(stmt):
                continue
            attributes = observed_attributes(stmt, names[0])
            qualname = f"{cls.name}.{stmt.name}"
            self.found.specializable.append(Specializable(qualname, stmt, names, attributes))
            self.remark(qualname, stmt, f"method '{qualname}' is typed by its calls")

    def parameters(self, func: ast.FunctionDef, typer: Typer) -> dict[str, Any]:
        bound = binding_counts(func)
        params: dict[str, Any] = {}
        all_args = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
        for arg in all_args:
            t = typer.parameter(arg)
            params[arg.arg] = t
            typer.env[arg.arg] = t if bound[arg.arg] == 1 else UNKNOWN  # never rebound
        for arg in (func.args.vararg, func.args.kwarg):
            if arg is not None:
                typer.env[arg.arg] = UNKNOWN
        return params

    def locals(self, func: ast.FunctionDef, typer: Typer, params: dict[str, Any]) -> None:
        assigned = single_assignments(func)
        for sub in ast.walk(func):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                typer.env.setdefault(sub.id, UNKNOWN)
        for name, value in assigned.items():
            conv: dict[int, Converge] = {}
            self.converge(value, typer, conv)
            typer.env[name] = typer.expr(value, conv)

        def typing(binding: Binding) -> Type:
            conv: dict[int, Converge] = {}
            self.converge(binding.value, typer, conv)
            if binding.in_place and isinstance(binding.value, ast.BinOp):
                return typer.in_place(binding.value, conv)
            return typer.expr(binding.value, conv)

        # names rebound (in loops, `a += b`) with one type at every binding keep it
        consistent_types(func, typer.env, params, typing)

    def effects(self, func: ast.FunctionDef, typer: Typer) -> dict[str, ast.Call]:
        """What the body's calls may do, as the plugins answer: effect -> its first call."""
        found: dict[str, ast.Call] = {}
        calls = [n for n in own_nodes(func) if isinstance(n, ast.Call)]
        for node in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
            ctx = typer.call_context(node, {})
            answer = self.oracle.call(ctx) if ctx is not None else None
            for effect in getattr(answer, "effects", ()):
                found.setdefault(effect, node)
        return found

    def region(
        self, func: ast.FunctionDef, typer: Typer, opts: FunctionOptions, params: dict[str, Any]
    ) -> bool:
        """Offer the whole function to the plugins (`stage`). A call that does IO or
        calls back keeps it from being a region; one that writes memory, unless the
        region's spec declares the write (the plugin staged it, e.g. torch's copy_)."""
        effects = self.effects(func, typer)
        for effect in ("IO", "Callback"):
            if effect in effects:
                node = effects[effect]
                self.remark(
                    func.name,
                    func,
                    f"no region: line {node.lineno}: `{ast.unparse(node)}` has effect {effect}",
                )
                return False
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
            outer=opts.outer,
            effects=frozenset(effects),
            described=self.target.described if self.target is not None else {},
        )
        spec: LoweringSpec | None = self.oracle.stage(ctx)
        writes = effects.get("WriteMemory")
        if isinstance(spec, GraphRegionSpec) and writes and "WriteMemory" not in spec.effects:
            self.remark(
                func.name,
                func,
                f"no region: line {writes.lineno}: `{ast.unparse(writes)}` writes memory, "
                f"which the region for backend '{spec.backend}' does not declare",
            )
            return False
        if isinstance(spec, GraphRegionSpec):
            site_id = self.next_id(func.name)
            self.found.function_sites.append(
                FunctionSite(site_id, func.name, func, spec, position=opts.position)
            )
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
        self,
        function: str,
        body: list[ast.stmt],
        typer: Typer,
        opts: FunctionOptions,
        func: ast.FunctionDef | None = None,
    ) -> None:
        roots = [
            root
            for stmt in body
            for root in expression_roots(stmt, lambda n, m: self.remark(function, n, m))
        ]
        # Unannotated leaves may be taken as the module's arrays: `speculate.py`
        floats = self.python_floats(func, typer)
        speculation = self.speculator.body(body, typer, func, floats) if self.speculator else None
        stores = candidates(body)  # assignments whose result may go into the target
        numbers = _numbers(func) if func is not None else frozenset()
        masks, done = masked_candidates(body), set()  # `X[c] = f(X[c])`: masked.py
        for root in roots:
            masked = masks.get(id(root))
            if masked is not None:  # tried once, at its first root (the target)
                parts = (id(masked.stmt.targets[0]), id(masked.value))
                for part in parts:
                    masks.pop(part, None)
                if self.masked(function, masked, typer, speculation, opts):
                    done.update(parts)
            if id(root) in done:
                continue
            store = stores.get(id(root))
            augmented = store is not None and store.form != ASSIGN  # `t OP= v`: `t OP v`
            if augmented and getattr(store.obj, "id", None) in numbers:
                # `s += np.tanh(a[i, i])` where `s = 0.0`: Python rebinds a number, no
                # array is written (a store site's guard would refuse it on every call)
                self.expression(function, root, typer, speculation, opts, None)
                continue
            if augmented and isinstance(store.stmt.value, _LEAVES):
                # `t -= v`: one in-place call, the library's; a site would go through a
                # temporary (its target is an operand) and lose (NumPy: 2.1x at 1e5)
                self.remark(function, store.stmt, "one in-place operation stays the library's")
                continue
            if augmented and self.expression(
                function, augmented_root(store), typer, speculation, opts, store
            ):
                continue
            # an augmented store that cannot be one: its value is an expression alone
            self.expression(function, root, typer, speculation, opts, None if augmented else store)
        for reason in sorted(speculation.declined if speculation else ()):
            self.remark(function, body[0], f"unannotated values not taken as arrays: {reason}")

    def masked(
        self,
        function: str,
        masked: Masked,
        typer: Typer,
        speculation: Any,
        opts: FunctionOptions,
    ) -> bool:
        """Cut a masked update as one store site (masked.py) where its tree, with some
        imported module's `where`, is one site over plain names storing into the whole
        target; False (nothing cut) otherwise."""
        for alias in sorted(typer.imports):
            where = ast.Attribute(ast.Name(alias, ast.Load()), "where", ast.Load())
            made = masked_tree(masked, where)
            leaf_typer, conv = self.typed(made.root, typer, speculation, False)
            trial: list[ExprSite] = []
            if id(made.root) in conv:
                self.collect(function, made.root, conv, opts, trial)
            if len(trial) != 1 or trial[0].node is not made.root:
                continue
            leaves = trial[0].leaves
            if not all(isinstance(leaf, ast.Name) for leaf in leaves):
                continue
            if not masked_admits(made, conv, self.operands, leaf_typer):
                continue
            if refusal(made.store, made.root, conv, leaves, typer) is None:
                return self.expression(function, made.root, typer, speculation, opts, made.store)
        return False

    def python_floats(self, func: ast.FunctionDef | None, typer: Typer) -> frozenset[str]:
        """The parameters that are surely Python floats (`Typer.python_float`: annotated
        `float`, or a specialization's call gave one) and that the body never rebinds."""
        if func is None:
            return frozenset()
        bound = binding_counts(func)
        described = self.target.described if self.target is not None else {}
        a = func.args
        return frozenset(
            arg.arg
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]
            if bound[arg.arg] == 1 and typer.python_float(arg, described.get(arg.arg))
        )

    def expression(
        self,
        function: str,
        root: ast.expr,
        typer: Typer,
        speculation: Any,
        opts: FunctionOptions,
        store: Store | None,
    ) -> bool:
        """Cut the sites of one expression. With `store`, a site at `root` stores into
        the statement's target; an augmented one (`root` not in the tree) keeps no site
        unless one stores, and returns False so the value is cut as an expression."""
        augmented = store is not None and root is not getattr(store.stmt, "value", None)
        leaf_typer, conv = self.typed(root, typer, speculation, augmented)
        new: list[ExprSite] = []
        self.collect(function, root, conv, opts, new)
        bounded = speculation.bounded if speculation is not None else {}
        for site in new:
            typed = [leaf_typer.expr(leaf, conv) for leaf in site.leaves]
            leaves = [id(leaf) for leaf in site.leaves] + list(site.repeats)
            tests = {ast.dump(t): t for i in leaves for t in bounded.get(i, ())}
            site.tests = list(tests.values())
            site.assumed = tuple(  # guessed arrays (an int leaf like `x.shape[0]` is none)
                i
                for i, leaf in enumerate(site.leaves)
                if typer.expr(leaf, conv) is UNKNOWN
                and isinstance(typed[i], TensorType | ColumnType)
            )
            library, arrays = site_library(site), self.oracle.speculative_arrays()
            site.leaf_types = [guessed_leaf(t, library, arrays) for t in typed]
            for i, leaf in enumerate(site.leaves):  # implied views: typed by their op
                if id(leaf) in self.implied:
                    site.leaf_types[i] = self.implied[id(leaf)][1]
                    site.assumed = tuple(k for k in site.assumed if k != i)
            # an annotated rank an implied view needs is tested first, per call
            ranks = {ast.dump(t): t for v in site.implied if (t := self.rank_tests.get(id(v)))}
            site.tests = [*ranks.values(), *site.tests]
        if store is not None:
            self.stores(function, store, root, conv, typer, new)
            if store.form != ASSIGN and not any(s.store is store for s in new):
                return False  # the target is no leaf of a stored tree: nothing is kept
            if store.form != ASSIGN and self.lone_operation(root, conv):
                # `x += A @ y`: the value converges nowhere, so the site would be the
                # library's one in-place loop through a temporary (its target is an
                # operand): slower. The value is cut alone (its own sites stay)
                self.remark(function, store.stmt, "one in-place operation stays the library's")
                return False
        for site in new:  # a store's target (an augmented one's first leaf) is no argument
            first = 0 if site.store is None or site.store.form == ASSIGN else 1
            site.args, site.sources = arguments(
                site.leaves[first:], self.deferred | set(self.implied)
            )
            site.id = self.next_id(function)  # ids in the order the sites were cut
        self.found.expr_sites.extend(new)
        return True

    def lone_operation(self, root: ast.expr, conv: dict[int, Converge]) -> bool:
        """Whether the tree at `root` is its one operation over leaves (no operand of
        it converges)."""
        return id(root) in conv and not any(id(c) in conv for c in self.operands[id(root)])

    def typed(
        self, root: ast.expr, typer: Typer, speculation: Any, augmented: bool
    ) -> tuple[Typer, dict[int, Converge]]:
        """What `root`'s nodes converge onto, and the typer of its leaves: plain typing,
        then Unknown leaves assumed arrays where the body speculates (`speculate.py`)."""
        conv: dict[int, Converge] = {}
        self.converge(root, typer, conv)
        if speculation is None:
            return typer, conv
        leaf_typer, conv = speculation.retype(root, conv, self.operands, self.converge)
        self.deferred = speculation.deferred
        if augmented and isinstance(root, ast.BinOp):
            self.deferred.discard(id(root.left))  # `t OP= v`'s target: the runtime's
        return leaf_typer, conv

    def stores(
        self,
        function: str,
        store: Store,
        root: ast.expr,
        conv: dict[int, Converge],
        typer: Typer,
        sites: list[ExprSite],
    ) -> None:
        """Which of the `sites` cut from `root` writes `store`'s target (the one at the
        root, where the types allow it), and the remarks saying why not."""
        augmented = root is not getattr(store.stmt, "value", None)
        for site in sites:
            if site.node is not root:
                continue
            why = refusal(store, root, conv, site.leaves, typer)
            if why is None:
                site.store = store
            elif why:  # the types say a store site could never run fast
                self.remark(function, store.stmt, f"the value is stored by Python: {why}")
        if augmented and (mixed := unfused(store, root, conv, typer)):
            self.remark(function, store.stmt, f"the value is stored by Python: {mixed}")

    def converge(self, node: ast.expr, typer: Typer, conv: dict[int, Converge]) -> None:
        """Post-order: decide, for every node under `node`, what it converges onto.
        A call that writes memory, does IO or calls back converges nowhere, nor does
        any node above it: Python's order around it must stay (the tree splits there)."""
        for child in children(node):
            self.converge(child, typer, conv)
        if any(id(child) in self.barriers for child in children(node)):
            self.barriers.add(id(node))
            return
        answer: Converge | None = None
        if isinstance(node, _OPERATOR_NODES):
            if isinstance(node, ast.Compare) and len(node.ops) != 1:
                return
            operands = operator_operands(node)
            reply = self.oracle.operator(typer.operator_context(node, operands, conv))
            answer = reply if isinstance(reply, Converge) else None
        elif isinstance(node, ast.Call):
            is_method = typer.qualname(node.func) is None and isinstance(node.func, ast.Attribute)
            operands = [node.func.value, *node.args] if is_method else list(node.args)
            answer = self.call(node, typer.call_context(node, conv), operands)
        if answer is not None:
            picked = answer.operands
            operands = operands if picked is None else [operands[i] for i in picked]
            if answer.views is not None:  # `np.outer(u, v)`: `u[:, None] * v[None, :]`
                proven = {**self.ranked, **self.observed}
                viewed = implied_views(operands, answer.views, proven, typer.env)
                if viewed is None:
                    return
                for view, operand in zip(viewed, operands, strict=True):
                    if isinstance(view, ast.Subscript) and view is not operand:
                        self.implied[id(view)] = (view, view_type(typer.expr(operand, conv)))
                        name = view.value.id  # type: ignore[attr-defined]
                        if name in self.ranked and name not in self.observed:
                            self.rank_tests[id(view)] = rank_test(name, self.ranked[name])
                operands = viewed
            conv[id(node)] = answer
            self.operands[id(node)] = operands

    def call(
        self, node: ast.Call, ctx: CallContext | None, operands: list[ast.expr]
    ) -> Converge | None:
        """What a call converges onto, with its plugin's lowering spec as the op's
        `lowering` attribute. Only a call whose operands are its positional arguments
        converges: keywords left after `adjust_call`, or dropped ones that were not
        literals (their evaluation would be lost), keep it Python, except a literal
        keyword the op holds as its attribute of that name and value
        (`np.max(x, axis=-1)`: `tensor.reduce {axis = -1}`)."""
        if ctx is None:
            return None
        answer = self.oracle.call(ctx)
        if answer is not None and answer.effects & BARRIER_EFFECTS:
            self.barriers.add(id(node))
            if "Callback" in answer.effects and id(node) not in self._told:
                self._told.add(id(node))
                self.remark(
                    self._function,
                    node,
                    f"`{ast.unparse(node)}` has effect Callback (it calls Python code it "
                    "is given): it is never inside a site or region, the code around it "
                    "keeps Python's order",
                )
            return None
        if len(ctx.args) != len(operands):
            return None
        if not all(isinstance(k.value, ast.Constant) or is_literal(k.value) for k in node.keywords):
            return None  # `axis=-1` is a negated constant
        converge = self.oracle.tensor_operation(ctx)
        if ctx.kwargs and not _holds_keywords(converge, ctx):
            return None
        spec = getattr(answer, "lowering", None)
        if converge is None or type(spec) not in OP_SPEC_KINDS:
            return converge
        attributes = {**converge.attributes, LOWERING_ATTRIBUTE: spec_attribute(spec)}
        return replace(converge, attributes=attributes)

    def collect(
        self,
        function: str,
        node: ast.expr,
        conv: dict[int, Converge],
        opts: FunctionOptions,
        out: list[ExprSite],
    ) -> None:
        """Cut maximal trees out of `node` into `out`; reductions only at a tree's root.
        A site's id is given where it is kept (`expression`)."""
        if id(node) not in conv:
            for child in children(node):
                self.collect(function, child, conv, opts, out)
            return
        leaves: list[ast.expr] = []
        self._tree(node, conv, leaves, function, opts, out)
        if any(
            isinstance(conv[id(n)].result, TensorType | ColumnType)
            or conv[id(n)].op == "tensor.reduce"
            for n in tree_nodes(node, conv, self.operands)
        ):
            unique, repeats = share(*dedupe(leaves), self.deferred | set(self.implied))
            site = ExprSite(
                "",
                function,
                node,
                conv,
                self.operands,
                unique,
                opts.fastmath,
                repeats=repeats,
                implied=[self.implied[id(v)][0] for v in leaves if id(v) in self.implied],
            )
            out.append(site)

    def _tree(
        self,
        node: ast.expr,
        conv: dict[int, Converge],
        leaves: list[ast.expr],
        function: str,
        opts: FunctionOptions,
        out: list[ExprSite],
    ) -> None:
        for child in self.operands[id(node)]:
            if id(child) in conv and conv[id(child)].op != "tensor.reduce":
                self._tree(child, conv, leaves, function, opts, out)
            elif id(child) in conv:  # a reduction inside: its own site, a leaf here
                self.collect(function, child, conv, opts, out)
                leaves.append(child)
            elif not is_literal(child):
                for grandchild in children(child):
                    self.collect(function, grandchild, conv, opts, out)
                leaves.append(child)


def _holds_keywords(converge: Converge | None, ctx: CallContext) -> bool:
    """Whether the op `converge` records every keyword of the call as its attribute of
    the same name and literal value (so the keyword's meaning is the op's)."""
    if converge is None:
        return False
    held, given = converge.attributes, ctx.kw_constants
    return all(
        k in held and k in given and type(held[k]) is type(given[k]) and held[k] == given[k]
        for k in ctx.kwargs
    )


def _numbers(func: ast.FunctionDef) -> frozenset[str]:
    """Names the function binds to a number literal (`s = 0.0`): accumulators that
    stay Python numbers (or NumPy scalars), never arrays a store site could write."""
    return frozenset(
        target.id
        for node in own_nodes(func)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and type(node.value.value) in (int, float)
        for target in node.targets
        if isinstance(target, ast.Name)
    )


def _named(stmt: ast.stmt, qualname: str) -> ast.FunctionDef | None:
    """The module-level function `f`, or the method `Class.m`, that `stmt` defines."""
    head, _, method = qualname.partition(".")
    if isinstance(stmt, ast.FunctionDef) and not method and stmt.name == head:
        return stmt
    if isinstance(stmt, ast.ClassDef) and method and stmt.name == head:
        for inner in stmt.body:
            if isinstance(inner, ast.FunctionDef) and inner.name == method:
                return inner
    return None


__all__ = [
    "SiteFinder",
    "ExprSite",
    "FunctionSite",
    "Remark",
    "Findings",
    "FunctionOptions",
    "Specializable",
    "Target",
    "site_library",
]
