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
    # reading dtype/shape/device is not the program's: a `__torch_function__` mode
    # the program set (counting, tracing) must not see it
    with torch._C.DisableTorchFunction():
        return ("instance", "torch", KIND, _tree(module, hooked_globally))


def _tree(module: Any, hooked_globally: bool) -> tuple[Any, ...]:
    import torch

    cls = type(module)
    hooked = hooked_globally or bool(module._forward_hooks or module._forward_pre_hooks)
    plain = (torch.Tensor, torch.nn.Parameter)

    def tensors(table: dict[str, Any]) -> tuple[tuple[Any, ...], ...]:
        out = []
        for name, t in table.items():
            if t is None:
                out.append((name,))
                continue
            out.append(
                (
                    name,
                    str(t.dtype),
                    str(t.device),
                    tuple(t.shape),
                    bool(t.requires_grad),
                    type(t) in plain,
                )
            )
        return tuple(out)

    children = tuple(
        (name, None if child is None else _tree(child, hooked_globally))
        for name, child in module._modules.items()
    )
    scalars = []
    for name, value in module.__dict__.items():
        if name.startswith("_") or name == "training":
            continue
        if type(value) in _SCALAR_TYPES or (
            type(value) is tuple and all(type(v) is int for v in value)
        ):
            scalars.append((name, type(value).__name__, value))
    return (
        f"{cls.__module__}.{cls.__qualname__}",
        bool(module.training),
        hooked,
        tensors(module._parameters),
        tensors(module._buffers),
        children,
        tuple(scalars),
    )


__all__ = ["KIND", "describer", "describe_module"]
