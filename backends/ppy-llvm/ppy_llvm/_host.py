"""The host: LLVM target machine and the backend fingerprint, computed lazily."""

from __future__ import annotations

import functools
import hashlib
from typing import Any, Final

from ._errors import LlvmBackendError

VERSION: Final = "v7"

#: LLVM feature names that GCC's __builtin_cpu_supports also knows (checked at load)
GCC_FEATURES: Final = (
    "sse3",
    "ssse3",
    "sse4.1",
    "sse4.2",
    "popcnt",
    "avx",
    "avx2",
    "fma",
    "bmi",
    "bmi2",
    "f16c",
    "avx512f",
    "avx512cd",
    "avx512dq",
    "avx512bw",
    "avx512vl",
    "avx512ifma",
    "avx512vbmi",
    "avx512vbmi2",
    "avx512vnni",
    "avx512bitalg",
    "avx512vpopcntdq",
    "gfni",
    "vpclmulqdq",
    "vaes",
)


@functools.cache
def llvm() -> Any:
    """llvmlite.binding, initialized for the native target (E2101 if missing)."""
    try:
        import llvmlite.binding as ll
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise LlvmBackendError("E2101", str(exc)) from exc
    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    ll.initialize_native_asmparser()
    return ll


@functools.cache
def host() -> tuple[str, str]:
    """(cpu name, feature string) as LLVM sees this machine."""
    ll = llvm()
    return ll.get_host_cpu_name(), ll.get_host_cpu_features().flatten()


def required_features() -> tuple[str, ...]:
    """Enabled host features a kernel may use that the loader can check."""
    enabled = {f[1:] for f in host()[1].split(",") if f.startswith("+")}
    return tuple(f for f in GCC_FEATURES if f in enabled)


@functools.cache
def fingerprint() -> str:
    """``v2:llvmlite=X:cpu=<sha256 prefix>:features=<sha256 prefix>:llc=<bytes>``,
    without llvmlite.

    It is part of every cache key of a module with NumPy sites, so it is computed
    from package metadata and /proc/cpuinfo (a cached run, and `ppy run`, must not
    import llvmlite). The exact LLVM host CPU and features are recorded in each
    kernel library, which refuses to run on a CPU lacking them."""
    from importlib import metadata

    try:
        version = metadata.version("llvmlite")
    except metadata.PackageNotFoundError:
        version = "none"
    cpu, flags = _cpuinfo()
    cpu_id = hashlib.sha256(cpu.encode()).hexdigest()[:12]
    digest = hashlib.sha256(flags.encode()).hexdigest()[:16]
    return f"{VERSION}:llvmlite={version}:cpu={cpu_id}:features={digest}:llc={llc_bytes()}"


#: the last-level cache assumed where the system does not say (kernels' store choice)
LLC_DEFAULT: Final = 8 << 20


@functools.cache
def llc_bytes() -> int:
    """Bytes of CPU 0's last-level cache (Linux sysfs), else `LLC_DEFAULT`. Map kernels
    choose streaming stores from it (`_kernel_map.nt_min`), so it is in `fingerprint`."""
    from pathlib import Path

    best = (0, 0)
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            best = max(best, (level, int(digits) * scale))
    return best[1] or LLC_DEFAULT


def _cpuinfo() -> tuple[str, str]:
    """(vendor/family/model/name, sorted flags) of the first CPU in /proc/cpuinfo."""
    import platform

    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        return platform.machine() + ":" + platform.processor(), ""
    cpu = ":".join(fields.get(k, "") for k in ("vendor_id", "cpu family", "model", "model name"))
    flags = " ".join(sorted(fields.get("flags", fields.get("Features", "")).split()))
    return cpu or platform.machine(), flags


@functools.cache
def target_machine(opt: int = 3) -> Any:
    """A PIC target machine for the host CPU at -O3 (`opt` 0: the fast instruction
    selector, for code with nothing to optimise: `_hoist`'s wrappers)."""
    ll = llvm()
    cpu, features = host()
    target = ll.Target.from_default_triple()
    return target.create_target_machine(
        cpu=cpu, features=features, opt=opt, reloc="pic", codemodel="default"
    )
