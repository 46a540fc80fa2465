"""The `numpy` plugin: what the compiler knows of NumPy.

This module imports no NumPy: `fingerprint()` and `detected()` import it, once,
when first asked. The typing tables and the convergence onto the tensor dialect
come with the NumPy issue; today the plugin carries its claim and its fingerprint.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ppy_core.plugins import Plugin


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


class NumpyPlugin(Plugin):
    """Teaches the compiler NumPy (claims the top-level module `numpy`)."""

    name: ClassVar[str] = "numpy"
    modules: ClassVar[tuple[str, ...]] = ("numpy",)
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """`v1:numpy=VERSION:simd=BASELINE+DISPATCHED:blas=NAME/VERSION`; the SIMD part
        lists the baseline and the dispatch targets enabled on this CPU, since which
        loops NumPy runs (and so its last bits) depends on them."""
        build = probe()
        if build is None:
            return f"v{self.version}:numpy=none"
        simd = ",".join(build.baseline) + "+" + ",".join(build.dispatched)
        return f"v{self.version}:numpy={build.version}:simd={simd}:blas={build.blas}"

    def detected(self) -> Mapping[str, str]:
        """NumPy's version and place, its SIMD baseline and dispatch, its BLAS."""
        build = probe()
        if build is None:
            return {"numpy": "not installed"}
        return {
            "numpy": f"{build.version} ({build.path})",
            "simd baseline": " ".join(build.baseline) or "none",
            "simd dispatched": f"{' '.join(build.dispatched) or 'none'} "
            f"(build targets: {' '.join(build.dispatchable) or 'none'})",
            "blas": build.blas_detail,
        }


__all__ = ["NumpyPlugin", "NumpyBuild", "probe"]
