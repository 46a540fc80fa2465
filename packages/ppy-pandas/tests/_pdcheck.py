"""Helpers of the fusion tests: compile a module through ppy and as plain Python,
build Series on either backing, compare two answers the way the issue asks."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

import ppy

ARROW_F64 = pd.ArrowDtype(pa.float64())


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


def series(values: np.ndarray, nulls: np.ndarray, backing: str, index: Any, name: Any) -> pd.Series:
    """float64 values on the NumPy backing (NaN where `nulls`) or on the Arrow backing
    (<NA> where `nulls`; a NaN among the values stays a stored NaN)."""
    if backing == "numpy":
        return pd.Series(np.where(nulls, np.nan, values), index=index, name=name)
    arr = pa.array(values, pa.float64(), mask=nulls)
    return pd.Series(pd.arrays.ArrowExtensionArray(arr), index=index, name=name)


def outcome(fn: Any, args: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        return "value", fn(*args)
    except Exception as exc:  # pandas' own errors, compared by type and message
        return "error", (type(exc), str(exc))


def assert_same(got: pd.Series, want: pd.Series, where: str) -> None:
    """pandas' own exact comparison, plus dtype, backing, name and index identity."""
    pd.testing.assert_series_equal(got, want, check_exact=True, obj=where)
    assert got.dtype == want.dtype, where
    assert type(got.array) is type(want.array), where
    assert got.name == want.name or (got.name is None and want.name is None), where
    assert got.index.equals(want.index), where
