"""What JAX build is installed: read once, when a fingerprint first asks."""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass

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


__all__ = ["JaxBuild", "probe"]
