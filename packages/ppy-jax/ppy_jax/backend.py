"""The `stablehlo` backend: exported StableHLO executed through PJRT.

This module imports no JAX; the toolchain (jax.export and a PJRT client) is probed
when first asked. The export and the runtime loader land with the JAX issue: until
then the backend lowers nothing and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ppy_core.diagnostics import BackendError
from ppy_core.interface.backend import Backend, CompiledUnit, LowerContext
from ppy_jax._probe import probe

if TYPE_CHECKING:
    from ppy_core.ir.core import Operation


class StablehloBackend(Backend):
    """Runs exported JAX functions (StableHLO) through PJRT."""

    name: ClassVar[str] = "stablehlo"
    modules: ClassVar[tuple[str, ...]] = ("jax",)
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """`v1:jax=V:jaxlib=V:cc=MIN-MAX:platform=P` (cc: the export calling conventions)."""
        build = probe()
        if build is None:
            return f"v{self.version}:jax=none"
        cc = "-".join(map(str, build.calling_conventions)) if build.calling_conventions else "none"
        return (
            f"v{self.version}:jax={build.jax}:jaxlib={build.jaxlib}:cc={cc}"
            f":platform={build.platform}"
        )

    def detected(self) -> Mapping[str, str]:
        """jax.export's calling conventions and the PJRT platform."""
        build = probe()
        if build is None:
            return {"jax": "not installed"}
        cc = build.calling_conventions
        return {
            "jax.export": f"calling conventions {cc[0]}..{cc[1]}" if cc else "not available",
            "pjrt": f"{build.platform}: {build.devices}",
        }

    def toolchain_ready(self) -> str | None:
        """None when jax.export and a PJRT platform are there, else what is missing."""
        build = probe()
        if build is None:
            return "jax is not installed (pip install 'jax>=0.4.30')"
        if build.calling_conventions is None:
            return f"jax {build.jax} has no jax.export (install jax>=0.4.30)"
        if build.platform == "none":
            return f"jax has no usable platform ({build.devices})"
        return None

    def can_lower(self, func: Operation) -> str | None:
        """Nothing yet: the StableHLO export lands with the JAX issue."""
        return "the stablehlo backend does not lower yet (its export lands with the JAX issue)"

    def lower(self, func: Operation, ctx: LowerContext) -> CompiledUnit:
        """Refuses: nothing is lowerable yet (see `can_lower`)."""
        raise BackendError(
            "the stablehlo backend does not lower yet",
            hint="its export lands with the JAX issue; the site stays Python",
            code="E2001",
        )


__all__ = ["StablehloBackend"]
