"""The torch surface a region may contain, and the ATen calls it may emit.

Two tables, both plain data:

* `CURATED_OPS`: the Python spellings a region body may use (`torch.relu`,
  `torch.nn.functional.gelu`, the `Tensor.view` method, the `+` operator ...),
  each naming the ATen operation it becomes.
* `ATEN_CALLS`: the narrower set of ATen operations a region emits, each by the
  C++ signature(s) it is called through. A dimension is `int64_t`, a shape or a
  list of dimensions `at::IntArrayRef` (written as a tuple in Python), `keepdim`
  and `is_causal` are `bool`, gelu's approximation is a `c10::string_view` mode.
  Keyword arguments bind against the C++ parameter names (Python's `input` is
  accepted for the C++ `self`). An operation with several signatures takes the
  first one whose parameters the call fills.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

# C++ parameter kinds: what Python value each accepts (see stage.py).
TENSOR: Final = "Tensor"  # const at::Tensor&; a number becomes a wrapped scalar tensor
TENSOR_ONLY: Final = "TensorOnly"  # const at::Tensor&, a tensor value only
OPT_TENSOR: Final = "Tensor?"  # const std::optional<at::Tensor>&; None allowed
TENSOR_LIST: Final = "Tensor[]"  # a tuple/list of tensors
INT: Final = "int64_t"
INT_LIST: Final = "IntArrayRef"  # a tuple of ints (an int alone is one dim)
OPT_INT_LIST: Final = "IntArrayRef?"
BOOL: Final = "bool"
DOUBLE: Final = "double"
OPT_DOUBLE: Final = "double?"
SCALAR: Final = "Scalar"
STRING: Final = "string_view"
OPT_STRING: Final = "string_view?"

EFFECT_READ: Final = "ReadMemory"
EFFECT_WRITE: Final = "WriteMemory"


@dataclass(frozen=True, slots=True)
class CppParam:
    """One C++ parameter: its name, kind, and default as Python writes it.

    `required` is True when the parameter has no default."""

    name: str
    kind: str
    default: object = None
    required: bool = True


def p(name: str, kind: str) -> CppParam:
    """A required parameter."""
    return CppParam(name, kind)


def d(name: str, kind: str, default: object) -> CppParam:
    """A parameter with a default (the C++ default, spelled in Python)."""
    return CppParam(name, kind, default, required=False)


@dataclass(frozen=True, slots=True)
class AtenSignature:
    """One C++ overload: `at::name(params...)`, or `self.name(rest...)` when `method`.

    `returns` is "Tensor", "Tensor[]" (a list, unpacked by assignment) or "int64_t";
    `effects` what the call may do."""

    overload: str
    params: tuple[CppParam, ...]
    method: bool = False
    returns: str = "Tensor"
    effects: frozenset[str] = frozenset({EFFECT_READ})


@dataclass(frozen=True, slots=True)
class AtenOp:
    """An ATen operation a region may emit, with its overloads in preference order."""

    name: str
    signatures: tuple[AtenSignature, ...]
    header: str  # the per-operator header, "" for Tensor methods in TensorBody.h


def _op(name: str, *signatures: AtenSignature, header: str | None = None) -> AtenOp:
    return AtenOp(name, signatures, f"ATen/ops/{name}.h" if header is None else header)


def _sig(
    overload: str,
    *params: CppParam,
    method: bool = False,
    returns: str = "Tensor",
    writes: bool = False,
) -> AtenSignature:
    effects = frozenset({EFFECT_READ, EFFECT_WRITE}) if writes else frozenset({EFFECT_READ})
    return AtenSignature(overload, params, method, returns, effects)


SELF = p("self", TENSOR_ONLY)
OTHER = p("other", TENSOR)
ALPHA = d("alpha", SCALAR, 1)


def _unary(name: str) -> AtenOp:
    return _op(name, _sig(name, SELF))


def _binary_alpha(name: str) -> AtenOp:
    return _op(name, _sig(f"{name}.Tensor", SELF, OTHER, ALPHA))


_OPS: tuple[AtenOp, ...] = (
    # arithmetic
    _binary_alpha("add"),
    _binary_alpha("sub"),
    _op("mul", _sig("mul.Tensor", SELF, OTHER)),
    _op(
        "div",
        _sig("div.Tensor", SELF, OTHER),
        _sig("div.Tensor_mode", SELF, OTHER, p("rounding_mode", OPT_STRING)),
    ),
    _op(
        "pow",
        _sig("pow.Tensor_Tensor", SELF, p("exponent", TENSOR_ONLY)),
        _sig("pow.Tensor_Scalar", SELF, p("exponent", SCALAR)),
    ),
    _unary("neg"),
    _unary("abs"),
    _unary("exp"),
    _unary("log"),
    _unary("sqrt"),
    _unary("rsqrt"),
    # activations
    _unary("relu"),
    _unary("tanh"),
    _unary("sigmoid"),
    _unary("silu"),
    _op("gelu", _sig("gelu", SELF, d("approximate", STRING, "none"))),
    _op("softmax", _sig("softmax.int", SELF, p("dim", INT))),
    _op("log_softmax", _sig("log_softmax.int", SELF, p("dim", INT))),
    # reductions
    _op(
        "sum",
        _sig("sum", SELF),
        _sig("sum.dim_IntList", SELF, p("dim", OPT_INT_LIST), d("keepdim", BOOL, False)),
    ),
    _op(
        "mean",
        _sig("mean", SELF),
        _sig("mean.dim", SELF, p("dim", OPT_INT_LIST), d("keepdim", BOOL, False)),
    ),
    _op(
        "prod",
        _sig("prod", SELF),
        _sig("prod.dim_int", SELF, p("dim", INT), d("keepdim", BOOL, False)),
    ),
    _op("amax", _sig("amax", SELF, d("dim", INT_LIST, ()), d("keepdim", BOOL, False))),
    _op("amin", _sig("amin", SELF, d("dim", INT_LIST, ()), d("keepdim", BOOL, False))),
    # shapes and views
    _op("reshape", _sig("reshape", SELF, p("shape", INT_LIST))),
    _op("view", _sig("view", SELF, p("size", INT_LIST), method=True), header=""),
    _op("transpose", _sig("transpose.int", SELF, p("dim0", INT), p("dim1", INT))),
    _op("permute", _sig("permute", SELF, p("dims", INT_LIST))),
    _op("flatten", _sig("flatten.using_ints", SELF, d("start_dim", INT, 0), d("end_dim", INT, -1))),
    _op("unsqueeze", _sig("unsqueeze", SELF, p("dim", INT))),
    _op("squeeze", _sig("squeeze", SELF), _sig("squeeze.dim", SELF, p("dim", INT))),
    _op("cat", _sig("cat", p("tensors", TENSOR_LIST), d("dim", INT, 0))),
    _op("stack", _sig("stack", p("tensors", TENSOR_LIST), d("dim", INT, 0))),
    _op("narrow", _sig("narrow", SELF, p("dim", INT), p("start", INT), p("length", INT))),
    _op(
        "split",
        _sig("split.Tensor", SELF, p("split_size", INT), d("dim", INT, 0), returns="Tensor[]"),
    ),
    _op("contiguous", _sig("contiguous", SELF, method=True), header=""),
    _op("size", _sig("size.int", SELF, p("dim", INT), method=True, returns="int64_t"), header=""),
    _op(
        "where",
        _sig(
            "where.self",
            p("condition", TENSOR_ONLY),
            p("self", TENSOR_ONLY),
            p("other", TENSOR_ONLY),
        ),
    ),
    # linear algebra
    _op("matmul", _sig("matmul", SELF, p("other", TENSOR_ONLY))),
    _op("mm", _sig("mm", SELF, p("mat2", TENSOR_ONLY))),
    _op("bmm", _sig("bmm", SELF, p("mat2", TENSOR_ONLY))),
    _op(
        "linear",
        _sig(
            "linear", p("input", TENSOR_ONLY), p("weight", TENSOR_ONLY), d("bias", OPT_TENSOR, None)
        ),
    ),
    _op(
        "addmm",
        _sig(
            "addmm",
            SELF,
            p("mat1", TENSOR_ONLY),
            p("mat2", TENSOR_ONLY),
            d("beta", SCALAR, 1),
            d("alpha", SCALAR, 1),
        ),
    ),
    # normalization, lookup, attention
    _op(
        "layer_norm",
        _sig(
            "layer_norm",
            p("input", TENSOR_ONLY),
            p("normalized_shape", INT_LIST),
            d("weight", OPT_TENSOR, None),
            d("bias", OPT_TENSOR, None),
            d("eps", DOUBLE, 1e-05),
            d("cudnn_enable", BOOL, True),
        ),
    ),
    _op(
        "embedding",
        _sig(
            "embedding",
            p("weight", TENSOR_ONLY),
            p("indices", TENSOR_ONLY),
            d("padding_idx", INT, -1),
            d("scale_grad_by_freq", BOOL, False),
            d("sparse", BOOL, False),
        ),
    ),
    _op(
        "scaled_dot_product_attention",
        _sig(
            "scaled_dot_product_attention",
            p("query", TENSOR_ONLY),
            p("key", TENSOR_ONLY),
            p("value", TENSOR_ONLY),
            d("attn_mask", OPT_TENSOR, None),
            d("dropout_p", DOUBLE, 0.0),
            d("is_causal", BOOL, False),
            d("scale", OPT_DOUBLE, None),
            d("enable_gqa", BOOL, False),
        ),
    ),
    # writes
    _op(
        "copy_",
        _sig(
            "copy_",
            SELF,
            p("src", TENSOR_ONLY),
            d("non_blocking", BOOL, False),
            method=True,
            writes=True,
        ),
        header="",
    ),
)

ATEN_CALLS: Final[Mapping[str, AtenOp]] = MappingProxyType({op.name: op for op in _OPS})

_SAME_NAME_TORCH: Final = (
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "neg",
    "abs",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "relu",
    "tanh",
    "sigmoid",
    "softmax",
    "log_softmax",
    "sum",
    "mean",
    "prod",
    "amax",
    "amin",
    "reshape",
    "transpose",
    "permute",
    "flatten",
    "unsqueeze",
    "squeeze",
    "cat",
    "stack",
    "narrow",
    "where",
    "matmul",
    "mm",
    "bmm",
    "addmm",
    "layer_norm",
    "embedding",
)
_FUNCTIONAL: Final = (
    "relu",
    "gelu",
    "silu",
    "tanh",
    "sigmoid",
    "softmax",
    "log_softmax",
    "linear",
    "layer_norm",
    "scaled_dot_product_attention",
)
_METHODS: Final = (
    "view",
    "contiguous",
    "copy_",
    "size",
    "reshape",
    "transpose",
    "permute",
    "matmul",
    "softmax",
    "sum",
    "mean",
    "unsqueeze",
    "narrow",
    "squeeze",
    "split",
)
# Operators: ast class name -> ATen op (a number on the left is allowed where it commutes).
OPERATORS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "Add": "add",
        "Sub": "sub",
        "Mult": "mul",
        "Div": "div",
        "MatMult": "matmul",
        "Pow": "pow",
        "USub": "neg",
    }
)
COMMUTATIVE: Final = frozenset({"Add", "Mult"})


def _curated() -> dict[str, str]:
    table = {f"torch.{name}": name for name in _SAME_NAME_TORCH}
    table.update({f"torch.nn.functional.{name}": name for name in _FUNCTIONAL})
    table.update({f"torch.Tensor.{name}": name for name in _METHODS})
    table.update({f"operator.{op}": aten for op, aten in OPERATORS.items()})
    return table


CURATED_OPS: Final[Mapping[str, str]] = MappingProxyType(_curated())

# Methods whose shape argument may also be spread: x.view(2, 3) == x.view((2, 3)).
VARARG_METHODS: Final[Mapping[str, str]] = MappingProxyType(
    {"view": "size", "reshape": "shape", "permute": "dims"}
)

__all__ = [
    "ATEN_CALLS",
    "CURATED_OPS",
    "OPERATORS",
    "COMMUTATIVE",
    "VARARG_METHODS",
    "AtenOp",
    "AtenSignature",
    "CppParam",
    "EFFECT_READ",
    "EFFECT_WRITE",
]
