"""ppy-arrow: the PPy plugin for PyArrow: columnar typing and fused compute kernels.

`create_plugin` is the entry point.
Importing this package imports neither the library nor the compiler: each class
is loaded when asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppy_arrow.plugin import ArrowPlugin

__version__ = "0.1.0"

_LAZY = {
    "ArrowPlugin": "ppy_arrow.plugin",
}


def create_plugin() -> ArrowPlugin:
    """The `pyarrow` plugin (entry point `ppy.plugins: pyarrow`)."""
    from ppy_arrow.plugin import ArrowPlugin

    return ArrowPlugin()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ArrowPlugin", "__version__", "create_plugin"]
