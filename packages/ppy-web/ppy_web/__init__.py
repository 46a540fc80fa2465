"""ppy-web: the PPy plugins for pydantic and uvicorn (FastAPI and Starlette modelled there).

`create_pydantic_plugin` and `create_uvicorn_plugin` are the entry points.
Importing this package imports neither the library nor the compiler: each class
is loaded when asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppy_web.pydantic_plugin import PydanticPlugin
    from ppy_web.uvicorn_plugin import UvicornPlugin

__version__ = "0.1.0"

_LAZY = {
    "PydanticPlugin": "ppy_web.pydantic_plugin",
    "UvicornPlugin": "ppy_web.uvicorn_plugin",
}


def create_pydantic_plugin() -> PydanticPlugin:
    """The `pydantic` plugin (entry point `ppy.plugins: pydantic`)."""
    from ppy_web.pydantic_plugin import PydanticPlugin

    return PydanticPlugin()


def create_uvicorn_plugin() -> UvicornPlugin:
    """The `uvicorn` plugin (entry point `ppy.plugins: uvicorn`)."""
    from ppy_web.uvicorn_plugin import UvicornPlugin

    return UvicornPlugin()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PydanticPlugin",
    "UvicornPlugin",
    "__version__",
    "create_pydantic_plugin",
    "create_uvicorn_plugin",
]
