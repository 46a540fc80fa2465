"""How a call's signature describes an `nn.Module` (`runtime/observed.py`).

A method of an `nn.Module` subclass (its `forward`) is specialized on the instance it
is called on. The description is the module tree as a region needs it, and it is the
guard: the dispatcher compares it at every call, so a call whose module differs in
any of these runs what was compiled for that description, or Python.

    ("instance", "torch", "torch.nn.Module", TREE)
    TREE = (class, training, hooked, params, buffers, children, scalars)

`class` is the module's exact class (`module.qualname`); `hooked` says a forward hook
or pre-hook is set on it or globally; `params` and `buffers` are `(name, dtype,
device, shape, requires_grad, plain)` (`plain`: exactly `Tensor`/`Parameter`, no
subclass with its own `__torch_function__`) or `(name,)` for None; `children` are
`(name, TREE)`; `scalars` the int/float/bool/str (and int tuple) attributes in the
instance's `__dict__`, with their values: a region built for them holds them as
constants, and the description guards them. Parameters themselves are never part of
it: a region reads them at every call (`runtime.py`), so `load_state_dict`, optimizer
steps and `.to()` keep working. Tensors are left to the region's own C++ guard.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

KIND = "torch.nn.Module"
_SCALAR_TYPES = (int, float, bool, str)


def describer(cls: type) -> Callable[[Any], tuple[Any, ...]] | None:
    """The describer of `cls` when it is an `nn.Module` subclass, else None."""
    import torch

    if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
        return None
    return describe_module


def describe_module(module: Any) -> tuple[Any, ...]:
    import torch
    import torch.nn.modules.module as mm

    hooked_globally = bool(mm._global_forward_hooks or mm._global_forward_pre_hooks)
    if not torch._C._is_torch_function_mode_enabled():
        return ("instance", "torch", KIND, _tree(module, hooked_globally))
    # reading dtype/shape/device is not the program's: a `__torch_function__` mode
    # the program set (counting, tracing) must not see it
    with torch._C.DisableTorchFunction():
        return ("instance", "torch", KIND, _tree(module, hooked_globally))


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
        if (type(value) in _SCALAR_TYPES or (type(value) is tuple and _ints(value)))
        and key[0] != "_"
        and key != "training"
    )
    return (
        name,
        own["training"],
        hooked_globally or bool(own["_forward_hooks"] or own["_forward_pre_hooks"]),
        _tensors(own["_parameters"]) if own["_parameters"] else (),
        _tensors(own["_buffers"]) if own["_buffers"] else (),
        children,
        scalars,
    )


def _ints(value: tuple[Any, ...]) -> bool:
    return all(type(v) is int for v in value)


__all__ = ["KIND", "describer", "describe_module"]
