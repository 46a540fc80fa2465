"""Calls, members and iteration typed from stub signatures, as a type checker reads them.

A stub's annotation becomes a checker type under a substitution of its type variables:
the class's own (`list[_T]` with `_T = int`) and the function's, bound by matching each
argument's type against its parameter's annotation. Overloads are tried in order and
the first that fits answers, as the typing spec says; a call whose argument types are
not all known fits only when every overload agrees. Protocols (`Iterable[_T]`,
`SupportsIndex`) are matched by the members the argument's class has, nominal bases
(`list` is a `MutableSequence`) through their type arguments.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ppy_core.compiler.check import stdlib
from ppy_core.compiler.check.stubs import (
    Subst,
    alias_value,
    convert,
    definition,
    is_var,
    literal_type,
    type_params,
    typing_form,
)
from ppy_core.compiler.check.types import (
    ANY,
    FUNCTION,
    OBJECT,
    class_of,
    members,
    union,
)
from ppy_core.interface.plugin import NOT_CONSTANT
from ppy_core.ir.types import UNKNOWN, OpaqueType, TupleType, Type

_PROMOTED = {"builtins.int": ("builtins.float", "builtins.complex"), "builtins.bool": ()}
_TUPLE = "builtins.tuple"
_CALLABLE = (FUNCTION, OpaqueType("builtins.type"), OpaqueType("builtins.method"))


@dataclass(frozen=True, slots=True)
class Args:
    """A call's arguments as types, with their literal values where they are literals."""

    positional: tuple[Type, ...]
    keywords: Mapping[str, Type]
    constants: tuple[Any, ...] = ()
    kw_constants: Mapping[str, Any] | None = None

    def constant(self, index: int | str) -> Any:
        if isinstance(index, int):
            return self.constants[index] if index < len(self.constants) else NOT_CONSTANT
        return (self.kw_constants or {}).get(index, NOT_CONSTANT)


# -- classes ----------------------------------------------------------------------
def mro(qualname: str, args: Sequence[Type]) -> list[tuple[str, Any, Subst]]:
    """The stub classes `qualname[args]` is, itself first, each with its substitution."""
    out: list[tuple[str, Any, Subst]] = []
    queue: list[tuple[str, Sequence[Type]]] = [(qualname, args)]
    seen: set[str] = set()
    while queue:
        name, given = queue.pop(0)
        found = stdlib.class_info(name)
        if found is None or name in seen:
            continue
        seen.add(name)
        module, info = found
        params = type_params(info.ast, module)
        subst: Subst = {p: (given[i] if i < len(given) else UNKNOWN) for i, p in enumerate(params)}
        out.append((module, info, subst))
        for base in info.ast.bases:
            target = base.value if isinstance(base, ast.Subscript) else base
            if typing_form(module, target) in ("Generic", "Protocol"):
                continue
            converted = convert(base, module, subst)
            ref = class_of(converted) if converted not in (UNKNOWN, ANY) else None
            if ref is not None:
                queue.append(ref)
    return out


def is_protocol(qualname: str) -> bool:
    found = stdlib.class_info(qualname)
    if found is None:
        return False
    module, info = found
    return any(
        typing_form(module, b.value if isinstance(b, ast.Subscript) else b) == "Protocol"
        for b in info.ast.bases
    )


def find_member(t: Type, name: str) -> tuple[str, Any, Subst] | None:
    """The stub node of member `name` of `t`'s class, with its module and substitution."""
    ref = class_of(t)
    if ref is None:
        return None
    for module, info, subst in mro(*ref):
        children = info.child_nodes or {}
        if name in children:
            return module, children[name].ast, {**subst, "Self": t}
    return None


def view_as(t: Type, target: str) -> tuple[Type, ...] | None:
    """`t`'s type arguments as an instance of class `target` (`list[int]` as
    `typing.Iterable` is `(int,)`), None when it is not one."""
    ref = class_of(t)
    if ref is None:
        return None
    if ref[0] == target:
        return ref[1]
    if target in _PROMOTED.get(ref[0], ()):
        return ()
    for module, info, subst in mro(*ref):
        if (
            f"{module}.{info.ast.name}" == target
            or stdlib.canonical(f"{module}.{info.ast.name}") == target
        ):
            return tuple(subst.values())
    if is_protocol(target):
        return _structural(t, target)
    return None


