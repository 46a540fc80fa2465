"""The `jax` plugin: what the compiler knows of JAX, Flax (linen) and optax.

This module imports no JAX; `fingerprint()` and `detected()` do, once. The typing
of jax.numpy, the Flax/optax surface and the export of `@jax.jit` functions to
StableHLO land with the JAX issue; today the plugin carries its claims and its
fingerprint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from ppy_core.cache.keys import installed_version
from ppy_core.interface.plugin import CALLS, DecoratorContext, DecoratorSemantics, Plugin
from ppy_jax._probe import probe

if TYPE_CHECKING:
    from ppy_core.ir.core import Dialect


JIT_DECORATORS = frozenset({"jax.jit"})


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

    def decorator_semantics(self, ctx: DecoratorContext) -> DecoratorSemantics | None:
        """`@jax.jit` traces the function with abstract values and calls what XLA
        compiled: its body must stay as written (a dispatcher would see tracers), and
        the function is for this plugin to stage whole."""
        if ctx.qualname in JIT_DECORATORS:
            return DecoratorSemantics(CALLS, "jax traces it and calls the XLA computation")
        return None

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

    def register_dialects(self) -> Sequence[Dialect]:
        """The `stablehlo` dialect (`ppy_jax.dialect`): exported JAX computations."""
        from ppy_jax.dialect import STABLEHLO

        return (STABLEHLO,)


__all__ = ["JaxPlugin"]
