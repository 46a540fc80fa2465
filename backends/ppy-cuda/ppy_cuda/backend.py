"""The `cuda` backend: a torch site's `tensor.kernel` as PTX through LLVM's NVPTX target.

This module probes nothing when imported; `fingerprint()`, `detected()`,
`toolchain_ready()` and `relevant()` probe ptxas and the driver once. It serves
modules importing torch, and only where an NVIDIA driver with a GPU is found: a
site it takes runs torch on CPU tensors, so on a machine without a GPU it must not
take sites from the CPU backends. In the default order (llvm, cuda, aten) the llvm
backend keeps float64 sites; list `backends = ["cuda", "llvm", "aten"]` in
[tool.ppy] to send them to the GPU. The PTX is built for the lowest GPU arch found
(or `options["arch"]`) and checked by ptxas when it is installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ppy_core.diagnostics import BackendError
from ppy_core.interface.backend import Backend, CompiledUnit, LowerContext
from ppy_cuda._probe import probe

if TYPE_CHECKING:
    from ppy_core.ir.core import Operation

LOADER = "ppy_cuda.runtime:load_site"
DEFAULT_ARCH = "sm_75"


class CudaBackend(Backend):
    """Compiles float32/float64 elementwise tensor kernels for NVIDIA GPUs."""

    name: ClassVar[str] = "cuda"
    version: ClassVar[str] = "2"
    modules: ClassVar[tuple[str, ...]] = ("torch",)

    def fingerprint(self) -> str:
        """`v2:toolkit=VERSION|none:driver=VERSION|none[:sm=sm_90,...]`."""
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
        """None when an NVIDIA driver with a GPU is here (ptxas is optional: the driver
        compiles PTX), else what is missing."""
        found = probe()
        if found.driver is None:
            return "an NVIDIA driver (no GPU found)"
        return None if found.gpus else "a GPU (the driver lists none)"

    def relevant(self, imported: frozenset[str]) -> bool:
        """Modules importing torch, on a machine with a GPU (see the module docstring)."""
        return "torch" in imported and bool(probe().gpus)

    def can_lower(self, func: Operation) -> str | None:
        """None for an elementwise float32/float64 kernel torch's CUDA bits are known
        for; else why not (E2030 / E2033 text)."""
        from ppy_cuda.codegen import kernel_ir
        from ppy_cuda.kernel import kernel_from_func

        try:
            kernel_ir(kernel_from_func(func))
        except BackendError as exc:
            return f"{exc.diagnostic.message}  [{exc.code}]"
        return None

    def lower(self, func: Operation, ctx: LowerContext) -> CompiledUnit:
        """PTX into ctx.build_dir, verified by ptxas where installed."""
        return lower_kernel(func, ctx.site_id, ctx.build_dir, ctx.options)


def target_arch(options: Mapping[str, Any]) -> str:
    """`options["arch"]`, else the oldest GPU's arch here capped at the newest arch
    `ARCH_ISA` knows, else sm_75. PTX built for an older arch is JIT-compiled by the
    driver for a newer GPU, never the reverse."""
    from ppy_cuda.target import ARCH_ISA

    if options.get("arch"):
        return str(options["arch"])
    found = [
        int(sm[3:].rstrip("af")) for _name, sm in probe().gpus if sm[3:].rstrip("af").isdigit()
    ]
    if not found:
        return DEFAULT_ARCH
    known = sorted(int(a[3:]) for a in ARCH_ISA)
    fitting = [k for k in known if k <= min(found)]
    return f"sm_{fitting[-1] if fitting else known[0]}"


def lower_kernel(
    func: Any, site_id: str, build_dir: Any, options: Mapping[str, Any]
) -> CompiledUnit:
    """The site's unit: `<site>.ptx` and what `ppy_cuda.runtime.load_site` reads."""
    from pathlib import Path

    from ppy_cuda.codegen import kernel_ir, kernel_name
    from ppy_cuda.kernel import kernel_from_func
    from ppy_cuda.target import compile_ptx, find_libdevice, verify_ptx

    kernel = kernel_from_func(func)
    arch = target_arch(options)
    libdevice = find_libdevice(_torch_cuda()) if kernel.functions() else None
    ptx = compile_ptx(kernel_ir(kernel), arch, libdevice=libdevice)
    if probe().ptxas:
        verify_ptx(ptx, arch)
    name = f"{site_id.replace(':', '_').replace('/', '_')}.ptx"
    Path(build_dir, name).write_text(ptx, encoding="utf-8")
    data = {
        "file": name,
        "entry": kernel_name(kernel),
        "dtype": kernel.dtype,
        "leaves": "".join(kernel.leaves),
        "bool": kernel.is_bool(kernel.result),
        "arch": arch,
        "site": site_id,
    }
    return CompiledUnit(backend="cuda", loader=LOADER, files=(name,), data=data)


def _torch_cuda() -> str | None:
    """torch's CUDA version (the libdevice to link must be that toolkit's)."""
    try:
        import torch
    except ImportError:
        return None
    return torch.version.cuda


__all__ = ["CudaBackend", "lower_kernel", "target_arch"]
