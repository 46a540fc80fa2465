"""Speculative sites: unannotated leaves assumed to be arrays of the module's library.

Most array code carries no annotations: in `def f(a, b, c): return 2.0*a + 3.0*b*c - a/b`
every leaf is Unknown, so no operator converges. Where the module imports a library
whose plugin offers a `speculative_array` (NumPy: a float64 ndarray), the front end
types such an expression again with its Unknown leaves assumed to be that array. A
tree that converges only then is a *speculative* site. Its guard checks every leaf at
run time and anything else (floats, lists, another library's tensors) runs the original
Python, so a wrong assumption costs a guard, never an answer.

Which library: the one the tree names (a typed array or a library call in it), else the
one the function names, else the module's single candidate; with two candidates and no
evidence nothing is assumed (a remark says so). Never assumed: literals, containers,
module attributes of other libraries (`math.pi`), builtin calls (`len(x)`), loop
counters (`for i in range(...)`, `enumerate`) and locals assigned once from those.

What keeps Python's semantics: a speculative tree holds at least MIN_OPERATIONS
operations (one ufunc call gains nothing from fusion, and `i + 1` in scalar code must
not pay a guard), unless every leaf is surely an array (`_surely_array`: typed, or a
name bound once to a basic view of a typed one, `x = pos[:, 0:1]` in a specialization,
or its `.T`: the site's call then costs less than the ufunc's), and after its first
operation every leaf Python evaluates is a plain name or a literal: on the fallback
path an operator of an unknown object may raise or have effects, so a call or
attribute read after it would run out of Python's order. A
tree whose every leaf is a name or a basic view of a steady name passes the names and
lets the runtime take the views (`views.py`): those views may come anywhere.
The core names no library: the type comes from the plugin, the library from its type.
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from ppy_core.compiler.frontend.bound import binding_counts
from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.rebound import body_nodes, rebound_arrays
from ppy_core.compiler.frontend.typer import Typer, single_assignments
from ppy_core.compiler.frontend.views import (
    Bound,
    Spans,
    counter_part,
    counter_spans,
    deferrable,
    steady_names,
    view_of,
)
from ppy_core.interface.plugin import Converge
from ppy_core.ir.types import F64, I64, UNKNOWN, ColumnType, ScalarType, TensorType, Type

MIN_OPERATIONS = 2
_BUILTINS = frozenset(dir(builtins))
_COUNTING = ("range", "enumerate")
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

Operands = dict[int, list[ast.expr]]
# id(leaf) -> the tests under which it cannot raise (`safe_tests`): a leaf read after the
# tree's first operation, so the call runs only where they hold, else Python's statement
Bounds = dict[int, list[ast.expr]]
Converger = Callable[[ast.expr, Typer, dict[int, Converge]], None]


def guessed_leaf(t: Type, library: str, arrays: Mapping[str, TensorType]) -> Type:
    """What a site's leaf typed `t` is taken to be; the guess is decided here only (the
    run-time guard checks it). An array or a column is itself, and a Python number or
    bool a number; any other leaf (Unknown: no typing knew it) is the array its site's
    library lets an unannotated leaf be (`arrays`: `Oracle.speculative_arrays`, from the
    plugins' `speculative_array`), or, for a library whose plugin offers none (torch's
    fusion takes an Unknown operand as a tensor), a float64 array of that library."""
    if isinstance(t, TensorType | ColumnType):
        return t
    if isinstance(t, ScalarType) and t.kind in ("f64", "i64", "i1"):
        return t
    return arrays.get(library) or TensorType(F64, None, library)


@dataclass(slots=True)
class SpeculativeTyper(Typer):
    """A Typer that answers `array` for an Unknown leaf the scope lets it assume."""

    array: TensorType | None = None
    scope: BodyScope | None = None

    def expr(self, node: ast.expr, conv: Mapping[int, Converge]) -> Type:
        found = Typer.expr(self, node, conv)
        if found is not UNKNOWN or self.scope is None or id(node) in conv:
            return found
        if self.scope.python_int(node, self):
            return I64  # the guess is per leaf: `x.shape[1] - K + 1` is ints, no site
        if isinstance(node, ast.Name) and node.id in self.scope.defaults:
            return self.scope.defaults[node.id]  # `alpha=1.5`: guessed its default's type
        if self.array is not None and self.scope.may_assume(node, self.array.library, self):
            return self._view_of_typed(node, conv) or self._rebound(node) or self.array
        return found

    def _rebound(self, node: ast.expr) -> Type | None:
        """A name rebound to parts of an array of the library: that array (`rebound`)."""
        if not isinstance(node, ast.Name) or self.scope is None or self.array is None:
            return None
        found = self.scope.rebound.get(node.id)
        return found if found is not None and found.library == self.array.library else None

    def _view_of_typed(self, node: ast.expr, conv: Mapping[int, Converge]) -> Type | None:
        """A basic view (`A[1:-1, :-2]`, `b[:, None]`) of an array typed by its
        annotation has its element type (a float32 stencil is a float32 kernel), of a
        rank the guard checks; None where the base is not such an array."""
        if not isinstance(node, ast.Subscript) or view_of(node) is None or self.array is None:
            return None
        base = Typer.expr(self, node.value, conv)
        if isinstance(base, TensorType) and base.library == self.array.library:
            return TensorType(base.element, None, base.library)
        return None


@dataclass(slots=True)
class BodyScope:
    """What may be assumed inside one function (or one module-level statement)."""

    assigned: Mapping[str, ast.expr]  # names bound once, by `name = value`
    counters: frozenset[str]  # loop counters: ints, never arrays
    steady: Mapping[str, Bound] = field(default_factory=dict)  # views.steady_names
    numbers: frozenset[str] = frozenset()  # surely Python floats (`number_leaf`)
    defaults: Mapping[str, Type] = field(default_factory=dict)  # `parameter_defaults`
    rebound: Mapping[str, TensorType] = field(default_factory=dict)  # `rebound_arrays`
    spans: Mapping[str, Spans] = field(default_factory=dict)  # views.counter_spans

    def defers(self, leaves: list[ast.expr]) -> bool:
        """Whether a tree over `leaves` may pass its views' names (`views.py`), where its
        library's runtime adapter takes views: each leaf is a name or a view of a steady
        name, one at least a view."""
        views = [leaf for leaf in leaves if not isinstance(leaf, ast.Name)]
        return bool(views) and all(deferrable(leaf, self.steady, self.spans) for leaf in views)

    def may_assume(self, node: ast.expr, library: str, typer: Typer) -> bool:
        return self._may(node, library, typer, frozenset())

    def python_int(
        self, node: ast.expr, typer: Typer, seen: frozenset[str] = frozenset(), inner: bool = False
    ) -> bool:
        """Surely a Python int where it is read, whatever the arguments are: `len(...)`,
        an array's `x.shape[k]`, `x.ndim` or `x.size`, `+ - * // %` of such and int
        literals, and names bound once to those. Such a leaf is never guessed an array:
        shape arithmetic would be a site that refuses every call. (A loop counter stays
        untyped, so a tree holding one is none: `rmax * i / npt` in a loop is scalar
        code whose other leaves are numbers, and a guard would refuse it each time.
        Inside int arithmetic a counter is an int and so is a name typed one: in a
        specialization given ints, stockham_fft's `R ** (K - i - 1)` is no site whose
        guard took `K - i` for an array and refused every pass.)"""
        if isinstance(node, ast.Constant):
            return type(node.value) is int
        if isinstance(node, ast.Name):
            if node.id in typer.imports:
                return False
            if (inner and node.id in self.counters) or Typer.expr(typer, node, {}) == I64:
                return True
            value = self.assigned.get(node.id)
            if value is None or node.id in seen or node.id in typer.imports:
                return False
            return self.python_int(value, typer, seen | {node.id})
        if isinstance(node, ast.Call):
            return (
                isinstance(node.func, ast.Name)
                and node.func.id == "len"
                and _is_builtin(node.func, typer)
                and len(node.args) == 1
                and not node.keywords
            )
        if isinstance(node, ast.Attribute):
            return node.attr in _INT_ATTRIBUTES and _of_value(node.value, typer)
        if isinstance(node, ast.Subscript):
            shape = node.value
            return (
                isinstance(shape, ast.Attribute)
                and shape.attr == "shape"
                and _of_value(shape.value, typer)
                and _int_index(node.slice)
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, _INT_OPS):
            return self.python_int(node.left, typer, seen, True) and self.python_int(
                node.right, typer, seen, True
            )
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            return self.python_int(node.operand, typer, seen, inner)
        return False

    def _may(self, node: ast.expr, library: str, typer: Typer, seen: frozenset[str]) -> bool:
        if isinstance(node, ast.Name):
            if node.id in self.counters or node.id in seen or node.id in typer.imports:
                return False
            value = self.assigned.get(node.id)
            return value is None or self._may(value, library, typer, seen | {node.id})
        if isinstance(node, ast.Attribute | ast.Subscript):
            owner = typer.qualname(node.value if isinstance(node, ast.Subscript) else node)
            return owner is None or owner.partition(".")[0] == library
        if isinstance(node, ast.Call):
            callee = typer.qualname(node.func)
            if callee is not None:
                return callee.partition(".")[0] == library
            return not _is_builtin(node.func, typer)
        if isinstance(node, ast.BinOp):
            return any(self._may(n, library, typer, seen) for n in (node.left, node.right))
        if isinstance(node, ast.UnaryOp):
            return self._may(node.operand, library, typer, seen)
        if isinstance(node, ast.IfExp):
            return any(self._may(n, library, typer, seen) for n in (node.body, node.orelse))
        return False


@dataclass(slots=True)
class Choice:
    """The array assumed for one expression root (None: nothing), and why not."""

    array: TensorType | None
    reason: str = ""


@dataclass(slots=True)
class Speculator:
    """Per module: the arrays plugins let the core assume, and the array libraries known."""

    candidates: Mapping[str, TensorType]
    libraries: frozenset[str]
    module_assigned: Mapping[str, ast.expr] = field(default_factory=dict)

    @classmethod
    def for_module(cls, oracle: Oracle, tree: ast.Module) -> Speculator | None:
        candidates = dict(oracle.speculative_arrays())
        if not candidates:
            return None
        known = {
            t.library
            for t in oracle.external_types().values()
            if isinstance(t, TensorType) and t.library
        }
        return cls(candidates, frozenset(known | set(candidates)), single_assignments(tree))

    def scope(
        self, body: list[ast.stmt], local: Mapping[str, ast.expr], local_names: Iterable[str]
    ) -> BodyScope:
        """`local`: the body's names bound once; `local_names`: every name it binds
        (a module name it shadows says nothing about the local)."""
        shadowed = set(local_names)
        assigned = {k: v for k, v in self.module_assigned.items() if k not in shadowed}
        assigned.update(local)
        return BodyScope(assigned, frozenset(_counters(body)))

    def body(
        self,
        body: list[ast.stmt],
        typer: Typer,
        func: ast.FunctionDef | None = None,
        numbers: frozenset[str] = frozenset(),
    ) -> BodySpeculation | None:
        """Speculation inside one function body (or module statement, `func` None:
        no name is steady there) typed by `typer`; `numbers`: the names it holds that
        are surely Python floats (a specialization's parameters)."""
        if not body:
            return None
        local = single_assignments(ast.Module(body=body, type_ignores=[]))
        scope = self.scope(body, local, typer.env)
        if func is not None:
            scope.steady = steady_names(func)
            scope.spans = counter_spans(func)
            scope.defaults = parameter_defaults(func)
            scope.rebound = rebound_arrays(body, typer)
        scope.numbers = numbers
        named = libraries_named(body_nodes(body), typer, self.libraries)
        return BodySpeculation(self, typer, scope, named)

    def choose(self, root: ast.expr, body_libraries: set[str], typer: Typer) -> Choice:
        """The array an Unknown leaf of `root` is assumed to be."""
        named = libraries_named(_walk(root), typer, self.libraries)
        for evidence, where in ((named, "the expression"), (body_libraries, "the function")):
            if len(evidence) > 1:
                return Choice(None, f"{where} names {' and '.join(sorted(evidence))}")
            if evidence:
                library = next(iter(evidence))
                array = self.candidates.get(library)
                return Choice(array, "" if array else f"{where} names {library}")
        if len(self.candidates) == 1:
            return Choice(next(iter(self.candidates.values())))
        return Choice(None, f"{' and '.join(sorted(self.candidates))} could each be meant")


@dataclass(slots=True)
class BodySpeculation:
    """One body's speculation: its scope, the libraries it names, why it declined."""

    speculator: Speculator
    typer: Typer
    scope: BodyScope
    named: set[str]
    declined: set[str] = field(default_factory=set)
    deferred: set[int] = field(default_factory=set)  # ids of views the runtime takes
    bounded: Bounds = field(default_factory=dict)  # late leaves that could raise

    def retype(
        self, root: ast.expr, plain: dict[int, Converge], operands: Operands, converge: Converger
    ) -> tuple[Typer, dict[int, Converge]]:
        """`root` typed again (by `converge`, the site finder's) with its Unknown leaves
        assumed to be the chosen library's array. The trees only that made converge
        are kept where `prune` lets them; the typer returned types the leaves."""
        if not self._has_unknown(root, plain):
            for tree in tree_roots(root, plain, operands):  # `d**2 + s**2`, s a float
                early = leaves_before_operations(tree, plain, operands)
                leaves = list(tree_leaves(tree, plain, operands))
                _bound(leaves, early, self.scope.numbers, self.bounded)
            return self.typer, plain
        choice = self.speculator.choose(root, self.named, self.typer)
        if choice.array is None:
            if choice.reason:
                self.declined.add(choice.reason)
            return self.typer, plain
        before = {n: (c, operands[n]) for n, c in plain.items()}
        view = assumer(self.typer, choice.array, self.scope)
        conv: dict[int, Converge] = {}
        converge(root, view, conv)
        self.deferred |= prune(root, conv, before, operands, view, self.bounded)
        return view, conv

    def _has_unknown(self, root: ast.expr, plain: Mapping[int, Converge]) -> bool:
        """Does `root` hold a leaf that could be assumed (typed Unknown, assumable)?"""
        return any(
            isinstance(n, ast.Name | ast.Attribute | ast.Subscript | ast.Call)
            and id(n) not in plain
            and self.typer.expr(n, plain) is UNKNOWN
            for n in _walk(root)
        )


def parameter_defaults(func: ast.FunctionDef) -> dict[str, Type]:
    """Parameters the body never rebinds whose default is an int or float literal:
    the guess for such a leaf is its default's type (`alpha=1.5` is a float, guarded
    per call like any guess), not an array."""
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [
        *zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True),
        *zip(args.kwonlyargs, args.kw_defaults, strict=True),
    ]
    counts = binding_counts(func)
    return {
        arg.arg: F64 if type(default.value) is float else I64
        for arg, default in pairs
        if isinstance(default, ast.Constant)
        and type(default.value) in (int, float)
        and counts[arg.arg] == 1
    }


