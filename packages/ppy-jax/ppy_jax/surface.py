"""What the jax plugin answers about JAX, Flax (linen) and optax calls. Imports no JAX.

jax.numpy spells the shared tensor operations as NumPy does, so the plugin names
them (`jnp.add` is `tensor.add`, `jnp.sin` is `tensor.unary {op = "sin"}`): the
checker and `ppy explain` see them. Every such call carries a `DirectCallSpec` of
itself: "keep the call, never fused". No backend fuses it (LLVM reads no
direct_call spec), because JAX's bits differ from NumPy's: eager `jnp` calls stay
Python; a jitted function is exported whole instead (`staging`).

Flax and optax objects are opaque types the plugin names (a Module instance, the
variables dict `init` returns, a GradientTransformation, its state, a TrainState);
the answers follow research/jax.md (flax 0.12.8, optax 0.2.8).
"""

from __future__ import annotations

from typing import Final

from ppy_core.interface.plugin import CallAnswer, CallContext, Converge
from ppy_core.interface.specs import DirectCallSpec
from ppy_core.ir.dialects.tensor import UNARY_FUNCTIONS as TENSOR_UNARY
from ppy_core.ir.types import F32, I1, OpaqueType, TensorType, TupleType, Type

LIBRARY: Final = "jax"
#: `jax.Array`: float32 is JAX's default float (x64 off); a region ignores the element
ARRAY: Final = TensorType(F32, None, LIBRARY)
BOOL_ARRAY: Final = TensorType(I1, None, LIBRARY)
MODULE: Final = OpaqueType("flax.linen.Module")  # a layer or a user's Module instance
VARIABLES: Final = OpaqueType("flax.linen.Variables")  # {'params': {...}}, a plain dict
TRAIN_STATE: Final = OpaqueType("flax.training.train_state.TrainState")
TRANSFORM: Final = OpaqueType("optax.GradientTransformation")
OPT_STATE: Final = OpaqueType("optax.OptState")  # a tuple of optax's NamedTuple states
UPDATES: Final = OpaqueType("optax.Updates")  # a pytree shaped like the params

BINARY: Final = {
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "divide": "div",
    "true_divide": "div",
    "power": "pow",
    "maximum": "maximum",
    "minimum": "minimum",
}
COMPARE: Final = {
    "less": "lt",
    "less_equal": "le",
    "greater": "gt",
    "greater_equal": "ge",
    "equal": "eq",
    "not_equal": "ne",
}
SIGN: Final = {"negative": "tensor.neg", "abs": "tensor.abs", "absolute": "tensor.abs"}
REDUCTIONS: Final = {"sum": "add", "prod": "mul", "mean": "mean", "max": "max", "min": "min"}
#: other jax.numpy functions that return an array (typed, not named as shared ops)
ARRAY_FUNCTIONS: Final = frozenset(
    {
        "array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
        "full_like", "arange", "linspace", "dot", "matmul", "einsum", "reshape",
        "transpose", "concatenate", "stack", "where", "clip", "square", "argmax", "argmin",
        "std", "var", "logaddexp", "outer", "eye",
    }
)  # fmt: skip
ACTIVATIONS: Final = frozenset(
    {"relu", "gelu", "sigmoid", "silu", "swish", "softplus", "tanh", "elu", "leaky_relu",
     "softmax", "log_softmax", "one_hot", "standardize"}
)  # fmt: skip
LAYERS: Final = frozenset(
    {"Dense", "DenseGeneral", "Conv", "ConvTranspose", "Embed", "LayerNorm", "BatchNorm",
     "GroupNorm", "RMSNorm", "Dropout", "MultiHeadDotProductAttention", "SelfAttention",
     "Sequential"}
)  # fmt: skip
OPTIMIZERS: Final = frozenset(
    {"adam", "adamw", "sgd", "rmsprop", "adagrad", "adafactor", "lamb", "lion", "nadam",
     "radam", "chain", "clip_by_global_norm", "scale", "scale_by_adam"}
)  # fmt: skip
LOSSES: Final = frozenset(
    {"l2_loss", "squared_error", "softmax_cross_entropy",
     "softmax_cross_entropy_with_integer_labels", "sigmoid_binary_cross_entropy",
     "huber_loss", "global_norm"}
)  # fmt: skip

EXTERNAL_TYPES: Final[dict[str, Type]] = {
    "jax.Array": ARRAY,
    "flax.linen.Module": MODULE,
    "flax.linen.Variables": VARIABLES,
    "flax.training.train_state.TrainState": TRAIN_STATE,
    "optax.GradientTransformation": TRANSFORM,
    "optax.OptState": OPT_STATE,
    "optax.Updates": UPDATES,
}
TRAIN_STATE_ATTRIBUTES: Final[dict[str, Type]] = {
    "step": ARRAY,
    "params": VARIABLES,
    "opt_state": OPT_STATE,
    "tx": TRANSFORM,
}


