"""The `pydantic` plugin: what the compiler knows of pydantic models.

This module imports no pydantic; `fingerprint()` and `detected()` do, once. Model
typing and field constraints as refinements land with the web issue; today the
plugin carries its claim and its fingerprint.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from typing import ClassVar

from ppy_core.interface.plugin import Plugin


@functools.cache
def probe() -> tuple[str, str, str] | None:
    """(pydantic's version, pydantic-core's version, pydantic's place), or None."""
    try:
        pydantic = importlib.import_module("pydantic")
        core = importlib.import_module("pydantic_core")
    except ImportError:
        return None
    return str(pydantic.VERSION), str(core.__version__), str(getattr(pydantic, "__file__", "?"))


class PydanticPlugin(Plugin):
    """Teaches the compiler pydantic (claims the top-level module `pydantic`)."""

    name: ClassVar[str] = "pydantic"
    modules: ClassVar[tuple[str, ...]] = ("pydantic",)
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """`v1:pydantic=V:core=V` (validation lives in pydantic-core)."""
        found = probe()
        if found is None:
            return f"v{self.version}:pydantic=none"
        return f"v{self.version}:pydantic={found[0]}:core={found[1]}"

    def detected(self) -> Mapping[str, str]:
        """pydantic's and pydantic-core's versions."""
        found = probe()
        if found is None:
            return {"pydantic": "not installed"}
        return {"pydantic": f"{found[0]} ({found[2]})", "pydantic-core": found[1]}


__all__ = ["PydanticPlugin", "probe"]
