"""The `pyarrow` plugin: what the compiler knows of PyArrow.

This module imports no PyArrow; `fingerprint()` and `detected()` do, once. Its
hooks read `ppy_arrow.tables`: Arrow's classes are typed (a column is a
`ColumnType` of library "pyarrow"), the curated `pyarrow.compute` surface converges
onto the core's `columnar` dialect (elementwise ops fuse into one kernel; filter,
take, sort_indices, cast and the aggregations are named and left to Arrow), and
pyarrow.parquet/dataset/csv carry IO. The run-time side is `ppy_arrow.runtime`.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ppy_arrow import _converge
from ppy_arrow import tables as T
from ppy_core.interface.plugin import (
    AttributeContext,
    CallAnswer,
    CallContext,
    Converge,
    Plugin,
)
from ppy_core.ir.types import UNKNOWN, ColumnType, OpaqueType, TensorType, Type


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

    # -- typing -----------------------------------------------------------------------
    def external_types(self) -> Mapping[str, Type]:
        return T.EXTERNAL_TYPES

    def instance_attribute(self, ctx: AttributeContext) -> Type | None:
        t = ctx.owner_type
        if isinstance(t, ColumnType) and t.library == T.LIBRARY:
            return T.COLUMN_ATTRIBUTES.get(ctx.name)
        if isinstance(t, OpaqueType) and t.name in T.OPAQUE_ATTRIBUTES:
            return T.OPAQUE_ATTRIBUTES[t.name].get(ctx.name)
        return None

    def call(self, ctx: CallContext) -> CallAnswer | None:
        if ctx.callee.startswith(T.IO_MODULES):
            return CallAnswer(UNKNOWN, effects=frozenset({"IO"}))
        if ctx.callee.startswith("pyarrow.Array."):
            return _method(ctx)
        converge = self.tensor_operation(ctx)
        if converge is not None:
            return CallAnswer(converge.result)
        if ctx.callee in ("pyarrow.array", "pyarrow.compute.cast"):
            return CallAnswer(T.F64_COLUMN if ctx.callee == "pyarrow.array" else UNKNOWN)
        return None

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        """`pyarrow.compute.F(...)` of the curated surface -> its columnar op, when its
        operands' types are ones the op takes; None (Arrow's own call) otherwise."""
        if not ctx.callee.startswith("pyarrow.compute.") or ctx.kwargs:
            return None
        return _converge.converge(ctx.callee[len("pyarrow.compute.") :], ctx.args, ctx.constants)


def _method(ctx: CallContext) -> CallAnswer | None:
    name = ctx.callee[len("pyarrow.Array.") :]
    if name == "to_numpy":
        return CallAnswer(_to_numpy(ctx))
    if name in ("sum", "mean", "min", "max"):
        return None
    found = T.COLUMN_METHODS.get(name)
    return CallAnswer(found) if found is not None else None


def _to_numpy(ctx: CallContext) -> Type:
    """What `Array.to_numpy()` gives: a NumPy array that is a zero-copy view only for a
    fixed-width array without nulls; with nulls it is a copy (float64: NaN where null),
    and under `zero_copy_only=True` (the default of `Array.to_numpy`) PyArrow raises
    ArrowInvalid for an array with nulls. The type is the same either way: the copy or
    the error is decided by the run-time null count, which the typing cannot know."""
    receiver = ctx.receiver
    element = receiver.value if isinstance(receiver, ColumnType) else None
    if element is None:
        return UNKNOWN
    return TensorType(element, (None,), "numpy")  # bool: bit-packed, always a copy


__all__ = ["ArrowPlugin", "ArrowBuild", "probe"]
