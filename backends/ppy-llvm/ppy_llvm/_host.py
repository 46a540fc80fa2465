"""The host: LLVM target machine and the backend fingerprint, computed lazily."""

from __future__ import annotations

import functools
import hashlib
from typing import Any, Final

from ._errors import LlvmBackendError

VERSION: Final = "v1"

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
    """``v1:llvm=X.Y.Z:cpu=NAME:features=<sha256 prefix>``."""
    ll = llvm()
    cpu, features = host()
    version = ".".join(map(str, ll.llvm_version_info))
    digest = hashlib.sha256(features.encode()).hexdigest()[:16]
    return f"{VERSION}:llvm={version}:cpu={cpu}:features={digest}"


@functools.cache
def target_machine() -> Any:
    """A PIC target machine for the host CPU at -O3."""
    ll = llvm()
    cpu, features = host()
    target = ll.Target.from_default_triple()
    return target.create_target_machine(
        cpu=cpu, features=features, opt=3, reloc="pic", codemodel="default"
    )
