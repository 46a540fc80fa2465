"""When a value's type contradicts a declared one (a return, an annotated assignment):
arrays by library, dtype and known shape; scalars by Python's numeric tower; builtins
and standard-library classes through typeshed's class relations (`signatures.accepts`).
What no one knows, or a plugin's object the core cannot relate, never contradicts."""

from __future__ import annotations

import builtins
import types

from ppy_core.compiler.check import signatures
from ppy_core.compiler.check.types import ANY, class_of, members
from ppy_core.compiler.check.types import name as _name
from ppy_core.ir.types import (
    F64,
    I1,
    I64,
    NONE,
    UNKNOWN,
    OpaqueType,
    RangeType,
    ScalarType,
    TensorType,
    Type,
)

_SCALARS = (F64, I64, I1)
NOT_IMPLEMENTED = OpaqueType("types.NotImplementedType")
_MODULES = {"builtins": builtins, "types": types}


def contradicts(found: Type, declared: Type, *, dtype: bool = True) -> str | None:
    """Why a value of type `found` cannot be of `declared` (None: it can, or unknown);
    `dtype`: whether the annotation states an array's element type (`hints.names_dtype`)."""
    found = found.base if isinstance(found, RangeType) else found
    declared = declared.base if isinstance(declared, RangeType) else declared
    if UNKNOWN in (found, declared) or ANY in (found, declared):
        return None
    if found == NOT_IMPLEMENTED:
        return None  # a binary dunder's "not mine": Python tries the other operand
    if isinstance(declared, TensorType):
        if not isinstance(found, TensorType):
            return "not an array" if found not in (NONE,) else "None is not an array"
        if declared.library and found.library and declared.library != found.library:
            return f"a {found.library} array is not a {declared.library} array"
        if dtype and found.element != declared.element:
            return f"dtype {found.element.kind} is not {declared.element.kind}"
        if found.shape is not None and declared.shape is not None:
            if len(found.shape) != len(declared.shape):
                return f"shape has rank {len(found.shape)}, not {len(declared.shape)}"
            for a, b in zip(found.shape, declared.shape, strict=True):
                if isinstance(a, int) and isinstance(b, int) and a != b:
                    return f"shape {found.shape} is not {declared.shape}"
        return None
    if isinstance(found, TensorType):
        return (
            "an array is not a scalar"
            if isinstance(declared, ScalarType)
            else ("an array is not None" if declared == NONE else None)
        )
    if declared == NONE:
        return None if found == NONE else "the function is annotated to return None"
    if _python(declared) and all(_python(m) for m in members(found)):
        return None if signatures.accepts(declared, found) else _mismatch(found, declared)
    return None


def _python(t: Type) -> bool:
    """A builtins or `types` value (the checker knows all its classes' relations); a
    project's own module named `types` (click's, of TypedDicts) is not Python's."""
    ref = class_of(t)
    if ref is None:
        return False
    if t in _SCALARS:
        return True
    module, _, cls = ref[0].partition(".")
    if ref[0] in ("builtins.function", "builtins.method"):
        return True  # (`Callable`, and a bound method: types.FunctionType, MethodType)
    return module in _MODULES and isinstance(getattr(_MODULES[module], cls, None), type)


def _mismatch(found: Type, declared: Type) -> str:
    return f"{_name(found)} is not {_name(declared)}"


__all__ = ["contradicts"]
