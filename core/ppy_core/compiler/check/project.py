"""The project's own functions and classes across its modules: what a name in a module
is (a `def`, a `class`, or an import of one, followed to its module), classes' bases
and method orders, which classes subclass which. Only what is bound once, by a `def`
or a `class` with decorators that keep its signature, is ever resolved: a name bound
twice, by an assignment or under an unknown decorator stays unknown."""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from dataclasses import dataclass

from ppy_core.compiler.check.bindings import statement_names, top_statements
from ppy_core.compiler.check.finder import resolve_relative
from ppy_core.compiler.check.imports import ModuleFile
from ppy_core.compiler.check.names import Binder
from ppy_core.compiler.check.tuples import (
    NAMEDTUPLE,
    TYPING_NAMEDTUPLE,
    call_fields,
    class_fields,
    synthesized,
)

#: decorators that leave a function's signature as written
TRANSPARENT = frozenset(
    {"staticmethod", "classmethod", "abstractmethod", "abc.abstractmethod", "cache",
     "functools.cache", "lru_cache", "functools.lru_cache", "wraps", "functools.wraps",
     "final", "typing.final", "override", "typing.override", "typing_extensions.override"}
)  # fmt: skip
#: builtin bases a class may have and still be fully known: their `__init__` takes
#: any arguments (an exception's), or none (object's)
EXCEPTIONS = frozenset(
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
)

Key = tuple[str, ast.ClassDef]  # (module, class)
_SKIPPED = object()  # a base that adds nothing to read: `object`, an exception


@dataclass(frozen=True, slots=True)
class Import:
    module: str  # absolute name of the module imported from (or imported)
    name: str | None  # the name imported from it; None for `import module`


def decorator_name(node: ast.expr) -> str:
    return ast.unparse(node.func if isinstance(node, ast.Call) else node)


