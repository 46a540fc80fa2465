"""The `pyarrow` plugin: what the compiler knows of PyArrow.

This module imports no PyArrow; `fingerprint()` and `detected()` do, once. The
columnar typing, the convergence of pyarrow.compute onto the columnar dialect and
the C Data Interface runtime land with the PyArrow issue; today the plugin carries
its claim and its fingerprint.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ppy_core.interface.plugin import Plugin


@dataclass(frozen=True, slots=True)
class ArrowBuild:
    """The PyArrow found: its version, its libarrow build, its SIMD level."""

    pyarrow: str
    path: str
    libarrow: str
    build_type: str
    compiler: str
    package_kind: str
    simd: str
    detected_simd: str


@functools.cache
def probe() -> ArrowBuild | None:
    """Import PyArrow and read its build; None when PyArrow is not installed."""
    try:
        pa = importlib.import_module("pyarrow")
    except ImportError:
        return None
    build = pa.cpp_build_info
    runtime = pa.runtime_info()
    return ArrowBuild(
        pyarrow=str(pa.__version__),
        path=str(getattr(pa, "__file__", "?")),
        libarrow=str(build.version),
        build_type=str(build.build_type),
        compiler=f"{build.compiler_id} {build.compiler_version}",
        package_kind=str(build.package_kind) or "unknown",
        simd=str(runtime.simd_level),
        detected_simd=str(runtime.detected_simd_level),
    )


class ArrowPlugin(Plugin):
    """Teaches the compiler PyArrow (claims the top-level module `pyarrow`)."""

    name: ClassVar[str] = "pyarrow"
    modules: ClassVar[tuple[str, ...]] = ("pyarrow",)
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """`v1:pyarrow=V:libarrow=V/BUILD:simd=LEVEL` (Arrow's compute kernels pick
        their loops by the SIMD level in use)."""
        build = probe()
        if build is None:
            return f"v{self.version}:pyarrow=none"
        return (
            f"v{self.version}:pyarrow={build.pyarrow}:libarrow={build.libarrow}/"
            f"{build.build_type}:simd={build.simd}"
        )

    def detected(self) -> Mapping[str, str]:
        """PyArrow's version and place, libarrow's build, the SIMD level."""
        build = probe()
        if build is None:
            return {"pyarrow": "not installed"}
        return {
            "pyarrow": f"{build.pyarrow} ({build.path})",
            "libarrow": f"{build.libarrow} {build.build_type}, {build.compiler}, "
            f"{build.package_kind}",
            "simd": f"{build.simd} in use, {build.detected_simd} detected",
        }


__all__ = ["ArrowPlugin", "ArrowBuild", "probe"]
