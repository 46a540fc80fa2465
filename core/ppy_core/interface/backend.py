"""Backend interface: turns verified IR into code. A backend never types a call.

A backend does nothing at import time; toolchains are probed lazily and cached.
Its output is a `CompiledUnit`: files written into the build directory the driver
gives it, plus the plain data the runtime needs to load them. A kernel names the
runtime adapter of its library (`runtime`, a `ppy.runtimes` entry point name) and
carries the kernel ABI's data (`ppy_core.runtime.abi`); anything else names the
backend's own loader in its own distribution (`loader`), importing no compiler code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ppy_core.interface.specs import LoweringSpec, spec_kind

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
    directory) and what its runtime reads to bind them (JSON-serializable).

    Exactly one route: `runtime`, the registered name of the runtime adapter that
    calls the kernel (its library's, e.g. "numpy"; `data` is the kernel ABI's
    `CompiledKernel.unit_data()`, `files[0]` the kernel's library), or `loader`,
    "module:function" inside the backend's own distribution (e.g. a region
    extension's loader), imported by the runtime only."""

    backend: str
    loader: str
    files: tuple[str, ...]
    data: Mapping[str, Any]
    runtime: str = ""

    def __post_init__(self) -> None:
        if bool(self.loader) == bool(self.runtime):
            raise ValueError(
                f"CompiledUnit of {self.backend!r}: give a loader or a runtime, not "
                f"{'both' if self.loader else 'neither'}"
            )


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

    def read_spec(self, spec: LoweringSpec) -> str | None:
        """None if this backend lowers an op the way `spec` (an IntrinsicSpec,
        DirectCallSpec or DialectOperationSpec a plugin gave) says, else why not.
        The driver asks before `can_lower`, for every op carrying a spec; a backend
        that answers a reason skips the site, and `ppy explain` shows the reason.
        The base reads no spec: ignoring one would lower the op another way."""
        return f"reads no {spec_kind(spec)} spec"

    def can_lower(self, func: Operation) -> str | None:
        """None if every op of `func` (a func.func) is lowerable, else the reason not."""
        return "this backend lowers nothing"

    def lower(self, func: Operation, ctx: LowerContext) -> CompiledUnit:
        """Compile `func`; raise ppy_core.diagnostics.BackendError on failure."""
        raise NotImplementedError


__all__ = ["INTERFACE", "Backend", "LowerContext", "CompiledUnit"]
