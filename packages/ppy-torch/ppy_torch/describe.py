"""How a call's signature describes an `nn.Module` (`runtime/observed.py`).

A method of an `nn.Module` subclass (its `forward`) is specialized on the instance it
is called on. The description is the module tree as a region needs it, and it is the
guard: the dispatcher compares it at every call, so a call whose module differs in
any of these runs what was compiled for that description, or Python.

    ("instance", "torch", "torch.nn.Module", TREE)
    TREE = (class, training, hooked, params, buffers, children, scalars)

`class` is the module's exact class (`module.qualname`); `hooked` says a forward or
backward hook or pre-hook is set on it or globally; `params` and `buffers` are `(name, dtype,
device, shape, requires_grad, plain)` (`plain`: exactly `Tensor`/`Parameter`, no
subclass with its own `__torch_function__`) or `(name,)` for None; `children` are
`(name, TREE)`; `scalars` the int/float/bool/str (and int tuple) attributes in the
instance's `__dict__`, with their values, and its dataclass instances (a config) as
`(name, "object", (class, their scalar fields))`: a region built for them holds them as
constants, and the description guards them. Parameters themselves are never part of
it: a region reads them at every call (`runtime.py`), so `load_state_dict`, optimizer
steps and `.to()` keep working. Tensors are left to the region's own C++ guard.

Describing the tree costs 0.15-0.3 ms for a GPT of 4 layers, about what its region
saves, so a module whose region ran is not described again: every region checks in
C++, at each call, every fact of the tree it was built from (`modules.py` records
them, `codegen.py` emits the walk), so a description only chooses what runs. After a
region's call succeeds, the module's description is `trust`ed and given back as it is
at its next calls; a region whose guard misses `forget`s it, and the next call
describes the tree again. A module whose forward is no region (nanoGPT's GPT) is
described again every `RECHECK` calls once two descriptions in a row were one: a
stale description only chooses, for at most that many calls, the Python it would have
chosen, or a region whose own guard then decides. A description is interned: the
dispatcher's table lookup compares it by identity (hashing it costs ~4 us).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import is_dataclass
from typing import Any

KIND = "torch.nn.Module"
#: a module's hook tables torch's `__call__` runs around `forward` (a region runs none)
HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_SCALAR_TYPES = (int, float, bool, str)


def describer(cls: type) -> Callable[[Any], tuple[Any, ...]] | None:
    """The describer of `cls` when it is an `nn.Module` subclass, else None."""
    import torch

    if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
        return None
    return describe_module


#: id(module) -> (a weak reference to it, its description), while its region holds
_TRUSTED: dict[int, tuple[weakref.ref[Any], tuple[Any, ...]]] = {}
#: the last description made, until a region's call trusts it
_PENDING: list[tuple[weakref.ref[Any], tuple[Any, ...]]] = []
#: one object per distinct description
_MAX_INTERNED = 4096
_INTERNED: dict[tuple[Any, ...], tuple[Any, ...]] = {}


#: id(module) -> [a weak reference to it, its description, calls left]: a module whose
#: last two descriptions were one is described again every `RECHECK` calls only
_STEADY: dict[int, list[Any]] = {}
RECHECK = 64


def describe_module(module: Any) -> tuple[Any, ...]:
    key = id(module)
    hit = _TRUSTED.get(key)
    if hit is not None and hit[0]() is module:
        return hit[1]
    steady = _STEADY.get(key)
    if steady is not None and steady[2] > 0 and steady[0]() is module:
        steady[2] -= 1
        return steady[1]  # type: ignore[no-any-return]
    described = _describe(module)
    if steady is not None and steady[0]() is module and steady[1] is described:
        steady[2] = RECHECK - 1
    else:
        _steady(module, described)
    return described


def _steady(module: Any, described: tuple[Any, ...]) -> None:
    key = id(module)
    try:
        ref = weakref.ref(module, lambda _ref, key=key: _drop(_STEADY, key, _ref))
    except TypeError:  # no weak reference to it: described at every call
        return
    _STEADY[key] = [ref, described, 0]


def _describe(module: Any) -> tuple[Any, ...]:
    import torch
    import torch.nn.modules.module as mm

    hooked_globally = bool(
        mm._global_forward_hooks
        or mm._global_forward_pre_hooks
        or mm._global_backward_hooks
        or mm._global_backward_pre_hooks
    )
    if not torch._C._is_torch_function_mode_enabled():
        tree = _tree(module, hooked_globally)
    else:
        # reading dtype/shape/device is not the program's: a `__torch_function__` mode
        # the program set (counting, tracing) must not see it
        with torch._C.DisableTorchFunction():
            tree = _tree(module, hooked_globally)
    described = ("instance", "torch", KIND, tree)
    if len(_INTERNED) >= _MAX_INTERNED:  # a program of ever new trees: start again
        _INTERNED.clear()
    described = _INTERNED.setdefault(described, described)
    try:
        _PENDING[:] = [(weakref.ref(module), described)]
    except TypeError:  # no weak reference to it: never trusted
        _PENDING.clear()
    return described


def trust(module: Any) -> None:
    """A region's call of `module` succeeded (its guard checked the whole tree):
    its last description stands for it until a guard misses."""
    if id(module) in _TRUSTED or not _PENDING:
        return
    ref, described = _PENDING[0]
    if ref() is not module:
        return
    key = id(module)
    ref = weakref.ref(module, lambda _ref, key=key: _drop(_TRUSTED, key, _ref))
    _TRUSTED[key] = (ref, described)


def forget(module: Any) -> None:
    """A region's guard missed on `module`: describe it again at its next call."""
    _TRUSTED.pop(id(module), None)
    _STEADY.pop(id(module), None)