def _jnp(callee: str) -> str | None:
    return callee[len("jax.numpy.") :] if callee.startswith("jax.numpy.") else None


def tensor_operation(ctx: CallContext) -> Converge | None:
    """The shared op a jax.numpy call names (positional array arguments only)."""
    name = _jnp(ctx.callee)
    if name is None or ctx.kwargs:
        return None
    n = len(ctx.args)
    if name in BINARY and n == 2:
        return Converge(f"tensor.{BINARY[name]}", ARRAY)
    if name in COMPARE and n == 2:
        return Converge("tensor.compare", BOOL_ARRAY, {"pred": COMPARE[name]})
    if name in TENSOR_UNARY and n == 1:
        return Converge("tensor.unary", ARRAY, {"op": name})
    if name in SIGN and n == 1:
        return Converge(SIGN[name], ARRAY)
    if name in REDUCTIONS and n == 1:
        return Converge("tensor.reduce", ARRAY, {"op": REDUCTIONS[name]})
    return None


def _never_fused(callee: str, result: Type) -> CallAnswer:
    return CallAnswer(result, lowering=DirectCallSpec(callee))


def call(ctx: CallContext) -> CallAnswer | None:
    """Result types of the JAX, Flax and optax calls the plugin knows."""
    callee = ctx.callee
    name = _jnp(callee)
    if name is not None:
        if name in COMPARE:
            return _never_fused(callee, BOOL_ARRAY)
        known = (BINARY, TENSOR_UNARY, SIGN, REDUCTIONS, ARRAY_FUNCTIONS)
        if any(name in table for table in known):
            return _never_fused(callee, ARRAY)
        return None
    head, _, last = callee.rpartition(".")
    if head in ("jax.nn", "flax.linen") and last in ACTIVATIONS:
        return CallAnswer(ARRAY)  # `nn.relu is jax.nn.relu`: one answer for both names
    if head == "flax.linen" and last in LAYERS:
        return CallAnswer(MODULE)
    return _flax(callee, ctx) or _optax(callee, ctx)


def _flax(callee: str, ctx: CallContext) -> CallAnswer | None:
    if callee == "flax.linen.Module.init":  # init(rngs, *args) -> {'params': ...}
        return CallAnswer(VARIABLES)
    if callee == "flax.linen.Module.apply":  # apply(variables, *args, mutable=False)
        mutable = ctx.kw_constants.get("mutable", False)
        return CallAnswer(TupleType((ARRAY, VARIABLES)) if mutable is not False else ARRAY)
    if callee == "flax.linen.Module.__call__":
        return CallAnswer(ARRAY)
    if callee in (
        "flax.training.train_state.TrainState.create",
        "flax.training.train_state.TrainState.apply_gradients",
        "flax.training.train_state.TrainState.replace",
    ):
        return CallAnswer(TRAIN_STATE)
    return None


def _optax(callee: str, ctx: CallContext) -> CallAnswer | None:
    head, _, last = callee.rpartition(".")
    if head == "optax" and last in OPTIMIZERS:
        return CallAnswer(TRANSFORM)
    if head == "optax" and last in LOSSES:
        return CallAnswer(ARRAY)
    if callee == "optax.GradientTransformation.init":
        return CallAnswer(OPT_STATE)
    if callee == "optax.GradientTransformation.update":  # (updates, new state)
        return CallAnswer(TupleType((UPDATES, OPT_STATE)))
    if callee == "optax.apply_updates":  # params shaped as its first argument
        return CallAnswer(ctx.args[0] if ctx.args else VARIABLES)
    return None


#: external bases whose subclasses the plugin types: a project class deriving from one
#: gets its methods (`init`, `apply`, `create`...) from that base, which only the plugin
#: knows (Flax makes Module subclasses dataclasses in `__init_subclass__`, no metaclass)
CLASS_BASES: Final[dict[str, Type]] = {
    "flax.linen.Module": MODULE,
    "flax.linen.module.Module": MODULE,
    "flax.training.train_state.TrainState": TRAIN_STATE,
}


def class_type(bases: tuple[str, ...], known: dict[str, Type]) -> Type | None:
    """The type of a project class's instances: that of its first external base the
    plugin knows, directly or through an earlier project class (`known`)."""
    for base in bases:
        found = CLASS_BASES.get(base) or known.get(base)
        if found is not None:
            return found
    return None


def instance_attribute(owner: Type | None, name: str) -> Type | None:
    """`state.params` and the other TrainState fields."""
    if owner == TRAIN_STATE:
        return TRAIN_STATE_ATTRIBUTES.get(name)
    return None


__all__ = [
    "ARRAY",
    "EXTERNAL_TYPES",
    "MODULE",
    "OPT_STATE",
    "TRAIN_STATE",
    "TRANSFORM",
    "VARIABLES",
    "CLASS_BASES",
    "call",
    "class_type",
    "instance_attribute",
    "tensor_operation",
]
