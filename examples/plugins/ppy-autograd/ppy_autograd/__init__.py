"""ppy-autograd: a third-party PPy plugin for autograd's NumPy wrapper.

`create_plugin` is the entry point. Importing this package imports neither
autograd nor the compiler: the plugin class is loaded when the core asks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ppy_autograd.plugin import AutogradPlugin

__version__ = "0.1.0"


def create_plugin() -> AutogradPlugin:
    """The `autograd` plugin (entry point `ppy.plugins: autograd`)."""
    from ppy_autograd.plugin import AutogradPlugin

    return AutogradPlugin()
