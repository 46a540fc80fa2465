"""What JAX build is installed: read once, when a fingerprint first asks."""

from __future__ import annotations

import functools
import hashlib
import importlib
import platform as _platform
from dataclasses import dataclass
from pathlib import Path

from ppy_core.cache.keys import installed_version


@dataclass(frozen=True, slots=True)
class JaxBuild:
    """The JAX found: versions, default platform, StableHLO calling conventions."""

    jax: str
    jaxlib: str
    path: str
    platform: str
    devices: str
    calling_conventions: tuple[int, int] | None  # jax.export's (minimum, maximum)


@functools.cache
def probe() -> JaxBuild | None:
    """Import JAX and read its build; None when JAX is not installed."""
    try:
        jax = importlib.import_module("jax")
    except ImportError:
        return None
    try:
        platform = str(jax.default_backend())
        devices = ", ".join(sorted({str(d.device_kind) for d in jax.devices()}))
    except Exception as exc:  # no usable backend: still a build, with nothing to run on
        platform, devices = "none", f"no backend ({type(exc).__name__}: {exc})"
    conventions: tuple[int, int] | None = None
    try:
        export = importlib.import_module("jax.export")
        conventions = (
            int(export.minimum_supported_calling_convention_version),
            int(export.maximum_supported_calling_convention_version),
        )
    except (ImportError, AttributeError):
        conventions = None
    return JaxBuild(
        jax=str(jax.__version__),
        jaxlib=installed_version("jaxlib") or "none",
        path=str(getattr(jax, "__file__", "?")),
        platform=platform,
        devices=devices,
        calling_conventions=conventions,
    )


@functools.cache
def cpu_identity() -> str:
    """A short hash of this CPU's model and features: a compiled XLA executable is
    valid only on the CPU (and jaxlib build) it was compiled for."""
    text = _platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key = line.split(":", 1)[0].strip()
            if key in ("model name", "flags", "Features", "CPU part"):
                text += "\n" + line
                if key in ("flags", "Features"):
                    break  # the first processor's lines are enough
    except OSError:
        text += _platform.processor()
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def executable_key() -> str:
    """What a stored compiled executable must match to be loaded: the jaxlib build,
    the platform and its devices, and the CPU. '' when JAX is not installed."""
    build = probe()
    if build is None:
        return ""
    return (
        f"jaxlib={build.jaxlib}:platform={build.platform}:devices={build.devices}"
        f":cpu={cpu_identity()}"
    )


__all__ = ["JaxBuild", "cpu_identity", "executable_key", "probe"]
