"""The `pandas` plugin: what the compiler knows of pandas.

This module imports no pandas; `fingerprint()` and `detected()` do, once. Its hooks
read `ppy_pandas.tables` through `ppy_pandas._typing`: a Series is a `ColumnType` of
library "pandas" (float64 or bool; the run-time guard checks the dtype), frames,
indexes and groups are opaque types whose methods are typed; Series arithmetic,
comparisons, `&`/`|`/`^`/`~`, `fillna`/`isna`/`notna`/`abs` converge onto the core's
`columnar` ops, which fuse into one kernel run by `ppy_pandas.runtime` (both
backings: Arrow's null model and NumPy's). `apply`/`map`/`transform` carry Callback,
`read_*`/`to_*` carry IO. A frame is never a 2-D tensor.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Final

from ppy_core.cache.keys import installed_version
from ppy_core.interface.plugin import (
    AttributeContext,
    CallAnswer,
    CallContext,
    Converge,
    OperatorContext,
    Plugin,
    SubscriptContext,
)
from ppy_core.ir.types import Type
from ppy_pandas import _typing
from ppy_pandas import tables as T

# pandas' answers depend on these when they are installed: it reads Arrow-backed
# data through pyarrow, and hands reductions and expressions to bottleneck/numexpr.
ACCELERATORS: Final[tuple[str, ...]] = ("pyarrow", "bottleneck", "numexpr")


@dataclass(frozen=True, slots=True)
class PandasBuild:
    """The pandas found, the NumPy under it, and its optional accelerators."""

    pandas: str
    path: str
    numpy: str
    accelerators: tuple[tuple[str, str], ...]


@functools.cache
def probe() -> PandasBuild | None:
    """Import pandas and read its build; None when pandas is not installed."""
    try:
        pd = importlib.import_module("pandas")
    except ImportError:
        return None
    numpy = importlib.import_module("numpy")
    return PandasBuild(
        pandas=str(pd.__version__),
        path=str(getattr(pd, "__file__", "?")),
        numpy=str(numpy.__version__),
        accelerators=tuple((name, installed_version(name) or "none") for name in ACCELERATORS),
    )


class PandasPlugin(Plugin):
    """Teaches the compiler pandas (claims the top-level module `pandas`)."""

    name: ClassVar[str] = "pandas"
    modules: ClassVar[tuple[str, ...]] = ("pandas",)
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """`v1:pandas=V:numpy=V:pyarrow=V|none:bottleneck=V|none:numexpr=V|none`."""
        build = probe()
        if build is None:
            return f"v{self.version}:pandas=none"
        extra = "".join(f":{name}={version}" for name, version in build.accelerators)
        return f"v{self.version}:pandas={build.pandas}:numpy={build.numpy}{extra}"

    def detected(self) -> Mapping[str, str]:
        """pandas' version and place, NumPy's version, the accelerators found."""
        build = probe()
        if build is None:
            return {"pandas": "not installed"}
        return {
            "pandas": f"{build.pandas} ({build.path})",
            "numpy": build.numpy,
            **{name: ("not installed" if v == "none" else v) for name, v in build.accelerators},
        }

    # -- typing -----------------------------------------------------------------------
    def external_types(self) -> Mapping[str, Type]:
        return T.EXTERNAL_TYPES

    def instance_attribute(self, ctx: AttributeContext) -> Type | None:
        table = _typing.attribute(ctx.owner_type) if ctx.owner_type is not None else None
        return table.get(ctx.name) if table is not None else None

    def subscript(self, ctx: SubscriptContext) -> Type | None:
        return _typing.subscript(ctx)

    def call(self, ctx: CallContext) -> CallAnswer | None:
        return _typing.call(ctx)

    def operator(self, ctx: OperatorContext) -> Converge | Type | None:
        return _typing.operator(ctx)

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        """`s.fillna(0)`, `s.isna()`, `s.mul(t)`... of float64/bool Series."""
        if not ctx.callee.startswith(("pandas.Series.", T.BOOL_OWNER + ".")):
            return None
        return _typing.series_method(ctx)


__all__ = ["PandasPlugin", "PandasBuild", "probe"]
