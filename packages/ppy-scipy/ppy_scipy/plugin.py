"""The `scipy` plugin: what the compiler knows of SciPy.

This module imports no SciPy; `fingerprint()` and `detected()` do, once. The curated
surface (`ppy_scipy.tables`) is typed and named by `ppy_scipy.surface`: a one-input
`scipy.special` ufunc over a float64 array converges onto
``tensor.unary {op = "scipy.special:<name>"}``, a two-input one onto
``tensor.binary {op = "scipy.special:<name>"}`` (fused: the backend calls SciPy's own
loop once its proof holds); fft, linalg and the other special calls are typed and
named by their dialect op, and SciPy runs them; sparse objects, their methods,
attributes and `@` are typed by `ppy_scipy.sparse`; optimize/integrate/stats calls
that take a Python callable carry the Callback effect.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ppy_core.interface.plugin import (
    AttributeContext,
    CallAnswer,
    CallContext,
    Converge,
    OperatorContext,
    Plugin,
)

if TYPE_CHECKING:
    from ppy_core.ir.core import Dialect
    from ppy_core.ir.types import Type


@dataclass(frozen=True, slots=True)
class ScipyBuild:
    """The SciPy found, the NumPy under it, its BLAS and LAPACK."""

    scipy: str
    path: str
    numpy: str
    blas: str
    lapack: str


def _library(config: Mapping[str, Any], which: str) -> str:
    entry = config.get("Build Dependencies", {}).get(which, {})
    return f"{entry.get('name', 'unknown')}/{entry.get('version', 'unknown')}"


@functools.cache
def probe() -> ScipyBuild | None:
    """Import SciPy and read its build; None when SciPy is not installed."""
    try:
        scipy = importlib.import_module("scipy")
    except ImportError:
        return None
    numpy = importlib.import_module("numpy")
    try:
        config: Mapping[str, Any] = scipy.show_config(mode="dicts") or {}
    except Exception:
        config = {}
    return ScipyBuild(
        scipy=str(scipy.__version__),
        path=str(getattr(scipy, "__file__", "?")),
        numpy=str(numpy.__version__),
        blas=_library(config, "blas"),
        lapack=_library(config, "lapack"),
    )


class ScipyPlugin(Plugin):
    """Teaches the compiler SciPy (claims the top-level module `scipy`)."""

    name: ClassVar[str] = "scipy"
    modules: ClassVar[tuple[str, ...]] = ("scipy",)
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """`v1:scipy=V:numpy=V:blas=NAME/V:lapack=NAME/V`."""
        build = probe()
        if build is None:
            return f"v{self.version}:scipy=none"
        return (
            f"v{self.version}:scipy={build.scipy}:numpy={build.numpy}:blas={build.blas}"
            f":lapack={build.lapack}"
        )

    def detected(self) -> Mapping[str, str]:
        """SciPy's version and place, NumPy's version, BLAS and LAPACK."""
        build = probe()
        if build is None:
            return {"scipy": "not installed"}
        return {
            "scipy": f"{build.scipy} ({build.path})",
            "numpy": build.numpy,
            "blas": build.blas,
            "lapack": build.lapack,
        }

    def register_dialects(self) -> Sequence[Dialect]:
        """`scipy.special`, `scipy.fft`, `scipy.linalg`, `scipy.sparse` (`ppy_scipy.dialects`)."""
        from ppy_scipy.dialects import DIALECTS

        return DIALECTS

    def external_types(self) -> Mapping[str, Type]:
        """`scipy.sparse.csr_matrix` ... `coo_array` (`ppy_scipy.sparse`)."""
        from ppy_scipy.sparse import external_types

        return external_types()

    def instance_attribute(self, ctx: AttributeContext) -> Type | None:
        """`A.T`, `A.shape`, `A.nnz` of a sparse object."""
        from ppy_scipy.sparse import attribute

        return attribute(ctx.owner_type, ctx.name)

    def operator(self, ctx: OperatorContext) -> Converge | Type | None:
        """`A @ B` of sparse objects (with a NumPy array the core asks nobody: two
        libraries)."""
        from ppy_scipy.sparse import operator

        return operator(ctx)

    def call(self, ctx: CallContext) -> CallAnswer | None:
        """Type, name and effect of a curated SciPy call (`surface.answer`)."""
        from ppy_scipy.surface import answer

        return answer(ctx)

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        """`special.erf(x)` of a float64 array: ``tensor.unary {op = "scipy.special:erf"}``."""
        from ppy_scipy.surface import converge

        return converge(ctx)


__all__ = ["ScipyPlugin", "ScipyBuild", "probe"]
