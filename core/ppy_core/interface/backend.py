"""Backend interface: turns verified IR into code. A backend never types a call.

A backend does nothing at import time; toolchains are probed lazily and cached.
Its output is a `CompiledUnit`: files written into the build directory the driver
gives it, plus the plain data the runtime needs to load them (`loader` names a
runtime module that imports no compiler code).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from ppy_core.ir.core import Operation

INTERFACE: int = 2


@dataclass(frozen=True, slots=True)
class LowerContext:
    """Where and how to lower one site."""

    site_id: str  # stable within the module: "f.3"
    build_dir: Path  # the backend writes its files here
    fastmath: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CompiledUnit:
    """A compiled site: the files it needs at run time (relative to the build
    directory) and what the loader reads to bind them (JSON-serializable)."""

    backend: str
    loader: str  # "module:function", imported by the runtime only
    files: tuple[str, ...]
    data: Mapping[str, Any]


class Backend:
    """Base of every backend. Subclasses override `can_lower` and `lower`."""

    name: ClassVar[str] = ""
    interface: ClassVar[int] = INTERFACE
    version: ClassVar[str] = "0"
    modules: ClassVar[tuple[str, ...]] = ()  # serves only modules importing one of these

    def relevant(self, imported: frozenset[str]) -> bool:
        """Whether a module importing the top-level modules `imported` can use this
        backend. Only relevant backends are fingerprinted into its cache key, so a
        NumPy module's cached start never imports torch or jax."""
        return not self.modules or bool(imported & set(self.modules))

    def fingerprint(self) -> str:
        """Own version plus the toolchain and target it generates for."""
        return f"v{self.version}"

    def detected(self) -> Mapping[str, str]:
        """What `ppy doctor` shows this backend found (toolchain, target)."""
        return {}

    def toolchain_ready(self) -> str | None:
        """None when the backend can compile here, else what is missing."""
        return None

    def can_lower(self, func: Operation) -> str | None:
        """None if every op of `func` (a func.func) is lowerable, else the reason not."""
        return "this backend lowers nothing"

    def lower(self, func: Operation, ctx: LowerContext) -> CompiledUnit:
        """Compile `func`; raise ppy_core.diagnostics.BackendError on failure."""
        raise NotImplementedError


__all__ = ["INTERFACE", "Backend", "LowerContext", "CompiledUnit"]
