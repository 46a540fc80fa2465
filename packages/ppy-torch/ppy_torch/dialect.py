"""The `aten` dialect: calls into PyTorch's ATen through its dispatcher.

Registered by the torch plugin (`TorchPlugin.register_dialects`), never by the
core. It keeps the name `aten`, not the plugin's `torch`: its ops are ATen's
operator set, spelled as ATen spells them, and the `aten` backend consumes them.
It spells in IR the calls a staged `RegionGraph` (`ppy_torch.graph`) holds; the
`aten` backend still reads the graph itself.

%y = aten.call %x, %w {target = "matmul", args = ["self=%0", "other=%1"]}
    : (tensor<*xf64, "torch">, tensor<*xf64, "torch">) -> tensor<*xf64, "torch">
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Dialect, Operation, attribute, operand, result
from ppy_core.ir.types import Type


class AtenCallOp(Operation):
    """One `at::` call; `args` says, per C++ parameter, which operand or constant.

    %y = aten.call %x {target = "relu", args = ["self=%0"]} : (tensor<...>) -> tensor<...>
    """

    name: ClassVar[str] = "aten.call"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory"})
    target = attribute(str)
    args = attribute(tuple, optional=True)
    inputs = operand(Type, variadic=True)
    outs = result(Type, variadic=True)


class AtenWriteOp(Operation):
    """`dest.copy_(src)` through a parameter: carries WriteMemory.

    %w = aten.copy_ %dest, %src : (tensor<...>, tensor<...>) -> tensor<...>
    """

    name: ClassVar[str] = "aten.copy_"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory", "WriteMemory"})
    dest = operand(Type)
    src = operand(Type)
    out = result(Type)


ATEN: Final = Dialect("aten", [AtenCallOp, AtenWriteOp])

__all__ = ["ATEN", "AtenCallOp", "AtenWriteOp"]
