"""`ppy.load(path)`, `ppy.stats()`, `ppy.summary()`: compile one file in-process; read
the counters."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any


def load(path: str | Path, name: str | None = None) -> types.ModuleType:
    """Compile `path` through the cache and import it as module `name` (its stem)."""
    from ppy_core.compiler.cached import compile_file, report_diagnostics
    from ppy_core.runtime.module import exec_artifact

    file = Path(path).resolve()
    compiled = compile_file(file)
    report_diagnostics(compiled)
    module = types.ModuleType(name or file.stem)
    module.__file__ = str(file)
    sys.modules[module.__name__] = module
    try:
        exec_artifact(compiled.entry.path, module)
    except BaseException:
        sys.modules.pop(module.__name__, None)
        raise
    return module


def stats() -> dict[str, dict[str, Any]]:
    """Per site: {"fast": calls that took the compiled path, "fallback": {reason: n}}."""
    from ppy_core.runtime.dispatch import stats as _stats

    return _stats()


def summary() -> str:
    """`ppy: M modules compiled, S sites, F fast calls, B fallbacks (reason n, ...)`:
    this process's modules compiled by an import hook and its sites' counters."""
    from ppy_core.integrations.summary import current

    return current()


def reset_stats() -> None:
    from ppy_core.runtime.dispatch import reset_stats as _reset

    _reset()
