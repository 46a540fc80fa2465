"""Registering the compiler with the runtime, without importing it.

The runtime never imports the compiler: a process that has one (`ppy FILE`, `ppy -m`,
`import ppy`, PPY_PACKAGES, the pytest plugin) hands the runtime two callables here,
for a module missing from the cache (`runtime.compiling`) and for a signature an
unannotated function has not been specialized for (`runtime.observed`). Both load
`compiler.importing`, and through it the compiler, on their first call only: a warm
start imports no module of the compiler.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def _compile(path: Path) -> Path:
    from ppy_core.compiler.importing import compile_for_import

    return compile_for_import(path)


def _specialize(source: str, function: str, signature: tuple[object, ...]) -> Path | None:
    from ppy_core.compiler.importing import specialize

    return specialize(source, function, signature)


def register() -> None:
    """Let the runtime's loaders compile in this process, and unannotated functions
    specialize on the signatures they are called with."""
    from ppy_core.runtime import compiling

    compiling.register(_compile)
    compiling.register_specializer(_specialize)


__all__ = ["register"]