def _structural(t: Type, protocol: str) -> tuple[Type, ...] | None:
    found = stdlib.class_info(protocol)
    if found is None:
        return None
    module, info = found
    needed = [n for n in (info.child_nodes or {}) if not n.startswith("__slots__")]
    if any(find_member(t, n) is None for n in needed):
        return None
    params = type_params(info.ast, module)
    if len(params) == 1 and "__iter__" in needed:
        return (iterate(t),)
    mapping = view_as(t, "typing.Mapping") if len(params) == 2 else None
    if mapping is not None and len(mapping) == 2:  # `SupportsKeysAndGetItem[K, V]`
        return mapping
    return tuple(_returned(t, info, p) for p in params)


def _returned(t: Type, protocol: Any, param: str) -> Type:
    """A protocol's type parameter read off `t`: what `t`'s method returns where the
    protocol's returns the bare parameter (`SupportsNext[_T]`: `__next__() -> _T`)."""
    for member, child in (protocol.child_nodes or {}).items():
        for function in stdlib.functions(child.ast):
            returns = function.returns
            if isinstance(returns, ast.Name) and returns.id == param:
                count = len([*function.args.posonlyargs, *function.args.args]) - 1
                found = method(t, member, Args(tuple(UNKNOWN for _ in range(count)), {}))
                if found is not None:
                    return found
    return UNKNOWN


# -- calls ------------------------------------------------------------------------------
def resolve(
    functions: Sequence[ast.FunctionDef], module: str, subst: Subst, args: Args, *, bound: bool
) -> Type | None:
    """What the first overload that fits returns (None: none fits). `bound`: a method
    called on an instance, so its first parameter is the receiver."""
    if not functions:
        return None
    unknown = UNKNOWN in args.positional or UNKNOWN in args.keywords.values()
    # an Any argument fits overloads it may not be of (`d.get(k, record["id"])` fits
    # `get(k, None)`): the first that fits answers only if every other that fits agrees
    vague = ANY in args.positional or ANY in args.keywords.values()
    answers = []
    for function in functions:
        bindings = fit(function, module, subst, args, bound=bound)
        if bindings is None:
            continue
        answer = convert(function.returns, module, {**subst, **bindings})
        if not unknown and not vague:
            return answer
        answers.append(answer)
    if vague and not unknown and answers:
        return answers[0] if all(a == answers[0] for a in answers) else ANY
    if unknown:
        every = {convert(f.returns, module, subst) for f in functions}
        return every.pop() if len(every) == 1 else UNKNOWN
    return _each_member(functions, module, subst, args, bound=bound)


def _each_member(
    functions: Sequence[ast.FunctionDef], module: str, subst: Subst, args: Args, *, bound: bool
) -> Type | None:
    """A union argument no one overload takes (`ast.parse(bytes | str)`, where paths
    met): each of its members resolved on its own, their answers' union."""
    for i, given in enumerate(args.positional):
        if len(members(given)) > 1:
            answers = []
            for member in members(given):
                positional = (*args.positional[:i], member, *args.positional[i + 1 :])
                one = Args(positional, args.keywords, args.constants, args.kw_constants)
                answers.append(resolve(functions, module, subst, one, bound=bound))
            if any(a is None for a in answers):
                return None
            return union(a for a in answers if a is not None)
    return None


