"""Undefined names (E1020): Python's scope rules over one module, with no types.

Each scope (the module, a class body, a function or lambda, a comprehension) binds
what any of its statements binds, on any branch; a name read in a scope resolves to
its own scope, then the enclosing functions (never a class body: Python's rule, so a
method does not see its class's names), the module, the builtins of the running
Python. A name no scope binds raises NameError where its line runs; one read under a
`try` that catches NameError, or under a test of the Python version or platform, is
left alone (that line is the fallback), as is every name of a module whose globals
can be written at run time (`globals()[k] = v`, an unknown star import).
"""

from __future__ import annotations

import ast
import builtins
import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

from ppy_core.compiler.check.bindings import IMPLICIT, module_bindings, statement_names
from ppy_core.compiler.check.guards import catches, version_test

#: the running Python's builtins, and names that are builtins on another platform only
BUILTINS = frozenset(dir(builtins)) | {"WindowsError", "__debug__"}
#: what a handler catches when a name is not defined
_NAME_ERRORS = frozenset({"NameError", "UnboundLocalError"})


@dataclass(eq=False, slots=True)
class Scope:
    node: ast.AST
    kind: str  # "module" | "class" | "function" | "comprehension"
    parent: Scope | None
    bound: set[str] = field(default_factory=set)
    globals_: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    open: bool = False
    #: how many statements bind each name here (parameters not counted), and the value
    #: of each name's (last) `name = value`: an instance known by its one binding
    stores: dict[str, int] = field(default_factory=dict)
    values: dict[str, ast.expr] = field(default_factory=dict)


@dataclass(slots=True)
class Undefined:
    node: ast.expr
    name: str
    hint: str


#: `from module import *` at level -> the names it binds, or None when not known
StarNames = Callable[[str | None, int], "set[str] | None"]


