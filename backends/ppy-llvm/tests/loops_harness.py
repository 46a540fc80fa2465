"""Shared by the typed-loops tests: load a module both ways, and what a call does."""

from __future__ import annotations

import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np


def load_both(tmp: Path, name: str, source: str) -> tuple[types.ModuleType, types.ModuleType]:
    """(compiled module, the same source run as plain Python)."""
    import ppy

    path = tmp / f"{name}.py"
    path.write_text(source)
    plain = types.ModuleType(name + "_plain")
    exec(compile(source, str(path), "exec"), plain.__dict__)
    return ppy.load(path), plain


def outcome(fn: Any, *args: Any) -> tuple[Any, ...]:
    """What a call does: ("ok", value bits, type) or ("raise", type, message),
    plus the arrays' bytes afterwards and the warnings' messages."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(*copies)
            what: tuple[Any, ...] = ("ok", type(value), repr(value), np.asarray(value).tobytes())
        except Exception as exc:  # compared, never swallowed
            what = ("raise", type(exc), str(exc))
    arrays = [a.tobytes() for a in copies if isinstance(a, np.ndarray)]
    return (*what, arrays, sorted({str(w.message) for w in caught}))


def fast_calls(fn: Any) -> int:
    return int(fn.ppy_stats()["fast"])
