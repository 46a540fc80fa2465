"""The `pandas` plugin: what the compiler knows of pandas.

This module imports no pandas; `fingerprint()` and `detected()` do, once. The
typing of frames and series and the fusion of Series expressions land with the
pandas issue; today the plugin carries its claim and its fingerprint.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Final

from ppy_core.cache.keys import installed_version
from ppy_core.interface.plugin import Plugin

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


__all__ = ["PandasPlugin", "PandasBuild", "probe"]
