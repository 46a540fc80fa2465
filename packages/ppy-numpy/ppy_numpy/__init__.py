"""ppy-numpy: the PPy plugin for NumPy.

`create_plugin` is the `ppy.plugins` entry point. Importing this package imports
neither NumPy nor the compiler: the plugin class is loaded when asked for, so the
runtime part (`ppy_numpy._runtime`) stays free of compiler code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppy_numpy.plugin import NumpyPlugin

__version__ = "0.1.0"


def create_plugin() -> NumpyPlugin:
    """The `numpy` plugin (entry point `ppy.plugins: numpy`)."""
    from ppy_numpy.plugin import NumpyPlugin

    return NumpyPlugin()


def __getattr__(name: str) -> Any:
    if name == "NumpyPlugin":
        from ppy_numpy.plugin import NumpyPlugin

        return NumpyPlugin
    raise AttributeError(f"module 'ppy_numpy' has no attribute {name!r}")


__all__ = ["NumpyPlugin", "__version__", "create_plugin"]
