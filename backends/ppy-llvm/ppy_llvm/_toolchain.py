"""Object code through llvmlite, linked by the system C compiler into a .so.

Libraries live in the core's cache root (`ppy_core.cache.backend_dir("llvm")`),
are built under the core's build lock (a dead builder's lock is broken at once)
and published by an atomic rename, so a killed build never leaves a half-written
library where a finished one is expected.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ppy_core.cache import (
    backend_dir,
    build_lock,
    publish_bytes,
    publish_file,
    verify_build,
    write_if_changed,
)
from ppy_core.interface.progress import step
from ppy_core.runtime.abi import CPU_CHECK_SYMBOL

from ._errors import LlvmBackendError
from ._host import fingerprint, llvm, required_features, target_machine
from ._parallel import emit_in_workers

#: the first line of a module of sites' wrappers (`_hoist`), which `_emit` compiles
#: unoptimised: tail calls only
WRAPPERS: Final = "; ppy-llvm: sites' wrappers (tail calls, compiled unoptimised)\n"


def cache_dir() -> Path:
    """The llvm folder of the core's cache root (created)."""
    return backend_dir("llvm")


def find_cc() -> str:
    """The C compiler used to link (``$CC`` or cc/gcc/clang); E2102 if none."""
    for cand in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cand and shutil.which(cand.split()[0]):
            return cand
    raise LlvmBackendError("E2102", "none of $CC, cc, gcc, clang found")


def cpu_check_source() -> str:
    """C source of the ABI's ``int CPU_CHECK_SYMBOL(void)``: 1 iff the CPU has the features used."""
    checks = " && ".join(f'__builtin_cpu_supports("{f}")' for f in required_features()) or "1"
    return f"int {CPU_CHECK_SYMBOL}(void) {{ __builtin_cpu_init(); return {checks}; }}\n"


def optimize(module: object) -> None:
    """Run LLVM's O3 pipeline on `module` (strictfp functions keep their semantics)."""
    ll = llvm()
    pto = ll.create_pipeline_tuning_options(speed_level=3)
    pb = ll.create_pass_builder(target_machine(), pto)
    pm = pb.getModulePassManager()
    pm.run(module, pb)


def build_shared(ir_text: str, name: str) -> Path:
    """Compile `ir_text` into ``<cache>/<name>-<sha>.so``; reuse if present."""
    key = hashlib.sha256(
        (fingerprint() + "\0" + ir_text + cpu_check_source()).encode()
    ).hexdigest()[:24]
    out = cache_dir() / f"{name}-{key}.so"
    if verify_build(out):  # reused only with the hash recorded when it was built
        return out
    with build_lock(out.with_suffix(".lock")):
        if not verify_build(out):  # the holder we waited for may have built it
            _compile(ir_text, out)
    return out


def build_linked(modules: Sequence[str], name: str) -> Path:
    """One library ``<cache>/<name>-<sha>.so`` of the LLVM modules `modules` (one per
    kernel), each compiled to an object cached by its own content
    (``obj-<sha>.o``): a module's library is one link, and after a one-line edit only
    the kernels whose text changed go through LLVM again, the rest are linked from
    their objects."""
    keys = [_key(text) for text in modules]
    key = hashlib.sha256(("\0".join(keys) + cpu_check_source()).encode()).hexdigest()[:24]
    out = cache_dir() / f"{name}-{key}.so"
    if verify_build(out):
        return out
    with build_lock(out.with_suffix(".lock")):
        if not verify_build(out):
            folder = cache_dir()
            todo = [
                (text, k)
                for text, k in zip(modules, keys, strict=True)
                if not verify_build(folder / f"obj-{k}.o")
            ]
            step(f"compiling {len(todo)} kernels" if todo else "linking kernels")
            # many kernels to compile: on every CPU (`_parallel`), the same objects
            emit_in_workers(todo, folder, _object)
            objects = [_object(text, k) for text, k in zip(modules, keys, strict=True)]
            _link(objects, out)
    return out


def _key(ir_text: str) -> str:
    return hashlib.sha256((fingerprint() + "\0" + ir_text).encode()).hexdigest()[:24]


def _object(ir_text: str, key: str) -> Path:
    """The object code of one module, from the cache or compiled (and published)."""
    path = cache_dir() / f"obj-{key}.o"
    if not verify_build(path):  # published atomically: two builders write equal bytes
        publish_bytes(path, _emit(ir_text, path.with_suffix(".ll")))
    return path


def _emit(ir_text: str, ir_path: Path) -> bytes:
    """`ir_text` parsed, verified, optimised (O3) and compiled to object code; the IR
    is saved at `ir_path` for the error when it does not parse (E2107). A module of
    sites' wrappers (`WRAPPERS`), tail calls only, is compiled as it is, by
    the fast instruction selector: at -O3 LLVM spent ~1 ms a wrapper on them."""
    ll = llvm()
    try:
        module = ll.parse_assembly(ir_text)
        module.verify()
    except RuntimeError as exc:
        write_if_changed(ir_path, ir_text)
        raise LlvmBackendError("E2107", f"{exc} (IR saved at {ir_path})") from exc
    if ir_text.startswith(WRAPPERS):
        return bytes(target_machine(0).emit_object(module))
    optimize(module)
    return bytes(target_machine().emit_object(module))


def _compile(ir_text: str, out: Path) -> None:
    ir_path = out.with_suffix(".ll")
    write_if_changed(ir_path, ir_text)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        obj_path = Path(tmp) / "k.o"
        obj_path.write_bytes(_emit(ir_text, ir_path))
        _link([obj_path], out)


def _link(objects: Sequence[Path], out: Path) -> None:
    """`objects` and the CPU check linked by the C compiler into `out` (published)."""
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        c_path = Path(tmp) / "cpu.c"
        c_path.write_text(cpu_check_source())
        so_tmp = Path(tmp) / "k.so"
        cmd = [
            *find_cc().split(),
            "-shared",
            "-O2",
            "-fPIC",
            "-o",
            str(so_tmp),
            *(str(o) for o in objects),
            str(c_path),
            "-lm",  # <fenv.h>'s fetestexcept/feraiseexcept around other libraries' loops
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            log = out.with_suffix(".log")
            log.write_text(" ".join(cmd) + "\n" + proc.stdout + proc.stderr)
            raise LlvmBackendError(
                "E2106",
                f"{cmd[0]} exited {proc.returncode}; log at {log}, IR at {out.with_suffix('.ll')}",
            )
        publish_file(so_tmp, out)