def transparent(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    return all(decorator_name(d) in TRANSPARENT for d in node.decorator_list)


def unique_bindings(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """Names one statement binds (and nothing else), to that statement."""
    counts: Counter[str] = Counter()
    first: dict[str, ast.stmt] = {}
    for stmt in top_statements(body):
        for name in statement_names(stmt):
            counts[name] += 1
            first.setdefault(name, stmt)
    return {n: first[n] for n, c in counts.items() if c == 1}


class Project:
    """The checked files, by module name."""

    def __init__(self, files: dict[str, ModuleFile], binders: dict[str, Binder]) -> None:
        self.files = files
        self.binders = binders
        self._defs: dict[str, dict[str, ast.stmt]] = {}
        self._mro: dict[int, list[Key] | None] = {}
        self.exception_based: set[int] = set()
        self.subclasses: dict[int, list[Key]] = {}
        self.memo: dict[int, object] = {}  # the checks' own per-node answers
        self.names_memo: dict[tuple[str, int], set[str] | None] = {}  # per class
        #: id(statement or base) -> the class a named tuple's spelling there makes
        self._tuples: dict[int, ast.ClassDef | None] = {}
        #: ids of those classes (their instances' attributes are a tuple's: unjudged)
        self.namedtuples: set[int] = set()
        for module, file in files.items():
            for stmt in file.tree.body:
                if isinstance(stmt, ast.ClassDef):
                    for base in self.bases(module, stmt) or []:
                        self.subclasses.setdefault(id(base[1]), []).append((module, stmt))

    def defs(self, module: str) -> dict[str, ast.stmt]:
        if module not in self._defs:
            file = self.files[module]
            found = unique_bindings(file.tree.body)
            for node in file.nodes:  # `global X` in a function rebinds X
                if isinstance(node, ast.Global):
                    for name in node.names:
                        found.pop(name, None)
            self._defs[module] = found
        return self._defs[module]

    def _import(self, module: str, name: str, stmt: ast.stmt) -> Import | None:
        file = self.files[module]
        if isinstance(stmt, ast.ImportFrom):
            target = resolve_relative(module, file.package, stmt.module, stmt.level)
            for alias in stmt.names:
                if (alias.asname or alias.name) == name and target:
                    return Import(target, alias.name)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname == name:
                    return Import(alias.name, None)
                if alias.asname is None and alias.name == name:
                    return Import(name, None)
        return None

    def resolve(self, module: str, name: str, depth: int = 0) -> tuple[str, ast.stmt] | None:
        """The `def` or `class` that `name` in `module` is, followed through imports."""
        if module not in self.files or depth > 8:
            return None
        stmt = self.defs(module).get(name)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return module, stmt
        if stmt is None:
            return None
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            made = self.namedtuple(module, stmt.value, stmt)
            return (module, made) if made is not None else None
        found = self._import(module, name, stmt)
        if found is None or found.name is None:
            return None
        if f"{found.module}.{found.name}" in self.files:
            return None  # a submodule, not a function
        return self.resolve(found.module, found.name, depth + 1)

    def origin(self, module: str, node: ast.expr) -> str | None:
        """The dotted name a module-level `name` or `name.attr` is imported as
        (`from collections import namedtuple` makes `namedtuple` "collections.namedtuple")."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            head = self.origin(module, node.value)
            return f"{head}.{node.attr}" if head else None
        if not isinstance(node, ast.Name) or module not in self.files:
            return None
        stmt = self.defs(module).get(node.id)
        found = self._import(module, node.id, stmt) if stmt is not None else None
        if found is None:
            return None
        return found.module if found.name is None else f"{found.module}.{found.name}"

    def namedtuple(self, module: str, call: ast.Call, at: ast.AST) -> ast.ClassDef | None:
        """The class a functional named tuple `call` makes; None if `call` is not one
        or what it makes is not known (`tuples.call_fields`)."""
        if id(at) not in self._tuples:
            origin = self.origin(module, call.func)
            made = None
            if origin == NAMEDTUPLE or origin in TYPING_NAMEDTUPLE:
                found = call_fields(call, origin)
                made = synthesized(found[0], found[1], found[2], at) if found else None
            self._keep(at, made)
        return self._tuples[id(at)]

    def _keep(self, at: ast.AST, made: ast.ClassDef | None) -> None:
        self._tuples[id(at)] = made
        if made is not None:
            self.namedtuples.add(id(made))

    def _tuple_base(self, module: str, cls: ast.ClassDef, base: ast.expr) -> ast.ClassDef | None:
        """The members `class P(NamedTuple)` gets from its fields, as a base of its own;
        None when `base` is not `NamedTuple` or the fields are not known."""
        if self.origin(module, base) not in TYPING_NAMEDTUPLE:
            return None
        if id(base) not in self._tuples:
            found = class_fields(cls)
            self._keep(base, synthesized(cls.name, *found, base) if found else None)
        return self._tuples[id(base)]

    def module_of(self, module: str, name: str) -> str | None:
        """The project module a module-level `name` is bound to by an import."""
        stmt = self.defs(module).get(name) if module in self.files else None
        found = self._import(module, name, stmt) if stmt is not None else None
        if found is None:
            return None
        dotted = found.module if found.name is None else f"{found.module}.{found.name}"
        return dotted if dotted in self.files else None

    def expr(
        self, module: str, node: ast.expr, scope: object = None
    ) -> tuple[str, ast.stmt] | None:
        """What a callee or base expression is: `name` (a module-level name, not
        shadowed where it is read) or `module.name`."""
        binder = self.binders[module]
        if isinstance(node, ast.Name):
            if scope is not None and binder.lookup(node.id, scope) is not binder.module:  # type: ignore[arg-type]
                return None
            return self.resolve(module, node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if scope is not None and binder.lookup(node.value.id, scope) is not binder.module:  # type: ignore[arg-type]
                return None
            owner = self.module_of(module, node.value.id)
            return self.resolve(owner, node.attr) if owner else None
        return None

    def bases(self, module: str, cls: ast.ClassDef) -> list[Key] | None:
        """The class's project bases; None when one is not known (or a metaclass is
        given, which may change what a call of the class does)."""
        if cls.keywords:
            return None
        found: list[Key] = []
        for base in cls.bases:
            known = self._base(module, cls, base)
            if known is None:
                return None
            if known is not _SKIPPED:
                found.append(known)  # type: ignore[arg-type]
        return found

    def unknown_base(self, module: str, cls: ast.ClassDef) -> ast.expr | None:
        """The first base (or class keyword) that makes the class's bases unknown."""
        if cls.keywords:
            return cls.keywords[0].value
        return next((b for b in cls.bases if self._base(module, cls, b) is None), None)

    def _base(self, module: str, cls: ast.ClassDef, base: ast.expr) -> Key | object | None:
        """A base as a project class, _SKIPPED for `object` or an exception, None when
        it is not known."""
        made = (
            self.namedtuple(module, base, base)
            if isinstance(base, ast.Call)
            else self._tuple_base(module, cls, base)
        )
        if made is not None:  # `class P(NamedTuple)`, `class P(namedtuple(...))`
            return module, made
        if isinstance(base, ast.Name) and base.id not in self.defs(module):
            if base.id == "object":
                return _SKIPPED
            if base.id in EXCEPTIONS:
                self.exception_based.add(id(cls))
                return _SKIPPED
        target = self.expr(module, base)
        if target is None or not isinstance(target[1], ast.ClassDef):
            return None
        return target[0], target[1]

    def mro(self, module: str, cls: ast.ClassDef) -> list[Key] | None:
        """The class's method order over project classes (C3); None where a base is
        not known."""
        key = id(cls)
        if key in self._mro:
            return self._mro[key]
        self._mro[key] = None  # (a cycle stays unknown)
        bases = self.bases(module, cls)
        result: list[Key] | None = None
        if bases is not None:
            lines = [self.mro(*b) for b in bases]
            if all(line is not None for line in lines):
                result = _c3([(module, cls)], [list(x) for x in lines if x] + [list(bases)])
        if result is not None and any(id(k[1]) in self.exception_based for k in result):
            self.exception_based.add(key)
        self._mro[key] = result
        return result

    def member(self, mro: list[Key], name: str) -> tuple[str, ast.ClassDef, ast.stmt] | None:
        """The first class in `mro` whose body binds `name`, once, and how."""
        for module, cls in mro:
            bound = unique_bindings(cls.body)
            if name in bound:
                return module, cls, bound[name]
            if any(name in statement_names(s) for s in top_statements(cls.body)):
                return module, cls, cls  # bound more than once: the class itself says so
        return None

    def overridden(self, cls: ast.ClassDef, name: str) -> bool:
        """Whether a project subclass of `cls` binds `name` itself."""
        stack = list(self.subclasses.get(id(cls), []))
        seen: set[int] = set()
        while stack:
            _, sub = stack.pop()
            if id(sub) in seen:
                continue
            seen.add(id(sub))
            if any(name in statement_names(s) for s in top_statements(sub.body)):
                return True
            stack += self.subclasses.get(id(sub), [])
        return False


def _c3(head: list[Key], sequences: list[list[Key]]) -> list[Key] | None:
    result = list(head)
    sequences = [s for s in sequences if s]
    while sequences:
        for seq in sequences:
            candidate = seq[0]
            if not any(candidate in s[1:] for s in sequences):
                break
        else:
            return None  # no consistent order: Python refuses the class
        result.append(candidate)
        sequences = [[k for k in s if k != candidate] for s in sequences]
        sequences = [s for s in sequences if s]
    return result


__all__ = ["EXCEPTIONS", "TRANSPARENT", "Project", "decorator_name", "transparent"]
