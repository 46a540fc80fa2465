"""The `cuda` backend: GPU code from the tensor IR, as PTX through LLVM's NVPTX target.

This module probes nothing when imported; `fingerprint()`, `detected()` and
`toolchain_ready()` probe ptxas and the driver once. The code generator and the
runtime loader land with the CUDA issue: until then the backend lowers nothing and
says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ppy_core.diagnostics import BackendError
from ppy_core.interface.backend import Backend, CompiledUnit, LowerContext
from ppy_cuda._probe import probe

if TYPE_CHECKING:
    from ppy_core.ir.core import Operation


class CudaBackend(Backend):
    """Compiles tensor IR for NVIDIA GPUs."""

    name: ClassVar[str] = "cuda"
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """`v1:toolkit=VERSION|none:driver=VERSION|none[:sm=sm_90,...]`."""
        found = probe()
        text = f"v{self.version}:toolkit={found.toolkit or 'none'}:driver={found.driver or 'none'}"
        if found.gpus:
            text += ":sm=" + ",".join(sorted({sm for _name, sm in found.gpus}))
        return text

    def detected(self) -> Mapping[str, str]:
        """ptxas (place and release), the driver, the GPUs."""
        found = probe()
        ptxas = "not found"
        if found.ptxas:
            ptxas = f"{found.ptxas} (release {found.release or '?'}, V{found.toolkit or '?'})"
        gpus = "; ".join(f"{name} ({sm})" for name, sm in found.gpus)
        return {
            "ptxas": ptxas,
            "driver": found.driver or "none (no NVIDIA driver)",
            "gpus": gpus or "none",
        }

    def toolchain_ready(self) -> str | None:
        """None when ptxas and an NVIDIA driver are both here, else what is missing."""
        found = probe()
        missing = []
        if found.toolkit is None:
            missing.append("ptxas (install the CUDA toolkit or set CUDA_HOME)")
        if found.driver is None:
            missing.append("an NVIDIA driver (no GPU found)")
        return ", ".join(missing) or None

    def relevant(self, imported: frozenset[str]) -> bool:
        """No module uses it until it lowers something (then it serves array modules):
        keying a module must not probe a CUDA toolkit for nothing."""
        return False

    def can_lower(self, func: Operation) -> str | None:
        """Nothing yet: the PTX code generator lands with the CUDA issue."""
        return "the cuda backend does not lower yet (its code generator lands with the CUDA issue)"

    def lower(self, func: Operation, ctx: LowerContext) -> CompiledUnit:
        """Refuses: nothing is lowerable yet (see `can_lower`)."""
        raise BackendError(
            "the cuda backend does not lower yet",
            hint="its code generator lands with the CUDA issue; the site stays Python",
            code="E2001",
        )


__all__ = ["CudaBackend"]
