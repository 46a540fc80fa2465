"""`LlvmBackend`: the ``llvm`` entry point of ``ppy.backends``.

It names no array library. A site's library is the `library` of its IR's tensor
types; the kernel is written with the core's kernel ABI (`ppy_core.runtime.abi`)
and its unit names the runtime adapter registered for that library
(`ppy_core.runtime.adapter`, entry point group ``ppy.runtimes``), which guards the
library's objects at run time. The library's proof (its own loops against the
kernel's calls of them) and any file its adapter wants beside the kernel come
from that adapter too, through the core.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from ppy_core.interface.backend import Backend

from ._errors import LlvmBackendError, reason

if TYPE_CHECKING:
    from ppy_core.runtime.abi import CompiledKernel

#: reductions whose NaN results may stand, by the proof's name for their order
NAN_REDUCTIONS = {"add": "sum", "mean": "sum", "mul": "prod"}


class LlvmBackend(Backend):
    """CPU kernels for fused tensor IR, bit-exact with the library of its arrays.

    Nothing happens at construction: llvmlite, the host probe and the
    transcendental proof run on first `fingerprint` / `can_lower` / `lower`.
    """

    name: ClassVar[str] = "llvm"
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """``v1:llvmlite=X:cpu=<sha256 prefix>:features=<sha256 prefix>:abi=N``: the
        kernel ABI's version too, since units are written for it; ``:cost=off`` where
        the cost rule is (`_cost.rule_on`), since it decides which sites build."""
        from ppy_core.runtime.abi import ABI_VERSION

        from ._cost import rule_on
        from ._host import fingerprint

        return f"{fingerprint()}:abi={ABI_VERSION}" + ("" if rule_on() else ":cost=off")

    def read_spec(self, spec: Any) -> str | None:
        """Reads intrinsic specs it implements (the unary functions its kernels lower,
        `_spec.EXACT_UNARY` and `_spec.LOOP_UNARY`); no other kind of spec."""
        from ppy_core.interface.specs import IntrinsicSpec, spec_kind

        from ._spec import EXACT_UNARY, LOOP_UNARY

        if not isinstance(spec, IntrinsicSpec):
            return f"llvm reads no {spec_kind(spec)} spec"
        if spec.name in EXACT_UNARY or spec.name in LOOP_UNARY:
            return None
        return f"llvm implements no intrinsic {spec.name!r}"

    def can_lower(self, func_op: Any) -> str | None:
        """None if `func_op` lowers, else the coded reason it stays with its library."""
        from ppy_core.ir.dialects.loops import is_loops

        if is_loops(func_op):  # typed loops: `_loops`
            from ._loops import loops_refusal

            return loops_refusal(func_op)
        from ._columnar import is_columnar

        if is_columnar(func_op):  # Arrow-style columns: `_columnar`
            return _columnar_refusal(func_op)
        from ._from_ir import spec_from_func

        try:
            spec = spec_from_func(
                func_op, fastmath=bool(getattr(func_op, "attributes", {}).get("fastmath"))
            )
        except LlvmBackendError as exc:
            return reason(exc.code, exc.detail)
        except (KeyError, AttributeError, IndexError) as exc:
            return reason("E2107", f"{type(exc).__name__}: {exc}")
        library, why = _runtime_of(func_op)
        if why:
            return reason("E2108", why)
        from ._proof import inline_proven

        spec = inline_proven(spec, library)  # a proven inline exp calls no loop
        from ._kernel_dtype import f32_loop_refusal

        unproven = f32_loop_refusal(spec)
        if unproven:
            return reason("E2048", unproven)
        refused = _refusal(library, spec)
        if refused:
            return reason("E2108", refused)
        from ._cost import cost_refusal

        costly = cost_refusal(spec)
        if costly:
            return reason("E2109", costly)
        return self.can_lower_spec(spec, library)

    def can_lower_spec(self, spec: Any, library: str) -> str | None:
        """`can_lower` for a `KernelSpec` over arrays of `library`: every library loop it
        calls must be proven by that library's runtime adapter on this build and CPU,
        and so must its abs of complex128 arrays (`_complex`)."""
        from ._complex import complex_unproven, has_complex

        unproven = complex_unproven(library) if has_complex(spec) else None
        if unproven:
            return reason("E2104", unproven)
        loops = spec.loop_ops()
        if not loops:
            return None
        try:
            from ._build import loop_signatures
            from ._proof import proven

            binary = [op for op, sig in loop_signatures(spec) if sig == "dd->d"]
            verdict = proven(library, loops=loops, binary=binary)
        except (LlvmBackendError, LookupError, ImportError, OSError) as exc:
            return reason("E2104", f"{', '.join(loops)} (proof could not run: {exc})")
        bad = [f"{op}: {verdict.get(op, 'not tested')}" for op in loops if verdict.get(op) != "ok"]
        return reason("E2104", "; ".join(bad)) if bad else None

    def lower(self, func_op: Any, ctx: Any = None) -> Any:
        """Compile `func_op` into a kernel in a shared library. With the driver's
        `LowerContext`, the library is copied into its build folder and the answer is
        the core's `CompiledUnit`, bound at run time by the site library's adapter."""
        from ppy_core.ir.dialects.loops import is_loops

        if is_loops(func_op) and ctx is not None:  # typed loops: `_loops`
            from ._loops import lower_loops

            return lower_loops([func_op], ctx)[0]
        kernels = self._compile([func_op], ctx)
        if ctx is None:
            return kernels[0]
        return _units(kernels, [func_op], ctx)[0]

    def lower_module(self, funcs: list[Any], ctx: Any) -> list[Any]:
        """All of a module's sites as kernels of ONE shared library (one LLVM module,
        one `cc` run): a module's cold compile costs one link, not one per site."""
        from ppy_core.ir.dialects.loops import is_loops

        if funcs and all(is_loops(f) for f in funcs):  # typed loops: `_loops`
            from ._loops import lower_loops

            return lower_loops(funcs, ctx)
        return _units(self._compile(funcs, ctx), funcs, ctx)

    def _compile(self, funcs: list[Any], ctx: Any) -> list[CompiledKernel]:
        from ._columnar import is_columnar

        columnar = [k for k, f in enumerate(funcs) if is_columnar(f)]
        if columnar:  # columnar sites apart, tensor sites as below, in the sites' order
            from ._columnar import compile_funcs

            rest = [f for f in funcs if not is_columnar(f)]
            done = dict(zip(columnar, compile_funcs([funcs[k] for k in columnar]), strict=True))
            others = iter(self._compile(rest, ctx) if rest else [])
            return [done[k] if k in done else next(others) for k in range(len(funcs))]
        from ._build import compile_specs
        from ._from_ir import spec_from_func
        from ._proof import inline_proven

        specs = []
        for func_op in funcs:
            why = self.can_lower(func_op)
            if why is not None:
                raise LlvmBackendError("E2103", why)
            fastmath = bool(getattr(ctx, "fastmath", False)) or bool(
                getattr(func_op, "attributes", {}).get("fastmath")
            )
            spec = spec_from_func(func_op, fastmath=fastmath)
            specs.append(inline_proven(spec, _runtime_of(func_op)[0]))  # a proven inline exp
        kernels = compile_specs(specs)
        fastmath = bool(getattr(ctx, "fastmath", False))
        return [
            _nan_ok(spec, kernel, _runtime_of(func_op)[0], fastmath)
            for spec, kernel, func_op in zip(specs, kernels, funcs, strict=True)
        ]


