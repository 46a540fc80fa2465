"""The `jax` plugin: what the compiler knows of JAX, Flax (linen) and optax.

This module imports no JAX; `fingerprint()` and `detected()` do, once. The typing
of jax.numpy, the Flax/optax surface and the export of `@jax.jit` functions to
StableHLO land with the JAX issue; today the plugin carries its claims and its
fingerprint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from ppy_core.cache.keys import installed_version
from ppy_core.interface.plugin import Plugin
from ppy_jax._probe import probe


class JaxPlugin(Plugin):
    """Teaches the compiler JAX (claims `jax`, `flax` and `optax`)."""

    name: ClassVar[str] = "jax"
    modules: ClassVar[tuple[str, ...]] = ("jax", "flax", "optax")
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """`v1:jax=V:jaxlib=V:platform=P:flax=V|none:optax=V|none`."""
        build = probe()
        if build is None:
            return f"v{self.version}:jax=none"
        flax = installed_version("flax") or "none"
        optax = installed_version("optax") or "none"
        return (
            f"v{self.version}:jax={build.jax}:jaxlib={build.jaxlib}:platform={build.platform}"
            f":flax={flax}:optax={optax}"
        )

    def detected(self) -> Mapping[str, str]:
        """JAX's and jaxlib's versions, the default platform and its devices."""
        build = probe()
        if build is None:
            return {"jax": "not installed"}
        return {
            "jax": f"{build.jax} ({build.path})",
            "jaxlib": build.jaxlib,
            "platform": f"{build.platform}: {build.devices}",
            "flax": installed_version("flax") or "not installed",
            "optax": installed_version("optax") or "not installed",
        }


__all__ = ["JaxPlugin"]