def libraries_named(nodes: Iterable[ast.AST], typer: Typer, libraries: frozenset[str]) -> set[str]:
    """Array libraries `nodes` name: by a qualified name (`np.sin`) or a typed array."""
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name | ast.Attribute):
            name = typer.qualname(node)
            if name is not None and name.partition(".")[0] in libraries:
                found.add(name.partition(".")[0])
        if isinstance(node, ast.Name):
            t = typer.expr(node, {})
            if isinstance(t, TensorType) and t.library in libraries:
                found.add(t.library)
    return found


def prune(
    root: ast.expr,
    conv: dict[int, Converge],
    plain: Mapping[int, tuple[Converge, list[ast.expr]]],
    operands: Operands,
    view: SpeculativeTyper,
    bounded: Bounds,
) -> set[int]:
    """Drop from `conv` each tree that only the assumption made converge and that is
    too small, would reorder Python's evaluation, or has a leaf still Unknown to `view`
    (one never assumed, like `math.pi`: it would fail every guard); `plain` (node id ->
    what plain typing found, with its operands) is put back for those trees. Returned:
    the ids of the views kept trees pass by name (`BodyScope.defers`). A kept tree's
    late number leaves that could raise (`dt / dx**2`) go into `bounded`."""
    deferred: set[int] = set()
    assert view.scope is not None
    assert view.array is not None
    _cut_elements(root, conv, operands, view)
    for tree in list(tree_roots(root, conv, operands)):
        nodes = list(tree_nodes(tree, conv, operands))
        leaves = list(tree_leaves(tree, conv, operands))
        numbers, early = view.scope.numbers, leaves_before_operations(tree, conv, operands)
        if all(id(n) in plain for n in nodes):  # typed without guessing: kept as it is
            _bound(leaves, early, numbers, bounded)
            continue
        others = [leaf for leaf in leaves if not number_leaf(leaf, numbers)]
        defers = view.scope.defers(others) and view.oracle.takes_views(view.array.library)
        if (
            (len(nodes) < MIN_OPERATIONS and not all(_surely_array(x, view) for x in leaves))
            or not (defers or in_python_order(tree, conv, operands, numbers))
            or any(view.expr(leaf, conv) is UNKNOWN for leaf in leaves)
        ):
            for n in nodes:
                if id(n) in plain:
                    conv[id(n)], operands[id(n)] = plain[id(n)]
                else:
                    del conv[id(n)]
        else:
            if defers:
                deferred.update(id(leaf) for leaf in others if not isinstance(leaf, ast.Name))
            _bound(leaves, early, numbers, bounded)
    return deferred