def fit(
    function: ast.FunctionDef, module: str, subst: Subst, args: Args, *, bound: bool
) -> Subst | None:
    spec = function.args
    ordered = [*spec.posonlyargs, *spec.args]
    if bound and ordered:
        ordered = ordered[1:]
    defaults = [None] * (len([*spec.posonlyargs, *spec.args]) - len(spec.defaults))
    defaults += list(spec.defaults)
    defaults = defaults[len(defaults) - len(ordered) :]
    bindings: Subst = {}
    positional_only = {a.arg for a in spec.posonlyargs} | {
        a.arg for a in ordered if a.arg.startswith("__") and not a.arg.endswith("__")
    }
    filled: set[str] = set()
    for i, given in enumerate(args.positional):
        if i < len(ordered):
            param = ordered[i]
        elif spec.vararg is not None:
            param = spec.vararg
        else:
            return None
        if not _match(param.annotation, module, given, args.constant(i), subst, bindings):
            return None
        filled.add(param.arg)
    named = {a.arg: a for a in [*ordered, *spec.kwonlyargs] if a.arg not in positional_only}
    for key, given in args.keywords.items():
        param = named.get(key) or spec.kwarg
        if param is None or key in filled:
            return None
        if not _match(param.annotation, module, given, args.constant(key), subst, bindings):
            return None
        filled.add(key)
    for param, default in zip(ordered, defaults, strict=True):
        if param.arg not in filled and default is None:
            return None
    for param, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
        if param.arg not in filled and default is None:
            return None
    return bindings


def _match(
    node: ast.expr | None, module: str, given: Type, constant: Any, subst: Subst, bindings: Subst
) -> bool:
    """Whether a value of type `given` fits annotation `node`, binding type variables."""
    if node is None or given is UNKNOWN:
        return True
    if isinstance(node, ast.Name) and node.id not in subst and is_var(module, node.id):
        old = bindings.get(node.id)  # (Any binds a variable too: `enumerate(Any-tuple)`)
        bindings[node.id] = given if old is None else union([old, given])
        return True
    if given == ANY:
        return True
    if len(members(given)) > 1 and not (
        isinstance(node, ast.Name) and node.id not in subst and is_var(module, node.id)
    ):  # a union fits where each of its members does
        return all(_match(node, module, m, constant, subst, bindings) for m in members(given))
    if isinstance(node, ast.Name) and node.id not in subst and is_var(module, node.id):
        old = bindings.get(node.id)
        bindings[node.id] = given if old is None else union([old, given])
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        options = [node.left, node.right]
        return any(_match(o, module, given, constant, subst, bindings) for o in options)
    if isinstance(node, ast.Subscript):
        return _match_subscript(node, module, given, constant, subst, bindings)
    special = typing_form(module, node)
    if special in ("Any", "Incomplete"):
        return True
    if isinstance(node, ast.Name) and node.id not in subst:
        found = definition(module, node.id)
        alias = alias_value(found[1].ast) if found is not None else None
        if special is not None and not (found and alias and _literals(alias, found[0])):
            alias = None  # (but `_typeshed`'s modes are literals: `open(p, "rb")` is binary)
        if alias is not None and found is not None:  # `_ActionType = Callable[...] | str`
            return _match(alias, found[0], given, constant, subst, bindings)
    if isinstance(node, ast.Name) and node.id in subst:
        expected = subst[node.id]
        return expected is UNKNOWN or expected == ANY or accepts(expected, given)
    expected = convert(node, module, subst)
    if expected is UNKNOWN:
        return True  # a construct this reader does not model: no evidence against
    return accepts(expected, given)


