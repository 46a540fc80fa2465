"""PPy's PyTorch support: plugin `torch` and backend `aten` (ATen regions).

A function whose body is curated torch operations compiles into one C++ function
that calls `at::` through the dispatcher: autograd, devices and dtype promotion
behave as in eager mode, minus the interpreter between operators.

Importing this package imports neither torch nor a compiler; everything is lazy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ppy_torch.ops import ATEN_CALLS, CURATED_OPS

if TYPE_CHECKING:
    from ppy_torch.backend import AtenBackend
    from ppy_torch.plugin import TorchPlugin

__version__ = "0.1.0"


def create_plugin() -> TorchPlugin:
    """Entry point `ppy.plugins: torch`."""
    from ppy_torch.plugin import TorchPlugin

    return TorchPlugin()


def create_backend() -> AtenBackend:
    """Entry point `ppy.backends: aten`."""
    from ppy_torch.backend import AtenBackend

    return AtenBackend()


def fingerprint() -> str:
    """The plugin's: `v2:torch=<version>:cxx11abi=<0|1>:cuda=<version|none>` (imports torch)."""
    return create_plugin().fingerprint()


def compile_function(fn: Any) -> Any:
    """`fn` as an ATen region (or `fn` itself when it cannot be one)."""
    from ppy_torch.direct import compile_function as impl

    return impl(fn)


def compile_functions(fns: Any) -> list[Any]:
    """Several functions as regions of one extension."""
    from ppy_torch.direct import compile_functions as impl

    return impl(fns)


def explain(fn: Any) -> str:
    """The region graph of `fn`, or why it stays Python."""
    from ppy_torch.direct import explain as impl

    return impl(fn)


def toolchain_ready() -> str | None:
    """None when regions can be built here, else what is missing."""
    return create_backend().toolchain_ready()


__all__ = [
    "ATEN_CALLS",
    "CURATED_OPS",
    "create_plugin",
    "create_backend",
    "fingerprint",
    "compile_function",
    "compile_functions",
    "explain",
    "toolchain_ready",
    "__version__",
]