def _surely_array(leaf: ast.expr, view: SpeculativeTyper) -> bool:
    """A leaf that is an array of the assumed library without guessing: typed so, or a
    name bound once to a basic view of a name typed so (a specialization's parameter:
    `x = pos[:, 0:1]`), or such a name's `.T`. A tree of one operation over such leaves
    is kept (MIN_OPERATIONS guards scalar code from paying a guard, which this is not;
    a site's call costs less than a ufunc's at small sizes: nbody's `x.T - x`)."""
    assert view.scope is not None
    assert view.array is not None
    library = view.array.library
    if isinstance(leaf, ast.Attribute) and leaf.attr == "T":
        leaf = leaf.value
    typed = Typer.expr(view, leaf, {})
    if isinstance(typed, TensorType):
        return typed.library == library
    value = view.scope.assigned.get(leaf.id) if isinstance(leaf, ast.Name) else None
    if value is None or view_of(value) is None:
        return False
    assert isinstance(value, ast.Subscript)
    base = Typer.expr(view, value.value, {})
    return isinstance(base, TensorType) and base.library == library


def _cut_elements(
    root: ast.expr, conv: dict[int, Converge], operands: Operands, view: SpeculativeTyper
) -> None:
    """Drop from `conv` every node over a leaf that is surely no array of the guessed
    kind: one element of a typed array (`_surely_element`: go_fast's `np.tanh(a[i, i])`
    in a specialization), or complex arithmetic where the guess is real
    (`_complex_literal`). Such a leaf is never the array a site would take it for, so
    its guard would refuse each call until the site retires, and every refusal and
    retired check costs. Nodes beside it keep their own (smaller) trees."""
    assert view.array is not None
    real = not _complex(view.array)

    def cut(node: ast.expr) -> bool:  # whether `node`'s tree holds such a leaf
        if id(node) not in conv:
            return _surely_element(node, view) or (real and _complex_literal(node))
        below = [cut(operand) for operand in operands[id(node)]]  # every child visited
        if any(below):
            del conv[id(node)]
            return True
        return False

    for tree in list(tree_roots(root, conv, operands)):
        cut(tree)


