"""Bind a call's arguments to an ATen signature, by C++ parameter names and kinds.

An operation with several signatures takes the first one whose parameters the
call fills: positional arguments in order, keywords by the C++ name (Python's
`input` stands for the C++ `self`), every required parameter given, and every
argument of a kind the parameter accepts. Anything else is a reason, not an error:
the function stays Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ppy_torch import ops
from ppy_torch.graph import BOOL, FLOAT, INT, TENSOR, Arg, Const, ListArg, Value

Bound = tuple[ops.AtenSignature, tuple[tuple[str, Arg], ...]]


def _is_int_const(arg: Arg) -> bool:
    return isinstance(arg, Const) and type(arg.value) is int


def _is_number_const(arg: Arg) -> bool:
    return isinstance(arg, Const) and type(arg.value) in (int, float, bool)


def _kind(arg: Arg) -> str | None:
    return arg.kind if isinstance(arg, Value) else None


def _int_like(arg: Arg) -> bool:
    return _is_int_const(arg) or _kind(arg) == INT


def _int_list(arg: Arg) -> bool:
    if isinstance(arg, Const):
        value = arg.value
        return type(value) is int or (
            isinstance(value, tuple) and all(type(v) is int for v in value)
        )
    if isinstance(arg, ListArg):
        return all(_int_like(item) for item in arg.items)
    return _kind(arg) == INT


def accepts(kind: str, arg: Arg) -> bool:
    """Whether a C++ parameter of `kind` takes `arg` (see ops.py for the kinds)."""
    none = isinstance(arg, Const) and arg.value is None
    checks = {
        ops.TENSOR_ONLY: lambda: _kind(arg) == TENSOR,
        ops.TENSOR: lambda: _kind(arg) in (TENSOR, INT, FLOAT, BOOL) or _is_number_const(arg),
        ops.OPT_TENSOR: lambda: none or _kind(arg) == TENSOR,
        ops.TENSOR_LIST: lambda: (
            isinstance(arg, ListArg)
            and bool(arg.items)
            and all(_kind(item) == TENSOR for item in arg.items)
        ),
        ops.INT: lambda: _int_like(arg),
        ops.INT_LIST: lambda: _int_list(arg),
        ops.OPT_INT_LIST: lambda: none or _int_list(arg),
        ops.BOOL: lambda: (
            (isinstance(arg, Const) and type(arg.value) is bool) or _kind(arg) == BOOL
        ),
        ops.DOUBLE: lambda: (
            (isinstance(arg, Const) and type(arg.value) in (int, float))
            or _kind(arg) in (INT, FLOAT)
        ),
        ops.OPT_DOUBLE: lambda: (
            none
            or (isinstance(arg, Const) and type(arg.value) in (int, float))
            or _kind(arg) in (INT, FLOAT)
        ),
        ops.SCALAR: lambda: _is_number_const(arg) or _kind(arg) in (INT, FLOAT, BOOL),
        ops.STRING: lambda: isinstance(arg, Const) and isinstance(arg.value, str),
        ops.OPT_STRING: lambda: none or (isinstance(arg, Const) and isinstance(arg.value, str)),
    }
    check = checks.get(kind)
    return bool(check and check())


def _try(sig: ops.AtenSignature, args: Sequence[Arg], kwargs: Mapping[str, Arg]) -> Bound | str:
    params = sig.params
    if len(args) > len(params):
        return f"{sig.overload} takes at most {len(params)} positional arguments"
    given: dict[str, Arg] = {params[i].name: arg for i, arg in enumerate(args)}
    names = {param.name for param in params}
    for key, arg in kwargs.items():
        name = "self" if key == "input" and "input" not in names else key
        if name not in names:
            return f"{sig.overload} has no parameter `{key}`"
        if name in given:
            return f"{sig.overload} got `{key}` twice"
        given[name] = arg
    bound: list[tuple[str, Arg]] = []
    for param in params:
        if param.name not in given:
            if param.required:
                return f"{sig.overload} needs `{param.name}`"
            continue
        arg = given[param.name]
        if not accepts(param.kind, arg):
            return f"{sig.overload}: `{param.name}` must be {param.kind}, got {_describe(arg)}"
        bound.append((param.name, arg))
    return sig, tuple(bound)


def _describe(arg: Arg) -> str:
    if isinstance(arg, Value):
        return f"a {arg.kind} value"
    if isinstance(arg, ListArg):
        return "a tuple of values"
    return repr(arg.value)


def bind(op: ops.AtenOp, args: Sequence[Arg], kwargs: Mapping[str, Arg]) -> Bound | str:
    """The first signature of `op` the call fills, with its bound arguments, or why none."""
    reasons: list[str] = []
    for sig in op.signatures:
        result = _try(sig, args, kwargs)
        if not isinstance(result, str):
            return result
        reasons.append(result)
    return "; ".join(reasons)


__all__ = ["bind", "accepts", "Bound"]