def _runtime_of(func_op: Any) -> tuple[str, str]:
    """(the site's array library, '') or ('', why no runtime adapter can guard it):
    the `library` of its tensor types must be one, with an adapter registered."""

    libraries: set[str] = set()
    for op in getattr(func_op, "walk", lambda: ())():
        for value in [*op.operands, *op.results]:
            library = getattr(value.type, "library", "")
            if library:
                libraries.add(str(library))
    if len(libraries) != 1:
        found = ", ".join(repr(x) for x in sorted(libraries)) or "none"
        return "", f"arrays of one library (found {found})"
    (library,) = libraries
    if not _registered(library, tuple(sys.path)):
        return "", f"arrays of '{library}' (no runtime adapter registered for it)"
    return library, ""


@functools.lru_cache(maxsize=64)
def _registered(library: str, path: tuple[str, ...]) -> bool:
    """`registered(library)` once per search path: asked per site (twice), and each
    answer scans sys.path's folders for metadata (a 1,250-site module: 4 s)."""
    from ppy_core.runtime.adapter import registered

    return registered(library)


def _columnar_refusal(func_op: Any) -> str | None:
    """`can_lower` for a columnar site: its ops lower and its library's adapter calls
    columnar kernels."""
    from ppy_core.runtime.abi import KernelSignature
    from ppy_core.runtime.adapter import adapter

    from ._columnar import ColumnarError, spec_from_func

    try:
        spec = spec_from_func(func_op)
    except ColumnarError as exc:
        return str(exc).partition("\n")[0]
    library, why = _runtime_of(func_op)
    if why:
        return reason("E2108", why)
    try:
        refused = adapter(library).accepts(KernelSignature(spec.result_kind, spec.leaves))
    except LookupError as exc:
        refused = str(exc)
    return reason("E2108", refused) if refused else None


