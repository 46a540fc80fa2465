"""torch's surface around the operations: what a program calls and reads that no region
stages (seeding, threads, factories, CUDA queries, a tensor's flags and autograd), typed
so `ppy check --strict` knows it without reading torch's sources or stubs.

Each entry says what the call returns and what it does: the factories and
`manual_seed` advance or reset the global generator (they write state a later call
reads), `backward()` writes `.grad` on the leaves, `synchronize()` waits on the device.
A call with an effect ends a fused site, so the compiler never moves one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ppy_core.interface.plugin import AttributeContext, CallAnswer, CallContext
from ppy_core.ir.types import I1, I64, NONE, OpaqueType, TensorType, Type, UnionType
from ppy_torch.fusion import LIBRARY, TENSOR

STR: Final = OpaqueType("builtins.str")
DEVICE: Final = OpaqueType("torch.device")
DTYPE: Final = OpaqueType("torch.dtype")
GENERATOR: Final = OpaqueType("torch._C.Generator")
SIZE: Final = OpaqueType("torch.Size")
PURE: Final = frozenset({"Pure"})
STATE: Final = frozenset({"WriteMemory"})  # the global generator, thread count, .grad
WAITS: Final = frozenset({"IO"})
#: factories: a new tensor from sizes (dtype/device/requires_grad by keyword)
FACTORIES: Final = frozenset(
    {"randn", "rand", "randint", "zeros", "ones", "empty", "full", "arange", "linspace", "eye"}
)
RANDOM: Final = frozenset({"randn", "rand", "randint"})
FUNCTIONS: Final[Mapping[str, tuple[Type, frozenset[str]]]] = {
    "torch.manual_seed": (GENERATOR, STATE),
    "torch.seed": (I64, STATE),
    "torch.set_num_threads": (NONE, STATE),
    "torch.get_num_threads": (I64, PURE),
    "torch.is_grad_enabled": (I1, PURE),
    "torch.is_tensor": (I1, PURE),
    "torch.device": (DEVICE, PURE),
    "torch.cuda.is_available": (I1, PURE),
    "torch.cuda.device_count": (I64, PURE),
    "torch.cuda.synchronize": (NONE, WAITS),
    "torch.cuda.manual_seed": (NONE, STATE),
    "torch.cuda.manual_seed_all": (NONE, STATE),
}
MODULE_ATTRIBUTES: Final[Mapping[str, Type]] = {
    "torch.__version__": STR,
    "torch.float64": DTYPE,
    "torch.float32": DTYPE,
    "torch.float16": DTYPE,
    "torch.bfloat16": DTYPE,
    "torch.int64": DTYPE,
    "torch.int32": DTYPE,
    "torch.bool": DTYPE,
}
#: a tensor's attributes; `.grad` is None until a backward pass reaches the tensor
TENSOR_ATTRIBUTES: Final[Mapping[str, Type]] = {
    "is_cuda": I1,
    "is_leaf": I1,
    "requires_grad": I1,
    "ndim": I64,
    "device": DEVICE,
    "dtype": DTYPE,
    "shape": SIZE,
    "grad": UnionType((TENSOR, NONE)),
    "T": TENSOR,
    "data": TENSOR,
}
#: a tensor's methods outside the curated operations
TENSOR_METHODS: Final[Mapping[str, tuple[Type, frozenset[str]]]] = {
    "backward": (NONE, STATE),
    "dim": (I64, PURE),
    "numel": (I64, PURE),
    "is_contiguous": (I1, PURE),
    "detach": (TENSOR, PURE),
    "clone": (TENSOR, PURE),
    "cpu": (TENSOR, PURE),
    "cuda": (TENSOR, PURE),
    "to": (TENSOR, PURE),
    "requires_grad_": (TENSOR, STATE),
    "zero_": (TENSOR, STATE),
}


def call(ctx: CallContext) -> CallAnswer | None:
    """A surface function or tensor method's result and effects; None if not modelled."""
    callee = ctx.callee
    if callee in FUNCTIONS:
        result, effects = FUNCTIONS[callee]
        return CallAnswer(result, effects)
    owner, _, name = callee.rpartition(".")
    if owner == "torch" and name in FACTORIES:
        return CallAnswer(TENSOR, STATE if name in RANDOM else PURE)
    if owner == "torch.Tensor" and name in TENSOR_METHODS:
        result, effects = TENSOR_METHODS[name]
        return CallAnswer(result, effects)
    return None


def attribute_type(ctx: AttributeContext) -> Type | None:
    """`torch.__version__`, `torch.float32`, ..."""
    return MODULE_ATTRIBUTES.get(f"{ctx.owner}.{ctx.name}") if ctx.owner else None


def instance_attribute(ctx: AttributeContext) -> Type | None:
    """`x.is_cuda`, `x.grad`, `x.shape`, ... of a torch tensor."""
    owner = ctx.owner_type
    if isinstance(owner, TensorType) and owner.library == LIBRARY:
        return TENSOR_ATTRIBUTES.get(ctx.name)
    return None


__all__ = ["FUNCTIONS", "TENSOR_ATTRIBUTES", "attribute_type", "call", "instance_attribute"]
