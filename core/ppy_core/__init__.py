"""The PPy core: the IR, the plugin and backend interfaces, discovery, the cache, the driver.

The core knows no library. Importing `ppy_core` imports nothing else: each part
is its own module (`ppy_core.interface.discovery`, `ppy_core.cache.keys`, ...) imported where used.
"""

from __future__ import annotations

__version__ = "0.1.0"
version = __version__

__all__ = ["__version__", "version"]
