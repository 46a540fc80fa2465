"""The compiler as the runtime's loaders see it: what `integrations.registration`
hands the runtime calls these (the runtime never imports this package). Light to
import: the compiler itself loads on the first cache miss."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def compile_for_import(path: Path) -> Path:
    """Compile `path` through the cache, print a fresh compile's diagnostics, remember
    its key for the next start; the cache entry's files folder."""
    from ppy_core.cache.quick import remember
    from ppy_core.compiler.cached import compile_file, report_diagnostics

    compiled = compile_file(path)
    report_diagnostics(compiled)
    remember(compiled.key)
    return compiled.entry.path


def specialize(source: str, function: str, signature: tuple[object, ...]) -> Path | None:
    """Compile one function for one observed signature (`runtime.observed`): the
    compiler loads here, on the first call of a signature no cache entry holds."""
    from ppy_core.compiler.specialize import build

    return build(source, function, signature)


__all__ = ["compile_for_import", "specialize"]
