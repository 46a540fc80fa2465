"""Calls of the project's functions, classes and bound methods whose arguments do not
bind (E1024): too many positional arguments, a keyword nothing accepts, a required
argument left out — each a TypeError when the line runs.

A class's call binds to its `__init__` (and `__new__`) found along its method order,
a dataclass's to the fields it declares, a NamedTuple's to its fields, a class with
neither to no arguments. What could behave otherwise stays unchecked: an unknown
decorator or base, a metaclass, a method a subclass overrides, an attribute written
anywhere in the project under the method's name."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ppy_core.compiler.check.imports import Finding
from ppy_core.compiler.check.names import Binder, Scope
from ppy_core.compiler.check.project import Project, decorator_name, transparent
from ppy_core.compiler.check.signatures_py import misfit

_DATACLASS = frozenset({"dataclass", "dataclasses.dataclass"})
Function = ast.FunctionDef | ast.AsyncFunctionDef
#: what `object.__init__` says given more than the instance, from a class that has its
#: own `__init__` (Python's `object_init`)
_OBJECT_INIT = "object.__init__() takes exactly one argument (the instance to initialize)"


def call_findings(project: Project, module: str, written: frozenset[str]) -> Iterator[Finding]:
    binder = project.binders[module]
    scopes = _scopes(binder)
    for node in project.files[module].nodes:
        if not isinstance(node, ast.Call):
            continue
        scope = scopes.get(id(node.func))
        if scope is None:
            continue
        why = _why(project, module, node, scope, written)
        if why is not None:
            yield Finding(node, "E1024", why, "pass what the definition takes (see its signature)")


def _scopes(binder: Binder) -> dict[int, Scope]:
    """id(callee expression) -> the scope it is read in (from its root name)."""
    found: dict[int, Scope] = {}
    for name, scope, _ in binder.loads:
        found[id(name)] = scope
        parent = getattr(name, "_ppy_parent", None)
        if isinstance(parent, ast.Attribute) and parent.value is name:
            found[id(parent)] = scope
        elif isinstance(parent, ast.Call) and parent.func is name:  # `super().name`
            above = getattr(parent, "_ppy_parent", None)
            if isinstance(above, ast.Attribute) and above.value is parent:
                found[id(above)] = scope
    return found


def _why(
    project: Project, module: str, call: ast.Call, scope: Scope, written: frozenset[str]
) -> str | None:
    func = call.func
    target = project.expr(module, func, scope)
    if target is not None:
        where, node = target
        if isinstance(node, Function):
            return misfit(node.args, call, 0, node.name) if transparent(node) else None
        if isinstance(node, ast.ClassDef):
            return _construct(project, where, node, call)
        return None
    if isinstance(func, ast.Attribute) and func.attr not in written:
        if isinstance(func.value, ast.Call):  # `super().__init__(...)`
            return _super_call(project, module, func.value, func.attr, call, scope)
        owner = project.expr(module, func.value, scope) if func.attr != "__new__" else None
        if owner is not None and isinstance(owner[1], ast.ClassDef):  # `Base.__init__(self)`
            return _class_call(project, (owner[0], owner[1]), func.attr, call, scope)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if func.attr in written or func.attr.startswith("__"):
            return None
        owner = _self_class(project, module, func.value.id, scope)
        exact = False
        if owner is None:
            owner, exact = _instance_class(project, module, func.value.id, scope), True
        if owner is None:
            return None
        return _method(project, owner, func.attr, call, exact)
    return None


def _method(
    project: Project, owner: tuple[str, ast.ClassDef], name: str, call: ast.Call, exact: bool
) -> str | None:
    mro = project.mro(*owner)
    if mro is None or project.member(mro, "__getattribute__") is not None:
        return None
    found = project.member(mro, name)
    if found is None or not isinstance(found[2], Function):
        return None
    if not exact and project.overridden(owner[1], name):
        return None  # `self` may be a subclass's instance, with another signature
    function = found[2]
    if not transparent(function):
        return None
    kinds = {decorator_name(d) for d in function.decorator_list}
    skip = 0 if "staticmethod" in kinds else 1
    return misfit(function.args, call, skip, f"{found[1].name}.{name}")


def _known_classes(mro: list[tuple[str, ast.ClassDef]]) -> bool:
    """Whether no class in `mro` has a decorator that may replace it (a dataclass's
    generated `__init__` is not read here either)."""
    return all(not c.decorator_list for _, c in mro)


def _class_call(
    project: Project, owner: tuple[str, ast.ClassDef], name: str, call: ast.Call, scope: Scope
) -> str | None:
    """`Cls.name(...)` on a project class: a classmethod binds the class, a
    staticmethod nothing, a plain function nothing (the instance is passed: `Base.
    __init__(self, ...)`); `__init__` found nowhere is object's, which takes the
    instance only, when the call is in an `__init__` (so `self`'s class has its own)."""
    mro = project.mro(*owner)
    if mro is None or not _known_classes(mro):
        return None
    found = project.member(mro, name)
    if found is None:
        if name != "__init__" or any(id(c) in project.exception_based for _, c in mro):
            return None
        if _method_of(scope) != "__init__" or len(call.args) + len(call.keywords) <= 1:
            return None
        return None if _splatted(call) else _OBJECT_INIT
    function = found[2]
    if not isinstance(function, Function) or not transparent(function):
        return None
    kinds = {decorator_name(d) for d in function.decorator_list}
    skip = 1 if "classmethod" in kinds else 0
    return misfit(function.args, call, skip, f"{found[1].name}.{name}")


def _super_call(
    project: Project, module: str, sup: ast.Call, name: str, call: ast.Call, scope: Scope
) -> str | None:
    """`super().name(...)` (or `super(Cls, self)`) in a plain method of a module-level
    class: bound to the class after it in the method order of every class `self` may
    be (the class and its subclasses), checked only where they all agree on one."""
    if not (isinstance(sup.func, ast.Name) and sup.func.id == "super"):
        return None
    found = _method_scope(scope)
    binder = project.binders[module]
    if found is None or binder.lookup("super", scope) is not binder.module:
        return None  # (not in a method, or `super` rebound)
    method, cls = found
    params = [*method.args.posonlyargs, *method.args.args]
    if sup.keywords or not params:
        return None
    if sup.args and not (
        len(sup.args) == 2
        and isinstance(sup.args[0], ast.Name)
        and sup.args[0].id == cls.name
        and isinstance(sup.args[1], ast.Name)
        and sup.args[1].id == params[0].arg
    ):
        return None  # `super(Other, obj)`: not followed
    if cls not in project.files[module].tree.body:
        return None
    owner = (module, cls)
    lines = [project.mro(*owner)]
    stack = list(project.subclasses.get(id(cls), []))
    seen: set[int] = set()
    while stack:
        where, sub = stack.pop()
        if id(sub) not in seen:
            seen.add(id(sub))
            lines.append(project.mro(where, sub))
            stack += project.subclasses.get(id(sub), [])
    targets = set()
    for line in lines:
        if line is None or not _known_classes(line) or owner not in line:
            return None
        rest = line[line.index(owner) + 1 :]
        hit = project.member(rest, name) if rest else None
        targets.add(id(hit[2]) if hit else None)
        if hit is None and any(id(c) in project.exception_based for _, c in line):
            return None  # BaseException's own methods, after the project's classes
    if len(targets) != 1:
        return None  # a diamond: the next class depends on the instance
    rest = lines[0][lines[0].index(owner) + 1 :]  # type: ignore[union-attr]
    hit = project.member(rest, name) if rest else None
    if hit is None:
        if name != "__init__" or method.name != "__init__":
            return None
        if not (call.args or call.keywords) or _splatted(call):
            return None
        return _OBJECT_INIT
    function = hit[2]
    if not isinstance(function, Function) or not transparent(function):
        return None
    kinds = {decorator_name(d) for d in function.decorator_list}
    skip = 0 if "staticmethod" in kinds else 1
    return misfit(function.args, call, skip, f"{hit[1].name}.{name}")


def _splatted(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _method_scope(scope: Scope) -> tuple[Function, ast.ClassDef] | None:
    """The plain method (no decorator) whose own body `scope` is, and its class."""
    if scope.kind != "function" or scope.parent is None or scope.parent.kind != "class":
        return None
    node, cls = scope.node, scope.parent.node
    if not isinstance(node, Function) or node.decorator_list or not isinstance(cls, ast.ClassDef):
        return None
    return node, cls


def _method_of(scope: Scope) -> str | None:
    found = _method_scope(scope)
    return found[0].name if found else None


def _self_class(
    project: Project, module: str, name: str, scope: Scope
) -> tuple[str, ast.ClassDef] | None:
    """The class whose method reads `name` as its `self` (its first parameter, never
    rebound), where that method is a plain one of a module-level class."""
    s: Scope | None = scope
    while s is not None and s.kind in ("function", "comprehension"):
        node = s.node
        if isinstance(node, Function) and s.parent is not None and s.parent.kind == "class":
            cls = s.parent.node
            params = [*node.args.posonlyargs, *node.args.args]
            kinds = {decorator_name(d) for d in node.decorator_list}
            if (
                not params
                or params[0].arg != name
                or kinds & {"staticmethod", "classmethod"}
                or cls not in project.files[module].tree.body
                or name in s.stores
            ):
                return None
            return module, cls  # type: ignore[return-value]
        if name in s.bound:
            return None  # a nearer scope binds the name itself
        s = s.parent
    return None


def _instance_class(
    project: Project, module: str, name: str, scope: Scope
) -> tuple[str, ast.ClassDef] | None:
    """The class `name` is an instance of where its scope binds it once, to a call of
    a project class: `x = Parser(...)`."""
    binder = project.binders[module]
    home = binder.lookup(name, scope)
    if home is None or home.kind not in ("function", "module") or name in home.globals_:
        return None
    node = home.node
    if isinstance(node, Function):
        args = node.args
        if name in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
            return None
    elif not isinstance(node, ast.Module) or name not in project.defs(module):
        return None  # (`defs`: the module's names bound once, no `global` rebinding them)
    value = home.values.get(name)
    if home.stores.get(name) != 1 or not isinstance(value, ast.Call):
        return None
    target = project.expr(module, value.func, home)
    if target is None or not isinstance(target[1], ast.ClassDef):
        return None
    if _construct(project, target[0], target[1], value, probe=True) is not None:
        return None  # a class whose construction is not known: no instance either
    return target[0], target[1]


def _construct(
    project: Project, module: str, cls: ast.ClassDef, call: ast.Call, probe: bool = False
) -> str | None:
    """Why calling `cls` with `call`'s arguments raises; None when it does not or
    cannot be told. `probe`: only whether the class's construction is known (a
    non-None answer means unknown)."""
    unknown = "unknown" if probe else None
    mro = project.mro(module, cls)
    if mro is None:
        return unknown
    for _, c in mro:
        if any(decorator_name(d) not in _DATACLASS for d in c.decorator_list):
            return unknown  # an unknown class decorator may replace the class
    init = project.member(mro, "__init__")
    new = project.member(mro, "__new__")
    marked = [c for _, c in mro if any(decorator_name(d) in _DATACLASS for d in c.decorator_list)]
    if marked and marked[0] is not cls:
        return unknown  # a dataclass base's generated `__init__`: not modelled
    dataclass = _dataclass_fields(project, mro) if init is None or init[1] is not cls else None
    generated = not (len(marked) == 1 and _no_init(cls))  # `@dataclass(init=False)`
    if marked and generated and (init is None or init[1] is not cls) and dataclass is None:
        return unknown  # a generated `__init__` whose fields are not modelled
    if probe:
        return None
    for found in (new, init):
        if found is not None and not (isinstance(found[2], Function) and transparent(found[2])):
            return None
    if dataclass is not None and (init is None or mro.index((init[0], init[1])) > 0):
        return misfit(dataclass, call, 0, cls.name)
    if init is None and new is None:
        if id(cls) in project.exception_based:
            return None  # BaseException takes any arguments
        return misfit(ast.arguments([], [], None, [], [], None, []), call, 0, cls.name)
    for found in (new, init):
        if found is not None:
            why = misfit(found[2].args, call, 1, cls.name)  # type: ignore[union-attr]
            if why is not None:
                return why
    return None


def _no_init(cls: ast.ClassDef) -> bool:
    """Whether the class's dataclass decorator says `init=False` (no `__init__` made)."""
    return any(
        isinstance(d, ast.Call)
        and any(
            k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
            for k in d.keywords
        )
        for d in cls.decorator_list
    )


def _dataclass_fields(
    project: Project, mro: list[tuple[str, ast.ClassDef]]
) -> ast.arguments | None:
    """The `__init__` parameters the dataclasses in `mro` declare (bases first); None
    where the nearest class is not a dataclass or its options are not plain."""
    own = mro[0][1]
    if not any(decorator_name(d) in _DATACLASS for d in own.decorator_list):
        return None
    positional: list[ast.arg] = []
    defaults: list[ast.expr] = []
    kwonly: list[ast.arg] = []
    kw_defaults: list[ast.expr | None] = []
    fields: dict[str, int] = {}
    for _, cls in reversed(mro):
        marks = [d for d in cls.decorator_list if decorator_name(d) in _DATACLASS]
        if not marks:
            continue
        options = {k.arg: k.value for m in marks if isinstance(m, ast.Call) for k in m.keywords}
        if "init" in options:
            return None
        all_kw = isinstance(options.get("kw_only"), ast.Constant) and options["kw_only"].value
        after_marker = False
        for stmt in cls.body:
            if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
                continue
            text = ast.unparse(stmt.annotation)
            if "ClassVar" in text:
                continue
            if "KW_ONLY" in text:
                after_marker = True
                continue
            default, kw = _field(stmt.value)
            if default == "skip":
                continue  # `field(init=False)`
            if default is None:
                return None
            name = stmt.target.id
            if name in fields:
                return None  # a redeclared field keeps its place: not modelled
            fields[name] = 1
            arg = ast.arg(name)
            if all_kw or after_marker or kw:
                kwonly.append(arg)
                kw_defaults.append(ast.Constant(None) if default else None)
            else:
                if defaults and not default:
                    return None  # Python refuses the class itself
                positional.append(arg)
                if default:
                    defaults.append(ast.Constant(None))
    return ast.arguments([], positional, None, kwonly, kw_defaults, None, defaults)


def _field(value: ast.expr | None) -> tuple[bool | str | None, bool]:
    """Whether a field has a default ("skip" for `field(init=False)`, None when that
    is not known), and whether it is keyword-only."""
    if value is None:
        return False, False
    if isinstance(value, ast.Call) and decorator_name(value) in ("field", "dataclasses.field"):
        options = {k.arg: k.value for k in value.keywords}
        if any(k.arg is None for k in value.keywords) or value.args:
            return None, False
        init = options.get("init")
        if isinstance(init, ast.Constant) and init.value is False:
            return "skip", False
        kw = options.get("kw_only")
        default = "default" in options or "default_factory" in options
        return default, bool(isinstance(kw, ast.Constant) and kw.value)
    return True, False


__all__ = ["call_findings"]
