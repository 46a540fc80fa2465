"""The type an annotation would give an argument the runtime described.

A signature (`runtime/observed.py`) says of each argument what the runtime adapters
say: Python's scalars by the core, arrays by their library's adapter as
``("array", library, class, element, rank, ...)``, and other library objects as
``("instance", library, class, ...)`` (a pandas DataFrame by its columns). Scalars
and arrays the core types itself (an array is its library's tensor of that element
and rank); an instance is the type its library's plugin gives its class
(`external_types`: a DataFrame is the pandas plugin's frame, whose constant column
selections are Series). Anything else is Unknown: the generic function answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.ir.types import (
    F64,
    I1,
    I64,
    NONE,
    SCALAR_KINDS,
    UNKNOWN,
    ScalarType,
    TensorType,
    Type,
)

_SCALARS: dict[str, Type] = {"int": I64, "float": F64, "bool": I1, "None": NONE}


def described_type(description: tuple[Any, ...], oracle: Oracle | None = None) -> Type:
    kind = description[0] if description else ""
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array" and len(description) >= 5:
        _kind, library, _cls, element, rank = description[:5]
        if element in SCALAR_KINDS and isinstance(rank, int) and 0 <= rank <= 32:
            return TensorType(ScalarType(element), (None,) * rank, str(library))
    if kind == "instance" and len(description) >= 3 and oracle is not None:
        return oracle.external_types().get(str(description[2]), UNKNOWN)
    return UNKNOWN


def described_types(
    described: Mapping[str, tuple[Any, ...]], oracle: Oracle | None
) -> dict[str, Type]:
    return {name: described_type(d, oracle) for name, d in described.items()}


__all__ = ["described_type", "described_types"]