def _drop(table: dict[int, Any], key: int, ref: weakref.ref[Any]) -> None:
    """The module of `ref` is gone: its entry goes (unless its id was reused since)."""
    hit = table.get(key)
    if hit is not None and hit[0] is ref:
        del table[key]


#: str() of dtypes and devices, once each (this runs at every call of a method)
_TEXT: dict[Any, str] = {}
_CLASSES: dict[type, str] = {}


def _text(value: Any) -> str:
    found = _TEXT.get(value)
    if found is None:
        found = _TEXT[value] = str(value)
    return found


def _tensors(table: dict[str, Any]) -> tuple[tuple[Any, ...], ...]:
    import torch

    plain = (torch.Tensor, torch.nn.Parameter)
    return tuple(
        (name,)
        if t is None
        else (
            name,
            _text(t.dtype),
            _text(t.device),
            tuple(t.shape),
            t.requires_grad,
            type(t) in plain,
        )
        for name, t in table.items()
    )


def _tree(module: Any, hooked_globally: bool) -> tuple[Any, ...]:
    cls = type(module)
    name = _CLASSES.get(cls)
    if name is None:
        name = _CLASSES[cls] = f"{cls.__module__}.{cls.__qualname__}"
    own = module.__dict__
    if "training" not in own or "_modules" not in own:  # a ScriptModule: its own attributes
        return (name, bool(module.training), False, (), (), (), ())  # refused by class
    children = tuple(
        (key, None if child is None else _tree(child, hooked_globally))
        for key, child in own["_modules"].items()
    )
    scalars = tuple(
        (key, type(value).__name__, value)
        for key, value in own.items()
        if _scalar(value) and key[0] != "_" and key != "training"
    )
    # a dataclass instance (nanoGPT's `self.config`): its class and scalar fields
    objects = tuple(
        (key, "object", (_class_name(type(value)), _fields(value)))
        for key, value in own.items()
        if key[0] != "_" and is_dataclass(value) and not isinstance(value, type)
    )
    return (
        name,
        own["training"],
        hooked_globally or any(own.get(name) for name in HOOKS),
        _tensors(own["_parameters"]) if own["_parameters"] else (),
        _tensors(own["_buffers"]) if own["_buffers"] else (),
        children,
        scalars + objects,
    )


def _scalar(value: Any) -> bool:
    return type(value) in _SCALAR_TYPES or (type(value) is tuple and _ints(value))


def _class_name(cls: type) -> str:
    name = _CLASSES.get(cls)
    if name is None:
        name = _CLASSES[cls] = f"{cls.__module__}.{cls.__qualname__}"
    return name


def _fields(value: Any) -> tuple[tuple[str, str, Any], ...]:
    own = getattr(value, "__dict__", None) or {}
    return tuple((k, type(v).__name__, v) for k, v in own.items() if _scalar(v) and k[0] != "_")


def _ints(value: tuple[Any, ...]) -> bool:
    return all(type(v) is int for v in value)


__all__ = ["HOOKS", "KIND", "describe_module", "describer", "forget", "trust"]
