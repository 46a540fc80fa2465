"""KernelSpecs -> one shared library of kernels (the compile-time side)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ppy_core.runtime.abi import CompiledKernel, KernelSignature

from ._host import fingerprint
from ._kernels import emit_kernel, module_text
from ._lower import Lowering, default_lowerings
from ._spec import KernelSpec
from ._toolchain import build_shared


def symbol_of(spec: KernelSpec) -> str:
    """The kernel's symbol: a prefix of the spec's sha256."""
    return f"ppy_k_{spec.key()[:20]}"


def signature_of(spec: KernelSpec) -> KernelSignature:
    """The dispatcher's view of a kernel."""
    leaves = "".join("a" if k == "array" else "s" for k in spec.leaves)
    loops = tuple((op, "dd->d" if op == "power" else "d->d") for op in spec.loop_ops())
    return KernelSignature(spec.result_kind, leaves, loops)


def compile_specs(
    specs: Sequence[KernelSpec],
    name: str = "kernels",
    lowerings: Mapping[str, Lowering] | None = None,
) -> list[CompiledKernel]:
    """Compile every spec into one .so (cached by content) and describe each kernel."""
    table = dict(lowerings) if lowerings is not None else default_lowerings()
    decls: set[str] = set()
    bodies: dict[str, str] = {}
    for spec in specs:
        sym = symbol_of(spec)
        if sym not in bodies:
            bodies[sym] = emit_kernel(spec, sym, table, decls)
    path = build_shared(module_text(list(bodies.values()), decls), name)
    fp = fingerprint()
    return [CompiledKernel(str(path), symbol_of(s), signature_of(s), fp) for s in specs]
