"""`LlvmBackend`: the ``llvm`` entry point of ``ppy.backends``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

from ppy_core.interface.backend import Backend

from ._errors import LlvmBackendError, reason
from .loader import CompiledKernel

#: reductions whose NaN results may stand, by the proof's name for their order
NAN_REDUCTIONS = {"add": "sum", "mean": "sum", "mul": "prod"}


class LlvmBackend(Backend):
    """CPU kernels for fused NumPy tensor IR, bit-exact with NumPy.

    Nothing happens at construction: llvmlite, the host probe and the
    transcendental proof run on first `fingerprint` / `can_lower` / `lower`.
    """

    name: ClassVar[str] = "llvm"
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """``v1:llvm=X:cpu=NAME:features=<sha256 prefix>``."""
        from ._host import fingerprint

        return fingerprint()

    def can_lower(self, func_op: Any) -> str | None:
        """None if `func_op` lowers, else the coded reason it stays NumPy."""
        from ._from_ir import spec_from_func

        foreign = _foreign_library(func_op)
        if foreign:
            return reason("E2108", f"arrays of '{foreign}'")
        try:
            spec = spec_from_func(
                func_op, fastmath=bool(getattr(func_op, "attributes", {}).get("fastmath"))
            )
        except LlvmBackendError as exc:
            return reason(exc.code, exc.detail)
        except (KeyError, AttributeError, IndexError) as exc:
            return reason("E2107", f"{type(exc).__name__}: {exc}")
        return self.can_lower_spec(spec)

    def can_lower_spec(self, spec: Any) -> str | None:
        """`can_lower` for a `KernelSpec`: every NumPy loop it calls must be proven."""
        loops = spec.loop_ops()
        if not loops:
            return None
        try:
            from ._proof import proven

            verdict = proven()
        except (LlvmBackendError, ImportError, OSError) as exc:
            return reason("E2104", f"{', '.join(loops)} (proof could not run: {exc})")
        bad = [
            f"np.{op}: {verdict.get(op, 'not tested')}" for op in loops if verdict.get(op) != "ok"
        ]
        return reason("E2104", "; ".join(bad)) if bad else None

    def lower(self, func_op: Any, ctx: Any = None) -> Any:
        """Compile `func_op` into a kernel in a shared library. With the driver's
        `LowerContext`, the library is copied into its build folder and the answer is
        the core's `CompiledUnit` (loaded at run time by `ppy_llvm.loader:load_site`)."""
        kernels = self._compile([func_op], ctx)
        if ctx is None:
            return kernels[0]
        return _units(kernels, [func_op], ctx)[0]

    def lower_module(self, funcs: list[Any], ctx: Any) -> list[Any]:
        """All of a module's sites as kernels of ONE shared library (one LLVM module,
        one `cc` run): a module's cold compile costs one link, not one per site."""
        return _units(self._compile(funcs, ctx), funcs, ctx)

    def _compile(self, funcs: list[Any], ctx: Any) -> list[CompiledKernel]:
        from ._build import compile_specs
        from ._from_ir import spec_from_func

        specs = []
        for func_op in funcs:
            why = self.can_lower(func_op)
            if why is not None:
                raise LlvmBackendError("E2103", why)
            fastmath = bool(getattr(ctx, "fastmath", False)) or bool(
                getattr(func_op, "attributes", {}).get("fastmath")
            )
            specs.append(spec_from_func(func_op, fastmath=fastmath))
        kernels = compile_specs(specs)
        return [
            _nan_ok(spec, kernel, bool(getattr(ctx, "fastmath", False)))
            for spec, kernel in zip(specs, kernels, strict=True)
        ]

    def load(self, kernel: CompiledKernel) -> tuple[int, object] | None:
        """Runtime side (no llvmlite): (address, keepalive) or None -> NumPy."""
        from .loader import kernel_address

        return kernel_address(kernel)


#: array libraries whose run-time guard and dispatcher this backend's loader has
RUNTIMES: dict[str, str] = {
    "numpy": "ppy_llvm.loader:load_site",
    "": "ppy_llvm.loader:load_site",
    "torch": "ppy_torch.fused:load_site",
}
#: loaders that need a companion file built beside the kernel (the torch dispatcher):
#: "module:function" called with the build folder, returning the file names it wrote
COMPANIONS: dict[str, str] = {"ppy_torch.fused:load_site": "ppy_torch.fused_build:companion_files"}


def _library(func_op: Any) -> str:
    """The tensor library of the site (the first non-empty `library` of its values)."""
    for op in getattr(func_op, "walk", lambda: ())():
        for value in [*op.operands, *op.results]:
            library = getattr(value.type, "library", "")
            if library:
                return library
    return ""


def _foreign_library(func_op: Any) -> str:
    """The first tensor library among the function's arguments with no runtime here."""
    for op in getattr(func_op, "walk", lambda: ())():
        for value in [*op.operands, *op.results]:
            library = getattr(value.type, "library", "")
            if library not in RUNTIMES:
                return library
    return ""


def _nan_ok(spec: Any, kernel: CompiledKernel, fastmath: bool) -> CompiledKernel:
    """Mark a sum/mean/prod whose NaN bits are proven NumPy's on this build."""
    if spec.reduce in NAN_REDUCTIONS and not fastmath and not spec.fastmath:
        from ._proof import nan_verdicts

        if nan_verdicts().get(NAN_REDUCTIONS[spec.reduce]) == "ok":
            return replace(kernel, signature=replace(kernel.signature, nan_ok=True))
    return kernel


def _units(kernels: list[CompiledKernel], funcs: list[Any], ctx: Any) -> list[Any]:
    """One CompiledUnit per kernel; each library is copied once into the build folder."""
    import importlib
    import shutil

    from ppy_core.interface.backend import CompiledUnit

    copied: dict[str, str] = {}
    companions: dict[str, tuple[str, ...]] = {}
    units = []
    for kernel, func_op in zip(kernels, funcs, strict=True):
        if kernel.path not in copied:
            name = "".join(c if c.isalnum() else "_" for c in ctx.site_id) + ".so"
            shutil.copyfile(kernel.path, ctx.build_dir / name)
            copied[kernel.path] = name
        loader = RUNTIMES.get(_library(func_op), RUNTIMES[""])
        companion = COMPANIONS.get(loader)
        if companion is not None and loader not in companions:
            module, _, function = companion.partition(":")
            built = getattr(importlib.import_module(module), function)(ctx.build_dir)
            companions[loader] = tuple(built)
        data = {
            "symbol": kernel.symbol,
            "signature": kernel.signature.to_json(),
            "fingerprint": kernel.fingerprint,
        }
        files = (copied[kernel.path], *companions.get(loader, ()))
        units.append(CompiledUnit("llvm", loader, files, data))
    return units


def create_backend() -> LlvmBackend:
    """Entry point ``ppy.backends: llvm``."""
    return LlvmBackend()
