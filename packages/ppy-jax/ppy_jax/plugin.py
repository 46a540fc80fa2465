"""The `jax` plugin: what the compiler knows of JAX, Flax (linen) and optax.

This module imports no JAX; `fingerprint()` and `detected()` do, once. The answers
about calls are in `surface` (jax.numpy named but never fused, Flax linen, optax)
and `pytrees` (tree utilities, keys, transforms, an Array's methods and operators);
the build-time export of `@jax.jit` / `@ppy.jax` functions is in `staging`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ppy_core.cache.keys import installed_version
from ppy_core.interface.plugin import (
    CALLS,
    TRANSPARENT,
    AttributeContext,
    CallAnswer,
    CallContext,
    ClassContext,
    Converge,
    DecoratorContext,
    DecoratorSemantics,
    FunctionContext,
    OperatorContext,
    Plugin,
)
from ppy_jax import pytrees, surface
from ppy_jax._probe import probe

if TYPE_CHECKING:
    from ppy_core.interface.specs import LoweringSpec
    from ppy_core.ir.core import Dialect
    from ppy_core.ir.types import Type


JIT_DECORATORS = frozenset({"jax.jit"})


class JaxPlugin(Plugin):
    """Teaches the compiler JAX (claims `jax`, `flax` and `optax`)."""

    name: ClassVar[str] = "jax"
    modules: ClassVar[tuple[str, ...]] = ("jax", "flax", "optax")
    version: ClassVar[str] = "1"

    def __init__(self) -> None:
        # project classes on a Flax/optax base, by qualified name (`class_type`): a
        # class's answer is read from source, the same each time it is asked
        self._classes: dict[str, Type] = {}

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
        if ctx.qualname == "flax.linen.compact":  # sets `fun.compact = True`, returns fun
            return DecoratorSemantics(TRANSPARENT, "marks the method that builds submodules")
        return None

    def external_types(self) -> Mapping[str, Type]:
        """`jax.Array`, and the Flax/optax objects the plugin names (`surface`)."""
        return surface.EXTERNAL_TYPES

    def class_type(self, ctx: ClassContext) -> Type | None:
        """`class Mlp(nn.Module)`: its instances are Flax Modules, so `Mlp().init(...)`
        is asked as `flax.linen.Module.init`, resolved through the external base."""
        found = surface.class_type(ctx.bases, self._classes)
        if found is not None:
            self._classes[ctx.qualname] = found
        return found

    def call(self, ctx: CallContext) -> CallAnswer | None:
        """jax.numpy (never fused), jax.nn, Flax linen and optax (`surface`); a project
        class typed by `class_type` builds an instance of its type."""
        if ctx.callee in self._classes:
            return CallAnswer(self._classes[ctx.callee])
        return surface.call(ctx) or pytrees.call(ctx)

    def operator(self, ctx: OperatorContext) -> Converge | Type | None:
        """Operators on JAX Arrays are typed (an Array), never fused: eager JAX runs them."""
        return pytrees.operator(ctx)

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        """`jnp.add` is `tensor.add`: named for the checker and `ppy explain`."""
        return surface.tensor_operation(ctx)

    def instance_attribute(self, ctx: AttributeContext) -> Type | None:
        """A TrainState's fields."""
        return surface.instance_attribute(ctx.owner_type, ctx.name)

    def validate_options(self, options: Mapping[str, Any]) -> Mapping[str, str]:
        """`export-timeout` (seconds, > 0): the time limit of one build-time export."""
        bad: dict[str, str] = {}
        for key, value in options.items():
            if key != "export-timeout":
                bad[key] = "the jax plugin's only option is export-timeout (seconds)"
            elif isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                bad[key] = f"is {value!r}: write a number of seconds above 0"
        return bad

    def stage(self, ctx: FunctionContext) -> LoweringSpec | None:
        """A `@jax.jit` or `@ppy.jax` function is exported to StableHLO at build time
        (`ppy_jax.staging`), under the project's build-execution policy."""
        from ppy_jax.staging import stage_export, wants_export

        if not wants_export(ctx):
            return None
        return stage_export(ctx)

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
