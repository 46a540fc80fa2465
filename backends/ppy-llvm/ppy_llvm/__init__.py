"""ppy-llvm: fused NumPy kernels for the CPU through LLVM, bit-for-bit with NumPy.

Importing this package imports neither llvmlite nor NumPy; everything heavy
happens on first use. ``loader`` is the runtime side (ctypes only).
"""

from __future__ import annotations

from ._backend import LlvmBackend, create_backend
from ._errors import LlvmBackendError
from ._spec import KernelBuilder, KernelSpec, Node
from .loader import CompiledKernel, KernelSignature

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
