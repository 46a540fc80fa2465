"""Run-time side of fused float64 sites over torch tensors (no compiler code).

A site the `llvm` backend compiled for torch tensors is a ppy-llvm elementwise
kernel plus the dispatcher extension `ppy_torch_fused` (`csrc/fused_site.cpp`),
both in the module's build folder. The loader named in the manifest,

    load_site(data, directory, fallback, record) -> callable

loads the kernel through ppy-llvm's runtime (`ppy_llvm.loader`, ctypes only) and
returns a `ppy_torch_fused.Site`: each call checks the guard in C++ and runs the
kernel, or calls `fallback` (the site's Python) when the guard fails. An error
here leaves the site Python with one warning (the core's binder says which).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Final

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


def load_site(
    data: Mapping[str, Any],
    directory: str | Path,
    fallback: Callable[..., Any],
    record: Mapping[str, Any],
) -> Any:
    """The loader of a fused torch site (`CompiledUnit.loader`): the kernel file and the
    dispatcher are `record["unit"]["files"]`, in that order, inside `directory`."""
    from ppy_llvm.loader import CompiledKernel, KernelSignature, kernel_address

    signature = KernelSignature.from_json(str(data["signature"]))
    if signature.kind != "map" or signature.loops:
        raise ValueError(
            f"a torch site takes an elementwise kernel without library loops, "
            f"not {signature.kind} {list(signature.loops)}"
        )
    files = list(record["unit"]["files"])
    if len(files) < 2:
        raise FileNotFoundError("the site has no torch dispatcher beside its kernel")
    kernel = CompiledKernel(
        str(Path(directory) / files[0]), str(data["symbol"]), signature, str(data["fingerprint"])
    )
    found = kernel_address(kernel)
    if found is None:
        raise OSError(f"{kernel.path} cannot run on this CPU")
    address, keepalive = found
    module = dispatcher(Path(directory) / files[1])
    return make_site(module, address, signature.leaves, fallback, str(record["id"]), keepalive)


def site_stats(site: Any) -> dict[str, Any]:
    """{"fast": n, "fallback": {reason: n}} of a site (as `ppy.stats()` reports it)."""
    return dict(site.ppy_stats())


__all__ = ["MODULE", "dispatcher", "load_site", "make_site", "site_stats"]