def _refusal(library: str, spec: Any) -> str:
    """Why `library`'s runtime adapter will not call this kernel ('' if it will)."""
    from ppy_core.runtime.adapter import adapter

    from ._build import signature_of

    try:
        return adapter(library).accepts(signature_of(spec)) or ""
    except LookupError as exc:
        return str(exc)


def _nan_ok(spec: Any, kernel: CompiledKernel, library: str, fastmath: bool) -> CompiledKernel:
    """Mark a sum/mean/prod whose NaN bits `library`'s adapter proved its own."""
    if spec.reduce in NAN_REDUCTIONS and not fastmath and not spec.fastmath:
        from ._proof import nan_verdicts

        if nan_verdicts(library).get(NAN_REDUCTIONS[spec.reduce]) == "ok":
            return replace(kernel, signature=replace(kernel.signature, nan_ok=True))
    return kernel


def _units(kernels: list[CompiledKernel], funcs: list[Any], ctx: Any) -> list[Any]:
    """One CompiledUnit per kernel, routed to its library's runtime adapter; each
    library is copied once into the build folder, each adapter's companions made once."""
    from pathlib import Path

    from ppy_core.cache import verified_copy
    from ppy_core.interface.backend import CompiledUnit
    from ppy_core.runtime.adapter import adapter

    copied: dict[str, str] = {}
    companions: dict[str, tuple[str, ...]] = {}
    units = []
    for kernel, func_op in zip(kernels, funcs, strict=True):
        library = _runtime_of(func_op)[0]  # its adapter accepted the kernel (can_lower)
        if library not in companions:
            companions[library] = tuple(adapter(library).companion_files(ctx.build_dir))
        if kernel.path not in copied:
            stem = "".join(c if c.isalnum() else "_" for c in ctx.site_id)
            # a module's columnar and tensor kernels are two libraries: two names
            name = f"{stem}.so" if not copied else f"{stem}_{len(copied)}.so"
            verified_copy(Path(kernel.path), ctx.build_dir / name)  # hash checked first
            copied[kernel.path] = name
        files = (copied[kernel.path], *companions[library])
        units.append(CompiledUnit("llvm", "", files, kernel.unit_data(), runtime=library))
    return units


def create_backend() -> LlvmBackend:
    """Entry point ``ppy.backends: llvm``."""
    return LlvmBackend()
