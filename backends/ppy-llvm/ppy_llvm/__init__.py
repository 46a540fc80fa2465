"""ppy-llvm: fused array kernels for the CPU through LLVM, bit-for-bit with their library.

Importing this package imports neither llvmlite nor any array library; everything
heavy happens on first use. It has no run-time side of its own: its kernels follow
the core's kernel ABI (`ppy_core.runtime.abi`) and are bound by the runtime adapter
of the site's library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._backend import LlvmBackend, create_backend
from ._errors import LlvmBackendError

if TYPE_CHECKING:
    from ppy_core.runtime.abi import CompiledKernel, KernelSignature

    from ._spec import KernelBuilder, KernelSpec, Node

__all__ = [
    "CompiledKernel",
    "KernelBuilder",
    "KernelSignature",
    "KernelSpec",
    "LlvmBackend",
    "LlvmBackendError",
    "Node",
    "compile_specs",
    "create_backend",
]


def compile_specs(specs: list[KernelSpec], name: str = "kernels") -> list[CompiledKernel]:
    """Compile hand-built specs into one shared library (see `_build.compile_specs`)."""
    from ._build import compile_specs as _compile

    return _compile(specs, name)


def __getattr__(name: str) -> Any:
    """Kernel classes, imported when first asked for (not at start-up)."""
    if name in ("KernelBuilder", "KernelSpec", "Node"):
        from . import _spec

        return getattr(_spec, name)
    if name in ("CompiledKernel", "KernelSignature"):
        from ppy_core.runtime import abi

        return getattr(abi, name)
    raise AttributeError(f"module 'ppy_llvm' has no attribute {name!r}")
