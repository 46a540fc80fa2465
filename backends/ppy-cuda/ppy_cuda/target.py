"""PTX from LLVM IR: the (arch, PTX ISA) check, libdevice, llvmlite's NVPTX target,
and ptxas as the verifier.

A bad (arch, ISA) pair makes LLVM abort the whole process ("LLVM ERROR"), so the
pair is checked against `ARCH_ISA` before LLVM sees it. The ISA is the lowest each
arch allows (LLVM's default), so older drivers load the PTX. `-nvptx-fma-level` is
never set: it is process-wide and would change every other user of LLVM here.
"""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Final

from ppy_cuda._errors import cuda_error
from ppy_cuda._probe import find_ptxas

#: arch -> the lowest PTX ISA LLVM's NVPTX target accepts for it (major, minor)
ARCH_ISA: Final = {
    "sm_70": (6, 0),
    "sm_75": (6, 3),
    "sm_80": (7, 0),
    "sm_86": (7, 1),
    "sm_89": (7, 8),
    "sm_90": (7, 8),
}
#: the PTX ISA versions LLVM 22's NVPTX target knows
KNOWN_ISA: Final = frozenset(
    [(6, m) for m in range(6)] + [(7, m) for m in range(9)] + [(8, m) for m in range(9)]
)
_LOCK = threading.Lock()


def check_target(arch: str, isa: tuple[int, int] | None = None) -> tuple[str, tuple[int, int]]:
    """(arch, ISA) after checking them; raises E2031 for a pair LLVM would abort on."""
    if arch not in ARCH_ISA:
        raise cuda_error("E2031", f"arch {arch!r} is not one of {sorted(ARCH_ISA)}")
    lowest = ARCH_ISA[arch]
    isa = isa or lowest
    if isa not in KNOWN_ISA or isa < lowest:
        raise cuda_error(
            "E2031", f"PTX ISA {isa[0]}.{isa[1]} with {arch} (needs {lowest[0]}.{lowest[1]}+)"
        )
    return arch, isa


@functools.cache
def _llvm() -> object:
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm


def find_libdevice(cuda_version: str | None = None) -> Path | None:
    """libdevice.10.bc of the toolkit `cuda_version` ("13.0"; torch.version.cuda), from
    $PPY_CUDA_LIBDEVICE, /usr/local/cuda-VERSION, or a pip `nvidia-*` wheel of that
    version (nvidia-cuda-nvcc, nvidia-nvvm); with no version, $CUDA_HOME's or
    /usr/local/cuda's. None when none matches: a mismatched libdevice is refused
    (81 of 349 bodies differ between CUDA 12.9 and 13.0)."""
    env = os.environ.get("PPY_CUDA_LIBDEVICE")
    if env:
        return Path(env) if Path(env).is_file() else None
    tail = Path("nvvm") / "libdevice" / "libdevice.10.bc"
    if not cuda_version:
        for root in (os.environ.get("CUDA_HOME", "/usr/local/cuda"), "/usr/local/cuda"):
            if (Path(root) / tail).is_file():
                return Path(root) / tail
        return None
    if (Path(f"/usr/local/cuda-{cuda_version}") / tail).is_file():
        return Path(f"/usr/local/cuda-{cuda_version}") / tail
    return _pip_libdevice(cuda_version)


def _pip_libdevice(cuda_version: str) -> Path | None:
    from importlib import metadata

    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if not name.startswith(("nvidia-cuda-nvcc", "nvidia-nvvm")):
            continue
        if not dist.version.startswith(cuda_version + "."):
            continue
        for file in dist.files or ():
            if str(file).endswith("libdevice.10.bc"):
                return Path(str(dist.locate_file(file)))
    return None


def compile_ptx(
    ir_text: str, arch: str, *, isa: tuple[int, int] | None = None, libdevice: Path | None = None
) -> str:
    """PTX for `arch`. libdevice, when the kernel calls it, is linked in, and the module
    optimised with the target's pipeline (NVVMReflect reads `nvvm-reflect-ftz = 0`)."""
    arch, isa = check_target(arch, isa)
    llvm = _llvm()
    with _LOCK:  # llvmlite's target machines are not shared across threads
        module = llvm.parse_assembly(ir_text)  # type: ignore[attr-defined]
        needs = "@__nv_" in ir_text
        if needs:
            if libdevice is None:
                raise cuda_error("E2034", "the kernel calls libdevice and none was given")
            lib = llvm.parse_bitcode(libdevice.read_bytes())  # type: ignore[attr-defined]
            lib.triple, lib.data_layout = module.triple, module.data_layout
            module.link_in(lib)
        module.verify()
        target = llvm.Target.from_triple(module.triple)  # type: ignore[attr-defined]
        machine = target.create_target_machine(cpu=arch, features=f"+ptx{isa[0]}{isa[1]}", opt=3)
        if needs:
            _optimise(llvm, module, machine)
        return str(machine.emit_assembly(module))


def _optimise(llvm: object, module: object, machine: object) -> None:
    """Run O3 with the NVPTX target's callbacks: it internalises nothing by itself, so
    libdevice's unused bodies are dropped by marking them internal first."""
    for fn in module.functions:  # type: ignore[attr-defined]
        if fn.name.startswith("__nv_") and not fn.is_declaration:
            fn.linkage = "internal"  # type: ignore[attr-defined]
    options = llvm.create_pipeline_tuning_options(speed_level=3)  # type: ignore[attr-defined]
    builder = llvm.create_pass_builder(machine, options)  # type: ignore[attr-defined]
    builder.getModulePassManager().run(module, builder)


def verify_ptx(ptx: str, arch: str) -> None:
    """Assemble `ptx` for `arch` with ptxas (raises E2032 with its message)."""
    ptxas = find_ptxas()
    if ptxas is None:
        raise cuda_error("E2032", "ptxas is not installed (CUDA toolkit)")
    with tempfile.TemporaryDirectory(prefix="ppy-ptx-") as tmp:
        source = Path(tmp) / "k.ptx"
        source.write_text(ptx, encoding="utf-8")
        done = subprocess.run(
            [ptxas, f"-arch={arch}", str(source), "-o", str(Path(tmp) / "k.cubin")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    if done.returncode != 0:
        raise cuda_error("E2032", f"ptxas -arch={arch}: {done.stderr.strip()[:2000]}")


__all__ = ["ARCH_ISA", "check_target", "compile_ptx", "find_libdevice", "verify_ptx"]
