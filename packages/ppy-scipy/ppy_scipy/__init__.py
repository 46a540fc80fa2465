"""ppy-scipy: the PPy plugin for SciPy: special, fft, linalg and sparse typed and named.

`create_plugin` is the entry point.
Importing this package imports neither the library nor the compiler: each class
is loaded when asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppy_scipy.plugin import ScipyPlugin

__version__ = "0.1.0"

_LAZY = {
    "ScipyPlugin": "ppy_scipy.plugin",
}


def create_plugin() -> ScipyPlugin:
    """The `scipy` plugin (entry point `ppy.plugins: scipy`)."""
    from ppy_scipy.plugin import ScipyPlugin

    return ScipyPlugin()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ScipyPlugin", "__version__", "create_plugin"]
