"""Where the runtime finds a compiler: it never imports one itself.

A process that can compile (`ppy FILE`, `ppy -m`, `import ppy`, the pytest plugin,
the IPython extension) registers a callable here; the finder's loaders ask it only
on a cache miss. A built artifact's process registers nothing, so a module missing
from its cache cannot be compiled there (`NoCompiler`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


_COMPILER: Callable[[Path], Path] | None = None
#: compiles one function for one observed signature (`runtime.observed`), where a
#: compiler is in the process: (source, qualname, signature) -> entry folder or None
SPECIALIZER: list[Callable[[str, str, tuple[object, ...]], Path | None]] = []

#: the modules the import loaders ran from a cache entry, in order (for summaries)
LOADED: list[str] = []


class NoCompiler(ImportError):
    """A module needs compiling and no compiler registered itself in this process."""


def register(compile_path: Callable[[Path], Path]) -> None:
    """Make `compile_path` the compiler the runtime's loaders call on a cache miss."""
    global _COMPILER
    _COMPILER = compile_path


def register_specializer(build: Callable[[str, str, tuple[object, ...]], Path | None]) -> None:
    """Make `build` what compiles a new signature of an unannotated function."""
    SPECIALIZER[:] = [build]


def registered() -> bool:
    return _COMPILER is not None


def compile_path(path: Path) -> Path:
    """The cache entry of `path`, compiled by the registered compiler."""
    if _COMPILER is None:
        raise NoCompiler(
            f"ppy: {path} is not in the cache and no compiler is in this process; "
            "`import ppy` (or run it with `ppy FILE`) so it can be compiled  [E3040]",
            path=str(path),
        )
    return _COMPILER(path)


__all__ = [
    "LOADED",
    "SPECIALIZER",
    "NoCompiler",
    "compile_path",
    "register",
    "register_specializer",
    "registered",
]
