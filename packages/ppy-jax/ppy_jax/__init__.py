"""ppy-jax: the PPy plugin for JAX (with Flax and optax) and the StableHLO backend.

`create_plugin` and `create_backend` are the entry points.
Importing this package imports neither the library nor the compiler: each class
is loaded when asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppy_jax.backend import StablehloBackend
    from ppy_jax.plugin import JaxPlugin

__version__ = "0.1.0"

_LAZY = {
    "JaxPlugin": "ppy_jax.plugin",
    "StablehloBackend": "ppy_jax.backend",
}


def create_plugin() -> JaxPlugin:
    """The `jax` plugin (entry point `ppy.plugins: jax`)."""
    from ppy_jax.plugin import JaxPlugin

    return JaxPlugin()


def create_backend() -> StablehloBackend:
    """The `stablehlo` backend (entry point `ppy.backends: stablehlo`)."""
    from ppy_jax.backend import StablehloBackend

    return StablehloBackend()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["JaxPlugin", "StablehloBackend", "__version__", "create_backend", "create_plugin"]
