"""Helpers of the fusion tests: compile a module both ways, build Arrow arrays with a
chosen validity and offset, compare two answers the way the issue asks."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa

import ppy


@dataclass(frozen=True, slots=True)
class Pair:
    name: str
    fast: ModuleType
    plain: ModuleType


def compile_pair(project: Path, name: str, source: str) -> Pair:
    """`source` as `project/name.py`, loaded through ppy and as plain Python."""
    path = project / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    fast = ppy.load(path, name)
    spec = importlib.util.spec_from_file_location(f"{name}_plain", path)
    assert spec is not None
    assert spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    return Pair(name, fast, plain)


def site_counts(module: str, function: str) -> tuple[int, int]:
    """(fast calls, fallbacks) of the one site of `function` in `module`."""
    found = [v for k, v in ppy.stats().items() if k.startswith(f"{module}:{function}.")]
    assert len(found) == 1, f"{function}: sites {sorted(ppy.stats())}"
    return found[0]["fast"], sum(found[0]["fallback"].values())


def outcome(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        return "value", fn(*args)
    except Exception as exc:  # Arrow's own errors, compared by type and message
        return "error", (type(exc), str(exc))


def column(
    values: np.ndarray, mode: str, mask: np.ndarray, offset: int, kind: str = "f64"
) -> pa.Array:
    """An array of the drawn values sliced at `offset`, its validity by `mode`:
    "none" (no bitmap), "mask" (nulls where `mask`), "all" (every slot null),
    "zero" (a bitmap, no null, count known), "unknown" (a bitmap, count not computed)."""
    full = np.concatenate([np.zeros(offset, values.dtype), values])
    fmask = np.concatenate([np.zeros(offset, bool), mask])
    typ = pa.float64() if kind == "f64" else pa.bool_()
    if mode == "none":
        base = pa.array(full, type=typ)
    elif mode == "all":
        base = pa.array(full, type=typ, mask=np.ones(len(full), bool))
    else:
        base = pa.array(full, type=typ, mask=fmask if mode in ("mask", "unknown") else None)
        if mode in ("zero", "unknown"):
            bits = np.packbits(
                ~fmask if mode == "unknown" else np.ones(len(full), bool), bitorder="little"
            )
            count = -1 if mode == "unknown" else 0
            base = pa.Array.from_buffers(
                typ, len(full), [pa.py_buffer(bits.tobytes()), base.buffers()[1]], null_count=count
            )
    return base.slice(offset, len(values))


def assert_same(got: pa.Array, want: pa.Array, what: str = "") -> None:
    """Type, length, offset, null count, bitmap presence, validity bits, and the bits
    of every valid slot (NaN payloads and -0.0 included)."""
    assert type(got) is type(want)
    assert got.type == want.type
    assert len(got) == len(want)
    assert got.offset == want.offset == 0
    assert got.null_count == want.null_count, what
    assert (got.buffers()[0] is None) == (want.buffers()[0] is None), f"bitmap presence {what}"
    valid = np.asarray(want.is_valid().to_numpy(zero_copy_only=False), bool)
    assert np.array_equal(np.asarray(got.is_valid().to_numpy(zero_copy_only=False), bool), valid)
    if got.type == pa.float64():
        g = np.frombuffer(got.buffers()[1], np.uint64, len(got))
        w = np.frombuffer(want.buffers()[1], np.uint64, len(want))
        assert np.array_equal(g[valid], w[valid]), f"values at valid slots {what}"
    else:
        assert got.to_pylist() == want.to_pylist(), what