def _surely_element(leaf: ast.expr, view: SpeculativeTyper) -> bool:
    """`a[i, j]` (or a name bound once to it) indexing every axis of an array typed
    with its rank by an int each (an int literal, a loop counter, `k + 1` of one, or
    anything `python_int` proves): one element, a scalar whatever the values are."""
    assert view.scope is not None
    scope = view.scope
    if isinstance(leaf, ast.Name) and Typer.expr(view, leaf, {}) is UNKNOWN:
        leaf = scope.assigned.get(leaf.id, leaf)
    if not isinstance(leaf, ast.Subscript):
        return False
    base = Typer.expr(view, leaf.value, {})
    if not isinstance(base, TensorType) or base.shape is None:
        return False
    parts = leaf.slice.elts if isinstance(leaf.slice, ast.Tuple) else [leaf.slice]
    return len(parts) == len(base.shape) and all(_int_item(p, view) for p in parts)


def _int_item(part: ast.expr, view: SpeculativeTyper) -> bool:
    """An index item that is surely an int: never a slice, an axis or an array."""
    assert view.scope is not None
    if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
        part = part.operand
    counted = counter_part(part)
    if counted is not None and counted[0].id in view.scope.counters:
        return True
    return view.scope.python_int(part, view)


def _complex_literal(node: ast.expr) -> bool:
    """Arithmetic (`+ - * / **`, signs) holding a complex literal among its operands:
    its value is complex, or an object, or an error, never a real array (stockham_fft's
    `np.exp(-2j * np.pi * ii_coord[...] / R)`, whose guard refused every pass)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, complex)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _complex_literal(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _COMPLEX_OPS):
        return _complex_literal(node.left) or _complex_literal(node.right)
    return False


def _complex(t: TensorType) -> bool:
    return isinstance(t.element, ScalarType) and t.element.kind.startswith("c")


def _bound(leaves: list[ast.expr], early: set[int], numbers: frozenset[str], out: Bounds) -> None:
    """The `safe_tests` of a kept tree's number leaves read after its first operation."""
    for leaf in leaves:
        if id(leaf) not in early and number_leaf(leaf, numbers) and (tests := safe_tests(leaf)):
            out[id(leaf)] = tests


