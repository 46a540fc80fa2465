"""The types a checker needs beyond the IR's: a class with its type arguments
(`list[int]`, `dict[str, float]`) and `Any` where a stub says so. They exist only in
`ppy check`; the compiler never sees them. Each is an `OpaqueType` (its class's
qualified name), so a plugin asked about one sees an object it does not model, exactly
as before. Unions are the IR's `UnionType` (a plugin may answer one: a tensor's `.grad`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from ppy_core.ir.types import (
    F64,
    I1,
    I64,
    NONE,
    UNKNOWN,
    OpaqueType,
    RangeType,
    ScalarType,
    TupleType,
    Type,
    UnionType,
)


@dataclass(frozen=True, slots=True)
class Generic(OpaqueType):
    """An instance of class `name` with type arguments `args` (`builtins.list[i64]`)."""

    args: tuple[Type, ...] = ()

    def text(self) -> str:
        inner = ", ".join(a.text() for a in self.args)
        return f"!opaque<{json.dumps(f'{self.name}[{inner}]')}>"


#: what a stub declares dynamic (`getattr(...)`, `json.loads`): known to be anything.
#: It is not Unknown: typeshed, not a gap in the checker's knowledge, says so.
ANY: Final = OpaqueType("typing.Any")
STR: Final = OpaqueType("builtins.str")
BYTES: Final = OpaqueType("builtins.bytes")
FUNCTION: Final = OpaqueType("builtins.function")
OBJECT: Final = OpaqueType("builtins.object")
#: the IR's scalars and the classes they are instances of
SCALAR_CLASSES: Final[dict[Type, str]] = {
    F64: "builtins.float",
    I64: "builtins.int",
    I1: "builtins.bool",
    NONE: "types.NoneType",
}


def generic(name: str, args: Iterable[Type]) -> Type:
    """`name[args]`, or the bare class when no argument is known."""
    args = tuple(args)
    return Generic(name, args) if any(a is not UNKNOWN for a in args) else OpaqueType(name)


def class_of(t: Type) -> tuple[str, tuple[Type, ...]] | None:
    """The class `t` is an instance of, with its type arguments (None: not a class)."""
    if isinstance(t, Generic):
        return t.name, t.args
    if isinstance(t, RangeType):
        t = t.base
    if isinstance(t, TupleType):
        return "builtins.tuple", (union(t.elements) if t.elements else UNKNOWN,)
    if isinstance(t, OpaqueType):
        return (t.name, ()) if t != ANY else None
    if isinstance(t, ScalarType) and t in SCALAR_CLASSES:
        return SCALAR_CLASSES[t], ()
    if t == NONE:
        return SCALAR_CLASSES[NONE], ()
    return None


def is_union(t: Type) -> bool:
    return isinstance(t, UnionType)


def members(t: Type) -> tuple[Type, ...]:
    """The alternatives of a union, or `t` alone."""
    return t.members if isinstance(t, UnionType) else (t,)


def union(types: Iterable[Type]) -> Type:
    """One type for "any of `types`": Unknown if one is, Any if one is; an int where a
    float also may be is that float (PEP 484's numeric tower)."""
    flat: list[Type] = []
    for t in types:
        for m in members(t):
            m = m.base if isinstance(m, RangeType) else m
            if m not in flat:
                flat.append(m)
    if not flat or UNKNOWN in flat:
        return UNKNOWN
    if ANY in flat:
        return ANY
    generics = {m.name for m in flat if isinstance(m, Generic)}
    # `typed or {}`: an empty display (its class, no arguments) takes the typed one's
    flat = [m for m in flat if isinstance(m, Generic) or m not in map(OpaqueType, generics)]
    if F64 in flat:
        flat = [m for m in flat if m not in (I64, I1)]
    elif I64 in flat:
        flat = [m for m in flat if m != I1]
    return flat[0] if len(flat) == 1 else UnionType(tuple(flat))


def without_none(t: Type) -> Type:
    """`t` once it is known not to be None (`if x is not None`, `x or y`)."""
    kept = [m for m in members(t) if m != NONE]
    return union(kept) if kept else t


def same_class(found: Type, declared: Type) -> bool:
    """Whether `found` is an instance of the class `declared` names, arguments aside."""
    a, b = class_of(found), class_of(declared)
    return a is not None and b is not None and a[0] == b[0]


def name(t: Type) -> str:
    """`t` as a user writes it."""
    names = {F64: "float", I64: "int", I1: "bool", NONE: "None", UNKNOWN: "Unknown"}
    if t in names:
        return names[t]
    if is_union(t):
        return " | ".join(name(m) for m in members(t))
    if isinstance(t, Generic):
        return f"{name(OpaqueType(t.name))}[{', '.join(name(a) for a in t.args)}]"
    if isinstance(t, OpaqueType):
        return t.name.removeprefix("builtins.").removeprefix("typing.")
    if isinstance(t, TupleType):
        return f"tuple[{', '.join(name(e) for e in t.elements)}]"
    library = getattr(t, "library", None)
    element = getattr(t, "element", None)
    if element is not None:
        return f"{library or 'tensor'} array of {element.kind}"
    return t.text()


__all__ = [
    "ANY",
    "BYTES",
    "FUNCTION",
    "OBJECT",
    "Generic",
    "STR",
    "class_of",
    "generic",
    "is_union",
    "members",
    "name",
    "same_class",
    "union",
    "without_none",
]
