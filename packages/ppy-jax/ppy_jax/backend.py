"""The `stablehlo` backend: exported StableHLO executed through PJRT.

This module imports no JAX; the toolchain (jax.export and a PJRT client) is probed
when first asked. The export itself runs at build time in the jax plugin's
`stage` (project code, under the build-execution policy); this backend writes the
artifact it produced into the build and names the loader that binds it at run
time (`ppy_jax.runtime.load_exported`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from ppy_core.diagnostics import BackendError
from ppy_core.interface.backend import Backend, CompiledUnit, LowerContext
from ppy_jax._probe import probe
from ppy_jax.artifact import Artifact, ArtifactFormatError

#: the run-time loader (entry point group ppy.loaders), `ppy_jax.runtime:load_exported`
LOADER: Final = "stablehlo"


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

    def can_lower(self, func: Any) -> str | None:
        """Only an exported function (the jax plugin's `ExportGraph`: a packed artifact)."""
        artifact = getattr(func, "artifact", None)
        if not isinstance(artifact, bytes) or not isinstance(getattr(func, "name", None), str):
            return "the stablehlo backend lowers only functions exported by the jax plugin"
        return self.toolchain_ready()

    def lower(self, func: Any, ctx: LowerContext) -> CompiledUnit:
        """Write the artifact under the build directory; the loader binds it at run time."""
        reason = self.can_lower(func)
        if reason is not None:
            raise BackendError(reason, hint="the function stays an ordinary jitted call")
        try:
            Artifact.unpack(func.artifact)
        except ArtifactFormatError as exc:
            raise BackendError(
                f"the export of {func.name} is unreadable: {exc}",
                hint="rebuild; the function stays an ordinary jitted call",
                code="E2025",
            ) from None
        build_dir = Path(ctx.build_dir)
        build_dir.mkdir(parents=True, exist_ok=True)
        file = f"{ctx.site_id.replace(':', '_')}.ppyjax"
        tmp = build_dir / f".{file}.tmp"
        tmp.write_bytes(func.artifact)
        os.replace(tmp, build_dir / file)
        return CompiledUnit(
            backend=self.name,
            loader=LOADER,
            files=(file,),
            data={
                "file": file,
                "function": func.name,
                "jit_fallback": bool(getattr(func, "jit_fallback", False)),
            },
        )


__all__ = ["LOADER", "StablehloBackend"]
