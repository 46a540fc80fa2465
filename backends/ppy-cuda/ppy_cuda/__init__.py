"""ppy-cuda: the PPy backend generating GPU code (PTX through LLVM's NVPTX target).

`create_backend` is the entry point.
Importing this package imports neither the library nor the compiler: each class
is loaded when asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppy_cuda.backend import CudaBackend

__version__ = "0.1.0"

_LAZY = {
    "CudaBackend": "ppy_cuda.backend",
}


def create_backend() -> CudaBackend:
    """The `cuda` backend (entry point `ppy.backends: cuda`)."""
    from ppy_cuda.backend import CudaBackend

    return CudaBackend()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CudaBackend", "__version__", "create_backend"]