def in_python_order(
    root: ast.expr,
    conv: Mapping[int, Converge],
    operands: Operands,
    numbers: frozenset[str] = frozenset(),
) -> bool:
    """True if every leaf Python evaluates after the tree's first operation is a name,
    a literal, arithmetic of `numbers` (`number_leaf`), or a basic view of a name an
    earlier leaf viewed the same way (so evaluating all leaves first changes nothing
    observable; see `views.view_of`)."""
    started = False
    viewed: dict[str, int] = {}

    def walk(node: ast.expr) -> bool:
        nonlocal started
        for child in operands[id(node)]:
            view = view_of(child)
            if _inside(child, conv):
                if not walk(child):
                    return False
            elif (
                started
                and not isinstance(child, ast.Name | ast.Constant)
                and not _negated(child)
                and not number_leaf(child, numbers)
            ):
                if view is None or viewed.get(view[0]) != view[1]:
                    return False
            elif view is not None:
                viewed.setdefault(*view)
        started = True
        return True

    return walk(root)


_NUMBER_OPS = (ast.Add, ast.Sub, ast.Mult, ast.USub, ast.UAdd)
_EXPONENTS = range(2, 5)  # `dx**2` .. `dx**4`: a float, or OverflowError


def power_bound(exponent: int) -> float:
    """|x| below this: `x ** exponent` of a Python float is finite (at most 2**1023),
    so Python's float pow cannot raise (an underflow to 0.0 does not raise either)."""
    return float(2 ** (1023 // exponent))


def safe_tests(leaf: ast.expr) -> list[ast.expr]:
    """Tests under which a number leaf (`number_leaf`) cannot raise, inner ones first
    so each runs only where those before it held: `-b < dx < b` for `dx**k`
    (`power_bound`), `d != 0` for `n / d` (Python's float division raises only
    there; `d` is `+ - *` of floats and bounded powers, which cannot raise). Each
    reads Python floats and literals only: no code runs, nothing raises."""
    tests: list[ast.expr] = []

    def walk(node: ast.expr) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                walk(child)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            bound = power_bound(node.right.value)  # type: ignore[attr-defined]
            name = ast.Name(node.left.id, ast.Load())  # type: ignore[attr-defined]
            between = [ast.Lt(), ast.Lt()]
            tests.append(ast.Compare(ast.Constant(-bound), between, [name, ast.Constant(bound)]))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            divisor = copy.deepcopy(node.right)
            tests.append(ast.Compare(divisor, [ast.NotEq()], [ast.Constant(0)]))

    walk(leaf)
    return tests


def number_leaf(node: ast.expr, numbers: frozenset[str]) -> bool:
    """`2 * dx`, `-dt`, `1 / dt`, `dt / dx**2`: `+ - * /` of number literals and
    `numbers` (names that are surely Python floats), and their powers by 2-4. A scalar
    leaf of a tree, which no plugin fuses; Python's float `+ - *` cannot raise, warn or
    run code (an overflow is inf), so reading it before the tree's operations is
    reading it where Python does. A division may raise ZeroDivisionError, a power
    OverflowError: read before any of the tree's operations the leaf raises where
    Python's does; read after one, the call runs only where its `safe_tests` hold (the
    rewrite's test), else Python runs the statement. Never: an int too large for a
    float meeting one (hence int literals of at most 2**53 only)."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return isinstance(value, float) or abs(value) <= 2**53
    if isinstance(node, ast.Name):
        return node.id in numbers
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        exponent = node.right
        return (
            isinstance(node.left, ast.Name)
            and node.left.id in numbers
            and isinstance(exponent, ast.Constant)
            and type(exponent.value) is int
            and exponent.value in _EXPONENTS
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, (*_NUMBER_OPS, ast.Div)):
        return number_leaf(node.left, numbers) and number_leaf(node.right, numbers)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, _NUMBER_OPS):
        return number_leaf(node.operand, numbers)
    return False


def leaves_before_operations(
    root: ast.expr, conv: Mapping[int, Converge], operands: Operands
) -> set[int]:
    """Ids of the tree's leaves Python evaluates before the first of its operations."""
    early: set[int] = set()

    def walk(node: ast.expr) -> bool:  # False once an operation has run
        for child in operands[id(node)]:
            if _inside(child, conv):
                if not walk(child):
                    return False
            else:
                early.add(id(child))
        return False  # this node's operation runs now

    walk(root)
    return early


def tree_roots(
    node: ast.expr, conv: Mapping[int, Converge], operands: Operands
) -> Iterator[ast.expr]:
    """The roots of the maximal trees under `node`, cut as the site finder cuts them."""
    if id(node) not in conv:
        for child in _children(node):
            yield from tree_roots(child, conv, operands)
        return
    yield node
    yield from _below(node, conv, operands)


def _below(node: ast.expr, conv: Mapping[int, Converge], operands: Operands) -> Iterator[ast.expr]:
    for child in operands[id(node)]:
        if _inside(child, conv):
            yield from _below(child, conv, operands)
        elif id(child) in conv:
            yield from tree_roots(child, conv, operands)
        else:
            for grandchild in _children(child):
                yield from tree_roots(grandchild, conv, operands)


def tree_leaves(
    node: ast.expr, conv: Mapping[int, Converge], operands: Operands
) -> Iterator[ast.expr]:
    """The leaves of the tree rooted at `node` (literals are constants, not leaves)."""
    for child in operands[id(node)]:
        if _inside(child, conv):
            yield from tree_leaves(child, conv, operands)
        elif not isinstance(child, ast.Constant) and not _negated(child):
            yield child


def tree_nodes(
    node: ast.expr, conv: Mapping[int, Converge], operands: Operands
) -> Iterator[ast.expr]:
    yield node
    for child in operands[id(node)]:
        if _inside(child, conv):
            yield from tree_nodes(child, conv, operands)


def _inside(child: ast.expr, conv: Mapping[int, Converge]) -> bool:
    """A converged child in its parent's tree (a reduction is a tree of its own)."""
    return id(child) in conv and conv[id(child)].op != "tensor.reduce"


def _negated(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    )


_INT_ATTRIBUTES = ("ndim", "size")
_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
_COMPLEX_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def _of_value(node: ast.expr, typer: Typer) -> bool:
    """`node` reads a value, not a module (`np.size` is a function)."""
    return typer.qualname(node) is None


def _int_index(node: ast.expr) -> bool:
    """`0`, `-1`: a constant position in a shape tuple."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _is_builtin(func: ast.expr, typer: Typer) -> bool:
    return (
        isinstance(func, ast.Name)
        and func.id in _BUILTINS
        and func.id not in typer.env
        and func.id not in typer.globals
        and func.id not in typer.imports
    )


def _counters(body: list[ast.stmt]) -> Iterator[str]:
    """Names bound by `for i in range(...)` and `for i, x in enumerate(...)`."""
    for node in body_nodes(body):
        if not (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Name)
            and node.iter.func.id in _COUNTING
        ):
            continue
        target = node.target
        if node.iter.func.id == "enumerate" and isinstance(target, ast.Tuple) and target.elts:
            target = target.elts[0]
        if isinstance(target, ast.Name):
            yield target.id


def _walk(node: ast.expr) -> Iterator[ast.AST]:
    todo: list[ast.AST] = [node]
    while todo:
        current = todo.pop()
        yield current
        if not isinstance(current, _SCOPES):
            todo.extend(ast.iter_child_nodes(current))


def _children(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, _SCOPES):
        return []
    return [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]


def assumer(base: Typer, array: TensorType, scope: BodyScope) -> SpeculativeTyper:
    """A speculative view of `base` (same imports, names and oracle)."""
    return SpeculativeTyper(
        base.oracle,
        base.imports,
        base.path,
        base.env,
        base.globals,
        base.local_names,
        base.local_types,
        array=array,
        scope=scope,
    )


__all__ = [
    "MIN_OPERATIONS",
    "SpeculativeTyper",
    "BodyScope",
    "Choice",
    "Speculator",
    "BodySpeculation",
    "libraries_named",
    "prune",
    "in_python_order",
    "number_leaf",
    "parameter_defaults",
    "power_bound",
    "safe_tests",
    "Bounds",
    "tree_roots",
    "tree_nodes",
    "tree_leaves",
    "assumer",
]
