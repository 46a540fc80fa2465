"""The `torch` plugin: types `torch.Tensor`, stages whole functions as ATen regions.

A function at opt level 3 whose body is curated torch operations becomes a
`GraphRegionSpec(backend="aten", graph=RegionGraph)`; anything else is a
`FallbackSpec` whose reason `ppy explain` shows, and a region that writes memory
in a `@ppy.pure` function is a `RejectSpec` (E1010). Float64 arithmetic on
tensors converges onto the tensor dialect (`operator`, `tensor_operation`; see
`ppy_torch.fusion`) for the `llvm` backend to fuse.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from ppy_core.interface.plugin import (
    TRANSPARENT,
    AttributeContext,
    CallAnswer,
    CallContext,
    Converge,
    DecoratorContext,
    DecoratorSemantics,
    FunctionContext,
    OperatorContext,
    Plugin,
)
from ppy_core.interface.specs import FallbackSpec, GraphRegionSpec, LoweringSpec, RejectSpec
from ppy_core.ir.types import I64, OpaqueType, Type
from ppy_torch import checks, fusion, ops, surface
from ppy_torch.errors import PURE_WRITES, register_codes
from ppy_torch.graph import RegionGraph
from ppy_torch.stage import StageInput, StageRefusal, stage_graph

if TYPE_CHECKING:
    from ppy_core.ir.core import Dialect

# `tensor<*xf64, "torch">`: a region is dtype-generic (it ignores the element type);
# a fused arithmetic site assumes float64 and its run-time guard checks it.
TENSOR_TYPE = fusion.TENSOR
REGION_OPT_LEVEL = 3
#: decorators that only set autograd's thread-local mode around the call. Compiled code
#: honours that mode: a region's at:: calls go through the dispatcher, which records
#: autograd only while grad mode is on, and a fused kernel's guard reads it. So they
#: stay applied, around the dispatcher, and the function compiles as if undecorated.
GRAD_MODE_DECORATORS = frozenset(
    {
        "torch.no_grad",
        "torch.enable_grad",
        "torch.inference_mode",
        "torch.set_grad_enabled",
        "torch.autograd.no_grad",
        "torch.autograd.enable_grad",
        "torch.autograd.inference_mode",
        "torch.autograd.set_grad_enabled",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.enable_grad",
        "torch.autograd.grad_mode.inference_mode",
        "torch.autograd.grad_mode.set_grad_enabled",
    }
)


class TorchPlugin(Plugin):
    """Plugin `torch`: ATen regions over the curated surface (`CURATED_OPS`)."""

    name: ClassVar[str] = "torch"
    modules: ClassVar[tuple[str, ...]] = ("torch",)
    version: ClassVar[str] = "2"  # 2: float64 arithmetic converges (fused sites)

    def __init__(self) -> None:
        register_codes()

    @functools.cache  # noqa: B019 (one plugin object per process)
    def fingerprint(self) -> str:
        """`v2:torch=<version>:cxx11abi=<0|1>:cuda=<version|none>`: the plugin's own
        version (what converges) and the torch build (what a region is built for)."""
        from ppy_torch.toolchain import torch_build

        return plugin_fingerprint(self.version, torch_build().fingerprint)

    def detected(self) -> Mapping[str, str]:
        from ppy_torch.toolchain import torch_build

        build = torch_build()
        return {
            "torch": build.version,
            "cxx11abi": str(int(build.cxx11abi)),
            "cuda": build.cuda or "none",
            "curated ops": str(len(ops.CURATED_OPS)),
            "aten calls": str(len(ops.ATEN_CALLS)),
        }

    def register_dialects(self) -> Sequence[Dialect]:
        """The `aten` dialect (`ppy_torch.dialect`): ATen calls, as regions are written."""
        from ppy_torch.dialect import ATEN

        return (ATEN,)

    def external_types(self) -> Mapping[str, Type]:
        return {
            "torch.Tensor": TENSOR_TYPE,
            "torch.nn.Parameter": TENSOR_TYPE,
            "torch.device": OpaqueType("torch.device"),
            "torch.dtype": OpaqueType("torch.dtype"),
        }

    def call(self, ctx: CallContext) -> CallAnswer | None:
        aten = ops.CURATED_OPS.get(ctx.callee)
        if aten is None:
            return surface.call(ctx)  # seeding, factories, CUDA queries, backward()
        checks.check_arity(ctx, aten)
        sig = ops.ATEN_CALLS[aten].signatures[0]
        result: Type = TENSOR_TYPE if sig.returns == "Tensor" else I64  # `x.size(0)`
        return CallAnswer(result=result, effects=sig.effects)

    def attribute_type(self, ctx: AttributeContext) -> Type | None:
        return surface.attribute_type(ctx)

    def instance_attribute(self, ctx: AttributeContext) -> Type | None:
        return surface.instance_attribute(ctx)

    def operator(self, ctx: OperatorContext) -> Converge | Type | None:
        return fusion.converge_operator(ctx)

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        return fusion.converge_call(ctx)

    def decorator_semantics(self, ctx: DecoratorContext) -> DecoratorSemantics | None:
        """Grad-mode decorators are transparent (see GRAD_MODE_DECORATORS)."""
        if ctx.qualname in GRAD_MODE_DECORATORS:
            return DecoratorSemantics(TRANSPARENT, "it sets grad mode, which compiled code honours")
        return None

    def stage(self, ctx: FunctionContext) -> LoweringSpec | None:
        if ctx.described:  # a specialization: an nn.Module's method, typed by its instance
            from ppy_torch.modules import method_spec

            found = method_spec(ctx)
            if found is not None:
                return found
        if ctx.opt < REGION_OPT_LEVEL:
            return None
        src = StageInput(ctx.node, ctx.resolve, ctx.decorators, ctx.module.path)
        return stage_spec(src, pure=ctx.pure)


def plugin_fingerprint(version: str, build: str) -> str:
    """The torch build's fingerprint with the plugin's version in front."""
    return f"v{version}:{build.split(':', 1)[1]}"


def stage_spec(src: StageInput, *, pure: bool = False) -> LoweringSpec:
    """GraphRegionSpec for a function that qualifies, else why not."""
    try:
        graph: RegionGraph = stage_graph(src)
    except StageRefusal as refusal:
        return FallbackSpec(f"not an ATen region: {refusal}")
    if pure and graph.writes:
        return RejectSpec(
            PURE_WRITES,
            f"{graph.name}: writes through a parameter (copy_) in a @ppy.pure function",
            hint="remove @ppy.pure, or return a new tensor instead of writing",
        )
    return GraphRegionSpec(backend="aten", graph=graph, effects=graph.effects)


__all__ = ["TorchPlugin", "stage_spec", "plugin_fingerprint", "TENSOR_TYPE"]
