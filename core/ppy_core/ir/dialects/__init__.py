"""The core dialects, and a registry holding all of them.

The core keeps the dialects several plugins share: `builtin`/`func`, `tensor`,
`columnar`, and `linalg` with the library-call base (`library`). A dialect one
library owns is its plugin's, registered through `Plugin.register_dialects`:
`aten` (ppy-torch), `stablehlo` (ppy-jax), `scipy.special`/`scipy.fft`/
`scipy.sparse` (ppy-scipy). `core_registry()` holds the core's; the driver adds
the active plugins' to it.

Loaded lazily: a plugin reading one dialect's tables (`tensor.UNARY_FUNCTIONS`) on
a cached start does not pay for every dialect.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppy_core.ir.core import Dialect, DialectRegistry

_DIALECTS = (
    ("builtin", "BUILTIN"),
    ("builtin", "FUNC"),
    ("tensor", "TENSOR"),
    ("columnar", "COLUMNAR"),
    ("library", "LINALG"),
    ("loops", "LOOPS"),
)


def _core_dialects() -> tuple[Dialect, ...]:
    return tuple(
        getattr(importlib.import_module(f"ppy_core.ir.dialects.{module}"), name)
        for module, name in _DIALECTS
    )


def core_registry() -> DialectRegistry:
    """A fresh registry with the core dialects; plugins' dialects are added to it."""
    from ppy_core.ir.core import DialectRegistry

    return DialectRegistry(_core_dialects())


def __getattr__(name: str) -> Any:
    if name == "CORE_DIALECTS":
        return _core_dialects()
    raise AttributeError(f"module 'ppy_core.ir.dialects' has no attribute {name!r}")


__all__ = ["CORE_DIALECTS", "core_registry"]