class Binder(ast.NodeVisitor):
    """Collects every scope's bindings and every name read, then resolves the reads."""

    def __init__(self, tree: ast.Module, star: StarNames, source: bytes | None = None) -> None:
        bound = module_bindings(tree, source)
        self.module = Scope(tree, "module", None, set(IMPLICIT) | bound.names, open=bound.open)
        self.scope = self.module
        self.star = star
        self.future = any(
            isinstance(s, ast.ImportFrom)
            and s.module == "__future__"
            and any(a.name == "annotations" for a in s.names)
            for s in tree.body
        )
        self.loads: list[tuple[ast.Name, Scope, bool]] = []
        self.guard = 0
        self.visit(tree)

    # -- resolution -------------------------------------------------------------------
    def lookup(self, name: str, scope: Scope) -> Scope | None:
        """The scope that binds `name` read in `scope`; the module for a builtin or an
        open module; None where nothing does."""
        s: Scope | None = scope
        first = True
        while s is not None:
            if name in s.globals_:
                s = self.module
            if s.kind == "class" and not first:
                s = s.parent
                continue
            if name in s.bound or name in s.nonlocals:
                return s
            first = False
            s = s.parent
        if name in BUILTINS or self.module.open:
            return self.module
        return None

    def undefined(self, extra_builtins: frozenset[str] = frozenset()) -> list[Undefined]:
        found = []
        for node, scope, guarded in self.loads:
            if guarded or node.id in extra_builtins or self.lookup(node.id, scope) is not None:
                continue
            found.append(Undefined(node, node.id, self._hint(node.id, scope)))
        return found

    def _hint(self, name: str, scope: Scope) -> str:
        s: Scope | None = scope.parent
        while s is not None:
            if s.kind == "class" and name in s.bound:
                owner = getattr(s.node, "name", "")
                return (
                    f"a class's names are not visible in its methods: write `self.{name}` "
                    f"or `{owner}.{name}`"
                )
            s = s.parent
        visible: set[str] = set(BUILTINS)
        s = scope
        while s is not None:
            visible |= s.bound
            s = s.parent
        close = difflib.get_close_matches(name, visible, n=1)
        if close:
            return f"did you mean `{close[0]}`? else define or import `{name}`"
        return f"define or import `{name}` (no scope this line sees binds it)"

    # -- binding ----------------------------------------------------------------------
    def bind(self, name: str, scope: Scope | None = None) -> None:
        s = scope or self.scope
        if name in s.globals_:
            self.module.bound.add(name)
            s = self.module
        elif name in s.nonlocals:
            ancestor = s.parent
            while ancestor is not None:  # (the enclosing binding it rebinds: all unknown)
                ancestor.stores[name] = ancestor.stores.get(name, 0) + 2
                ancestor = ancestor.parent
            return
        else:
            s.bound.add(name)
        s.stores[name] = s.stores.get(name, 0) + 1

    def _enter(self, node: ast.AST, kind: str) -> Scope:
        scope = Scope(node, kind, self.scope)
        if kind == "function" and self.scope.kind == "class":
            scope.bound.add("__class__")  # the cell `super()` reads
        if kind == "class":
            scope.bound |= {"__module__", "__qualname__"}
        return scope

    def _within(self, scope: Scope, nodes: list[ast.AST]) -> None:
        saved, self.scope = self.scope, scope
        try:
            for node in nodes:
                self.visit(node)
        finally:
            self.scope = saved

    # -- visitors ---------------------------------------------------------------------
    def visit(self, node: ast.AST) -> None:
        """NodeVisitor's dispatch, its method found once per node class (its lookup by
        name at every node, and `iter_fields`, cost as much as the binding itself)."""
        cls = node.__class__
        handler = _HANDLERS.get(cls)
        if handler is None:
            handler = getattr(Binder, f"visit_{cls.__name__}", Binder.generic_visit)
            if handler is ast.NodeVisitor.visit_Constant:
                handler = _leaf  # (a constant holds no names; that method is for 3.7's)
            _HANDLERS[cls] = handler
        handler(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        for name in node._fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for child in value:
                    if isinstance(child, ast.AST):
                        self.visit(child)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.loads.append((node, self.scope, self.guard > 0))
        else:
            self.bind(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, ast.Name):
            self.scope.values[target.id] = node.value

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.globals_.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scope.nonlocals.update(node.names)

    def _arguments(self, args: ast.arguments, evaluated: bool) -> list[str]:
        """Visit what a signature evaluates where it is defined; its parameters."""
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.visit(default)
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        if evaluated and not self.future:
            for arg in every:
                if arg.annotation is not None:
                    self.visit(arg.annotation)
        return [a.arg for a in every]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        params = self._arguments(node.args, evaluated=True)
        if node.returns is not None and not self.future:
            self.visit(node.returns)
        self.bind(node.name)
        scope = self._enter(node, "function")
        scope.bound.update(params)
        self._within(scope, list(node.body))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        params = self._arguments(node.args, evaluated=False)
        scope = self._enter(node, "function")
        scope.bound.update(params)
        self._within(scope, [node.body])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for part in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(part)
        self.bind(node.name)
        self._within(self._enter(node, "class"), list(node.body))

    def _comprehension(self, node: ast.AST, elements: list[ast.expr]) -> None:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        self.visit(generators[0].iter)  # the first iterable runs in the enclosing scope
        scope = self._enter(node, "comprehension")
        parts: list[ast.AST] = []
        for index, gen in enumerate(generators):
            parts += [gen.target] if index == 0 else [gen.iter, gen.target]
            parts += gen.ifs
        self._within(scope, [*parts, *elements])

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_ListComp  # type: ignore[assignment]
    visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node, [node.key, node.value])

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent  # PEP 572: the target binds in the enclosing function
        if isinstance(node.target, ast.Name):
            self.bind(node.target.id, scope)

    def visit_Import(self, node: ast.Import) -> None:
        for name in statement_names(node):
            self.bind(name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for name in statement_names(node):
            self.bind(name)
        if any(a.name == "*" for a in node.names):
            names = self.star(node.module, node.level)
            if names is None:
                self.scope.open = True
                self.module.open = True
            else:
                self.scope.bound |= names

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        if self.scope.kind in ("module", "class") and not self.future:
            self.visit(node.annotation)  # (a function's local annotations never run)
        if node.value is not None:
            self.visit(node.value)

    def visit_Try(self, node: ast.Try) -> None:
        caught = any(catches(h.type, _NAME_ERRORS) for h in node.handlers)
        self.guard += caught
        for stmt in node.body:
            self.visit(stmt)
        self.guard -= caught
        for handler in node.handlers:
            self.visit(handler)
        for stmt in [*node.orelse, *node.finalbody]:
            self.visit(stmt)

    visit_TryStar = visit_Try

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.bind(node.name)
        for stmt in node.body:
            self.visit(stmt)

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        guarded = version_test(node.test)
        self.guard += guarded
        for stmt in [*node.body, *node.orelse]:
            self.visit(stmt)
        self.guard -= guarded

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.visit(node.test)
        guarded = version_test(node.test)
        self.guard += guarded
        self.visit(node.body)
        self.visit(node.orelse)
        self.guard -= guarded

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self.bind(node.name)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.generic_visit(node)
        if node.rest:
            self.bind(node.rest)


def _leaf(_: Binder, __: ast.AST) -> None:
    return None


#: node class -> the Binder method that visits it
_HANDLERS: dict[type, Callable[[Binder, ast.AST], None]] = {}


__all__ = ["BUILTINS", "Binder", "Scope", "Undefined"]
