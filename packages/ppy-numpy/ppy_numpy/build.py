"""The NumPy build the plugin compiles against: version, SIMD features, BLAS.

Imported by the plugin without NumPy; `probe()` imports NumPy once, when first
asked (for `fingerprint()` and `detected()`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class NumpyBuild:
    """The NumPy found: its version and place, its SIMD features, its BLAS."""

    version: str
    path: str
    baseline: tuple[str, ...]  # compiled in: every CPU running this build has them
    dispatched: tuple[str, ...]  # dispatch targets enabled on this CPU
    dispatchable: tuple[str, ...]  # every dispatch target of the build
    blas: str
    blas_detail: str


def _cpu_module() -> Any:
    for name in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _blas(numpy: Any) -> tuple[str, str]:
    try:
        config = numpy.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
    except Exception:
        return "unknown", "numpy.show_config does not say"
    name, version = blas.get("name", "unknown"), blas.get("version", "unknown")
    return f"{name}/{version}", str(blas.get("openblas configuration", f"{name} {version}"))


@functools.cache
def probe() -> NumpyBuild | None:
    """Import NumPy and read its build; None when NumPy is not installed."""
    try:
        numpy = importlib.import_module("numpy")
    except ImportError:
        return None
    cpu = _cpu_module()
    features: Mapping[str, bool] = getattr(cpu, "__cpu_features__", {})
    baseline = tuple(getattr(cpu, "__cpu_baseline__", ()))
    dispatch = tuple(getattr(cpu, "__cpu_dispatch__", ()))
    blas, detail = _blas(numpy)
    return NumpyBuild(
        version=numpy.__version__,
        path=str(getattr(numpy, "__file__", "?")),
        baseline=baseline,
        dispatched=tuple(f for f in dispatch if features.get(f)),
        dispatchable=dispatch,
        blas=blas,
        blas_detail=detail,
    )


__all__ = ["NumpyBuild", "probe"]
