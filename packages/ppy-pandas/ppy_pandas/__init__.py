"""ppy-pandas: the PPy plugin for pandas: frames and series typed, Series expressions fused.

`create_plugin` is the entry point.
Importing this package imports neither the library nor the compiler: each class
is loaded when asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppy_pandas.plugin import PandasPlugin

__version__ = "0.1.0"

_LAZY = {
    "PandasPlugin": "ppy_pandas.plugin",
}


def create_plugin() -> PandasPlugin:
    """The `pandas` plugin (entry point `ppy.plugins: pandas`)."""
    from ppy_pandas.plugin import PandasPlugin

    return PandasPlugin()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["PandasPlugin", "__version__", "create_plugin"]
