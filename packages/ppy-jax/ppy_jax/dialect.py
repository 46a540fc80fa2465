"""The `stablehlo` dialect: an exported JAX computation kept as a serialized blob.

Registered by the jax plugin (`JaxPlugin.register_dialects`), never by the core.
It keeps the name `stablehlo`, not the plugin's `jax`: its payload is a StableHLO
module (what `jax.export` produces), and the `stablehlo` backend runs it.

%r = stablehlo.exported %x {symbol = "main", blob = "..."} : (tensor<?xf32>) -> tensor<?xf32>
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Dialect, Operation, attribute, operand, result
from ppy_core.ir.types import Type


class ExportedOp(Operation):
    """One exported function: `symbol` in the serialized StableHLO module `blob`.

    %r = stablehlo.exported %x {symbol = "main", blob = "ML\\u00efR..."} : (...) -> ...
    """

    name: ClassVar[str] = "stablehlo.exported"
    symbol = attribute(str)
    blob = attribute(str)
    inputs = operand(Type, variadic=True)
    outs = result(Type, variadic=True)


STABLEHLO: Final = Dialect("stablehlo", [ExportedOp])

__all__ = ["STABLEHLO", "ExportedOp"]
