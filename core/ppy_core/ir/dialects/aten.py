"""The aten dialect: calls into PyTorch's ATen through its dispatcher, and the
stablehlo dialect: an exported JAX computation kept as a serialized blob.

%y = aten.call %x, %w {target = "matmul", args = [...]}
    : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
%r = stablehlo.exported %x {symbol = "main", blob = "..."} : (tensor<?xf32>) -> tensor<?xf32>
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Dialect, Operation, attribute, operand, result
from ppy_core.ir.types import Type


class AtenCallOp(Operation):
    """One `at::` call; `args` says, per C++ parameter, which operand or constant."""

    name: ClassVar[str] = "aten.call"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory"})
    target = attribute(str)
    args = attribute(tuple, optional=True)
    inputs = operand(Type, variadic=True)
    outs = result(Type, variadic=True)


class AtenWriteOp(Operation):
    """`dest.copy_(src)` through a parameter: carries WriteMemory."""

    name: ClassVar[str] = "aten.copy_"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory", "WriteMemory"})
    dest = operand(Type)
    src = operand(Type)
    out = result(Type)


class ExportedOp(Operation):
    name: ClassVar[str] = "stablehlo.exported"
    symbol = attribute(str)
    blob = attribute(str)
    inputs = operand(Type, variadic=True)
    outs = result(Type, variadic=True)


ATEN: Final = Dialect("aten", [AtenCallOp, AtenWriteOp])
STABLEHLO: Final = Dialect("stablehlo", [ExportedOp])