def _literals(node: ast.expr, module: str, depth: int = 0) -> bool:
    """Whether a stub alias is literals only (`OpenTextMode`: unions of `Literal[...]`)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _literals(node.left, module, depth) and _literals(node.right, module, depth)
    if isinstance(node, ast.Subscript):
        return typing_form(module, node.value) == "Literal"
    if isinstance(node, ast.Name) and depth < 4:
        found = definition(module, node.id)
        alias = alias_value(found[1].ast) if found is not None else None
        return alias is not None and found is not None and _literals(alias, found[0], depth + 1)
    return False


def _match_subscript(
    node: ast.Subscript, module: str, given: Type, constant: Any, subst: Subst, bindings: Subst
) -> bool:
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    special = typing_form(module, node.value)
    if special == "Literal":
        if constant is not NOT_CONSTANT:
            return any(isinstance(i, ast.Constant) and i.value == constant for i in items)
        return any(accepts(literal_type(i), given) for i in items)
    if special in ("Optional", "Union"):
        options = [*items, ast.Constant(None)] if special == "Optional" else items
        return any(_match(o, module, given, constant, subst, bindings) for o in options)
    if special == "Callable" or special == "Type":
        return given in _CALLABLE
    target = convert(node.value, module, subst)
    if not isinstance(target, OpaqueType) or target == ANY:
        return True
    if (
        target.name == _TUPLE
        and isinstance(given, TupleType)
        and not (len(items) == 2 and isinstance(items[1], ast.Constant))
    ):
        return len(items) == len(given.elements) and all(
            _match(i, module, g, NOT_CONSTANT, subst, bindings)
            for i, g in zip(items, given.elements, strict=True)
        )
    viewed = view_as(given, target.name)
    if viewed is None:
        return False
    return all(
        _match(i, module, v, NOT_CONSTANT, subst, bindings)
        for i, v in zip(items, viewed, strict=False)
    )


def accepts(expected: Type, given: Type) -> bool:
    """Whether a value of type `given` may be used where `expected` is declared."""
    if UNKNOWN in (expected, given) or ANY in (expected, given) or expected == OBJECT:
        return True
    if len(members(given)) > 1:
        return all(accepts(expected, g) for g in members(given))
    if len(members(expected)) > 1:
        return any(accepts(e, given) for e in members(expected))
    if expected == FUNCTION:
        return _callable(given)
    ref = class_of(expected)
    if ref is None:
        return expected == given
    return view_as(given, ref[0]) is not None


def _callable(t: Type) -> bool:
    """Whether a value of type `t` may be called: a function, a class, or an instance
    of a class with `__call__` (`types.FunctionType`, `functools.partial`); an object of
    a class the stubs do not hold may be (nothing says otherwise)."""
    if t in _CALLABLE:
        return True
    ref = class_of(t)
    if ref is None or isinstance(t, TupleType):
        return False  # (an array, a scalar, None, a tuple)
    return stdlib.class_info(ref[0]) is None or find_member(t, "__call__") is not None


def iterate(t: Type) -> Type:
    """The type of the elements iterating over `t` yields (Unknown if not iterable)."""
    if isinstance(t, TupleType):
        return union(t.elements) if t.elements else UNKNOWN
    if t == ANY:
        return ANY
    if len(members(t)) > 1:
        return union([iterate(m) for m in members(t)])
    iterator = method(t, "__iter__", Args((), {}))
    if iterator is None or iterator is UNKNOWN:
        return UNKNOWN
    item = method(iterator, "__next__", Args((), {}))
    return item if item is not None else UNKNOWN


def method(receiver: Type, name: str, args: Args) -> Type | None:
    """What calling `receiver.name(args)` returns; None when the class has no such
    member or no overload fits."""
    found = find_member(receiver, name)
    if found is None:
        return None
    module, node, subst = found
    functions = stdlib.functions(node)
    if not functions:
        return None
    static = any(_decorated(f, "staticmethod") for f in functions)
    return resolve(functions, module, subst, args, bound=not static)


def member_type(receiver: Type, name: str) -> Type | None:
    """The type of `receiver.name` as a value: an attribute, a property, a method."""
    found = find_member(receiver, name)
    if found is None:
        dynamic = find_member(receiver, "__getattr__")  # `argparse.Namespace`
        if dynamic is None or name.startswith("__"):
            return None
        module, node, subst = dynamic
        functions = stdlib.functions(node)
        return convert(functions[0].returns, module, subst) if functions else None
    module, node, subst = found
    functions = stdlib.functions(node)
    if functions:
        if any(_decorated(f, "property") or _decorated(f, "getter") for f in functions):
            return convert(functions[0].returns, module, subst)
        return OpaqueType("builtins.method")
    if isinstance(node, ast.AnnAssign):
        return convert(node.annotation, module, subst)
    return UNKNOWN


def _decorated(function: ast.FunctionDef, name: str) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id == name)
        or (isinstance(d, ast.Attribute) and d.attr == name)
        for d in function.decorator_list
    )


__all__ = [
    "Args",
    "accepts",
    "find_member",
    "fit",
    "iterate",
    "member_type",
    "method",
    "mro",
    "resolve",
    "view_as",
]
