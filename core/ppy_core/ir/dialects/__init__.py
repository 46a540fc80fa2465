"""The core dialects, and a registry holding all of them."""

from __future__ import annotations

from typing import Final

from ppy_core.ir.core import DialectRegistry
from ppy_core.ir.dialects.aten import ATEN, STABLEHLO
from ppy_core.ir.dialects.builtin import BUILTIN, FUNC
from ppy_core.ir.dialects.columnar import COLUMNAR
from ppy_core.ir.dialects.library import FFT, LINALG, SPARSE, SPECIAL
from ppy_core.ir.dialects.tensor import TENSOR

CORE_DIALECTS: Final = (
    BUILTIN,
    FUNC,
    TENSOR,
    COLUMNAR,
    LINALG,
    FFT,
    SPECIAL,
    SPARSE,
    ATEN,
    STABLEHLO,
)


def core_registry() -> DialectRegistry:
    """A fresh registry with the core dialects; plugins' dialects are added to it."""
    return DialectRegistry(CORE_DIALECTS)


__all__ = ["CORE_DIALECTS", "core_registry"]
