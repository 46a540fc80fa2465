"""The `torch` runtime adapter: fused float64 kernels over torch tensors.

Registered as ``ppy.runtimes: torch``. A site whose tensors are torch's is compiled
by a backend into a kernel of the core's kernel ABI (`ppy_core.runtime.abi`), an
elementwise ``map`` over float64 buffers; this adapter never learns which backend
made it. It needs the dispatcher extension `ppy_torch_fused` (`csrc/fused_site.cpp`)
beside the kernel: at build time `companion_files` builds it (through
`ppy_torch.fused_build`, imported only then) and copies it into the build folder; at
run time `kernel_site` loads it from the unit's files and returns a
`ppy_torch_fused.Site`: each call checks the guard in C++ and runs the kernel, or
calls the site's Python when the guard fails. Nothing here imports compiler code or
torch until a site is bound.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Final

from ppy_core.runtime.abi import KernelSignature, LoadedKernel
from ppy_core.runtime.adapter import RuntimeAdapter
from ppy_torch.runtime import load_extension

MODULE: Final = "ppy_torch_fused"


def dispatcher(path: str | Path) -> ModuleType:
    """The `ppy_torch_fused` extension at `path` (loaded once per path)."""
    return load_extension(MODULE, Path(path))


def make_site(
    module: ModuleType,
    address: int,
    leaves: str,
    fallback: Callable[..., Any],
    site_id: str,
    keepalive: object = None,
) -> Any:
    """A guarded site: `leaves` has 'a' per tensor operand, 's' per float64 scalar."""
    return module.Site(address, leaves, fallback, site_id, keepalive)


class TorchAdapter(RuntimeAdapter):
    """Elementwise float64 kernels over contiguous CPU tensors, guarded in C++."""

    name: ClassVar[str] = "torch"

    def accepts(self, signature: KernelSignature) -> str | None:
        """Only loop-free ``map`` kernels: torch's reductions and transcendentals are
        not the loops and orders a kernel of the ABI calls."""
        if signature.kind != "map" or signature.loops:
            loops = [name for name, _ in signature.loops]
            return (
                "a torch site takes an elementwise kernel without loops, "
                f"not {signature.kind} {loops}"
            )
        return None

    def describer(self, cls: type) -> Callable[[Any], tuple[Any, ...]] | None:
        """An `nn.Module` is described by its module tree (`ppy_torch.describe`), so its
        methods specialize on it; tensors are left to the regions' own guards."""
        from ppy_torch.describe import describer

        return describer(cls)

    def companion_files(self, build_dir: Path) -> tuple[str, ...]:
        """The dispatcher, built once per torch build and copied into `build_dir`."""
        from ppy_torch.fused_build import companion_files

        return companion_files(build_dir)

    def kernel_site(self, kernel: LoadedKernel, fallback: Callable[..., Any], site_id: str) -> Any:
        """A `ppy_torch_fused.Site` around `kernel`, its dispatcher among the unit's files."""
        refused = self.accepts(kernel.signature)
        if refused:
            raise ValueError(refused)
        found = [f for f in kernel.files[1:] if f.startswith(f"{MODULE}.")]
        if not found:
            raise FileNotFoundError(f"the site has no {MODULE} dispatcher beside its kernel")
        module = dispatcher(kernel.directory / found[0])
        # a 'w' leaf (an operand assumed an array that NumPy's dispatcher may also take as
        # a float) is a tensor operand here: anything else fails the guard and runs torch
        leaves = kernel.signature.leaves.replace("w", "a")
        return make_site(module, kernel.address, leaves, fallback, site_id, kernel.keepalive)


def create_adapter() -> TorchAdapter:
    """Entry point ``ppy.runtimes: torch``."""
    return TorchAdapter()


def site_stats(site: Any) -> dict[str, Any]:
    """{"fast": n, "fallback": {reason: n}} of a site (as `ppy.stats()` reports it)."""
    return dict(site.ppy_stats())


__all__ = ["MODULE", "TorchAdapter", "create_adapter", "dispatcher", "make_site", "site_stats"]
