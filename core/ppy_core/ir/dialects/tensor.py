"""The tensor dialect: elementwise arithmetic, comparisons, select, reductions.

Every library's array arithmetic converges here (`numpy.multiply`, `torch.mul`,
`jax.numpy.multiply` are all `tensor.mul`). Operands are tensors or scalars;
scalars broadcast. After fusion a site is one `tensor.kernel` whose region holds
the elementwise body and ends in `tensor.yield`.
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Dialect, Operation, attribute, operand, region, result
from ppy_core.ir.types import ScalarType, TensorType

Operand = (TensorType, ScalarType)

UNARY_FUNCTIONS: Final = (
    "sqrt",
    "exp",
    "log",
    "log1p",
    "expm1",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "floor",
    "ceil",
    "trunc",
    "square",
    "reciprocal",
    "erf",
    "sign",
)
#: two-input elementwise functions (`tensor.binary`): a backend computes them as the
#: library they came from does (ppy-llvm calls that library's own inner loop)
BINARY_FUNCTIONS: Final = ("arctan2", "hypot", "fmax", "fmin")
PREDICATES: Final = ("lt", "le", "gt", "ge", "eq", "ne")
REDUCTIONS: Final = ("add", "mul", "max", "min", "mean")


class _Elementwise(Operation):
    """Shared checks: tensor operands agree in rank where known; result is a tensor
    if any operand is, else a scalar."""

    def verify_extra(self) -> None:
        tensors = [v.type for v in self.operands if isinstance(v.type, TensorType)]
        out = self.results[0].type if self.results else None
        if tensors and not isinstance(out, TensorType):
            self.fail(f"result must be a tensor when an operand is, not {out}")
        if not tensors and isinstance(out, TensorType):
            self.fail("result must be a scalar when every operand is")
        ranks = {t.rank for t in tensors if t.rank is not None}
        if isinstance(out, TensorType) and out.rank is not None:
            ranks.add(out.rank)
        if len(ranks) > 1:
            self.fail(f"operands disagree in rank: {sorted(ranks)}")


class _Binary(_Elementwise):
    lhs = operand(Operand)
    rhs = operand(Operand)
    out = result(Operand)


class AddOp(_Binary):
    """%r = tensor.add %a, %b : (tensor<?xf64>, f64) -> tensor<?xf64>"""

    name: ClassVar[str] = "tensor.add"


class SubOp(_Binary):
    """%r = tensor.sub %a, %b : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>"""

    name: ClassVar[str] = "tensor.sub"


class MulOp(_Binary):
    """%r = tensor.mul %a, %b : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>"""

    name: ClassVar[str] = "tensor.mul"


class DivOp(_Binary):
    """%r = tensor.div %a, %b : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>"""

    name: ClassVar[str] = "tensor.div"


class PowOp(_Binary):
    """%r = tensor.pow %a, %b : (tensor<?xf64>, f64) -> tensor<?xf64>"""

    name: ClassVar[str] = "tensor.pow"


class MaximumOp(_Binary):
    """Elementwise maximum, NaN-propagating.

    %r = tensor.maximum %a, %b : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
    """

    name: ClassVar[str] = "tensor.maximum"


class MinimumOp(_Binary):
    """%r = tensor.minimum %a, %b : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>"""

    name: ClassVar[str] = "tensor.minimum"


class NegOp(_Elementwise):
    """%r = tensor.neg %a : (tensor<?xf64>) -> tensor<?xf64>"""

    name: ClassVar[str] = "tensor.neg"
    source = operand(Operand)
    out = result(Operand)


class AbsOp(_Elementwise):
    """%r = tensor.abs %a : (tensor<?xf64>) -> tensor<?xf64>"""

    name: ClassVar[str] = "tensor.abs"
    source = operand(Operand)
    out = result(Operand)


class UnaryOp(_Elementwise):
    """A one-argument elementwise function.

    %r = tensor.unary %a {op = "sin"} : (tensor<?xf64>) -> tensor<?xf64>
    %e = tensor.unary %a {op = "scipy.special:erf"} : (tensor<?xf64>) -> tensor<?xf64>

    `op` is one of `UNARY_FUNCTIONS`, or a one-input ufunc of another library named
    ``module:attr`` (`is_qualified_ufunc`): a plugin converges onto it, a backend
    that fuses it calls that ufunc's own loop, the core never resolves it.
    """

    name: ClassVar[str] = "tensor.unary"
    op = attribute(str)
    source = operand(Operand)
    out = result(Operand)

    def verify_extra(self) -> None:
        super().verify_extra()
        value = self.attributes["op"]
        if value not in UNARY_FUNCTIONS and not is_qualified_ufunc(value):
            self.fail(f"attribute 'op' = {value!r} is not one of {list(UNARY_FUNCTIONS)}")


class BinaryFunctionOp(_Elementwise):
    """A two-argument elementwise function.

    %r = tensor.binary %y, %x {op = "arctan2"} : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>

    `op` is one of `BINARY_FUNCTIONS` or a two-input ufunc named ``module:attr``.
    """

    name: ClassVar[str] = "tensor.binary"
    op = attribute(str)
    lhs = operand(Operand)
    rhs = operand(Operand)
    out = result(Operand)

    def verify_extra(self) -> None:
        super().verify_extra()
        value = self.attributes["op"]
        if value not in BINARY_FUNCTIONS and not is_qualified_ufunc(value):
            self.fail(f"attribute 'op' = {value!r} is not one of {list(BINARY_FUNCTIONS)}")


class ClipOp(_Elementwise):
    """`x` clipped to [lo, hi] as its library does it (NumPy 2: its `clip` loop,
    whose NaN and signed-zero rules are not those of max-then-min).

    %r = tensor.clip %x, %lo, %hi : (tensor<?xf64>, f64, f64) -> tensor<?xf64>
    """

    name: ClassVar[str] = "tensor.clip"
    source = operand(Operand)
    low = operand(Operand)
    high = operand(Operand)
    out = result(Operand)


def is_qualified_ufunc(name: str) -> bool:
    """Whether `name` reads ``dotted.module:attr`` (a ufunc another library defines)."""
    module, sep, attr = name.partition(":")
    return bool(sep) and attr.isidentifier() and all(p.isidentifier() for p in module.split("."))


class CompareOp(_Elementwise):
    """An elementwise comparison; the result's element type is i1.

    %m = tensor.compare %a, %b {pred = "gt"} : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xi1>
    """

    name: ClassVar[str] = "tensor.compare"
    pred = attribute(str, one_of=PREDICATES)
    lhs = operand(Operand)
    rhs = operand(Operand)
    out = result(Operand)

    def verify_extra(self) -> None:
        super().verify_extra()
        out = self.out.type
        element = out.element if isinstance(out, TensorType) else out
        if element.kind != "i1":
            self.fail(f"a comparison yields i1 elements, not {element}")


LOGICAL: Final = ("and", "or", "xor", "not")


class LogicalOp(_Elementwise):
    """Elementwise logic of i1 tensors (`&`, `|`, `^`, `~` of NumPy bool arrays).

    %m = tensor.logical %a, %b {op = "and"} : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
    %n = tensor.logical %a {op = "not"} : (tensor<?xi1>) -> tensor<?xi1>
    """

    name: ClassVar[str] = "tensor.logical"
    op = attribute(str, one_of=LOGICAL)
    inputs = operand(Operand, variadic=True)
    out = result(Operand)

    def verify_extra(self) -> None:
        super().verify_extra()
        arity = 1 if self.attributes["op"] == "not" else 2
        if len(self.operands) != arity:
            self.fail(f"logical {self.attributes['op']} takes {arity} operand(s)")
        for v in (*self.operands, self.results[0]):
            element = v.type.element if isinstance(v.type, TensorType) else v.type
            if element.kind != "i1":
                self.fail(f"logic is of i1 values, not {element}")


class SelectOp(_Elementwise):
    """Elementwise choice; both branches are evaluated, as NumPy's `where` does.

    %r = tensor.select %m, %a, %b : (tensor<?xi1>, tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
    """

    name: ClassVar[str] = "tensor.select"
    cond = operand(Operand)
    on_true = operand(Operand)
    on_false = operand(Operand)
    out = result(Operand)

    def verify_extra(self) -> None:
        super().verify_extra()
        cond = self.cond.type
        element = cond.element if isinstance(cond, TensorType) else cond
        if element.kind != "i1":
            self.fail(f"the condition must have i1 elements, not {element}")


class ReduceOp(Operation):
    """Whole-tensor reduction, in the order of the library it came from; with `axis`
    (only -1, the last) each row along it reduced alone, a tensor of the source's
    element (`keepdims`: the axis kept, of length 1).

    %s = tensor.reduce %x {op = "add"} : (tensor<?xf64>) -> f64
    %m = tensor.reduce %x {op = "max", axis = -1, keepdims = true} : (tensor<*xf32>)
        -> tensor<*xf32>
    """

    name: ClassVar[str] = "tensor.reduce"
    op = attribute(str, one_of=REDUCTIONS)
    axis = attribute(int, one_of=(-1,), optional=True)
    keepdims = attribute(bool, optional=True)
    source = operand(TensorType)
    out = result(Operand)

    def verify_extra(self) -> None:
        out, source = self.results[0].type, self.operands[0].type
        if "axis" not in self.attributes:
            if not isinstance(out, ScalarType) or "keepdims" in self.attributes:
                self.fail(f"a whole reduction gives a scalar (no keepdims), not {out}")
            return
        if not isinstance(out, TensorType) or out.element != source.element:
            self.fail(f"a reduction along an axis gives a tensor of {source.element}, not {out}")


class CastOp(_Elementwise):
    """%r = tensor.cast %a : (tensor<?xi64>) -> tensor<?xf64>"""

    name: ClassVar[str] = "tensor.cast"
    source = operand(Operand)
    out = result(Operand)


class KernelOp(Operation):
    """One fused loop: the region's arguments are the site's leaves.

    %r = tensor.kernel %a, %b ({
    ^bb0(%x: tensor<?xf64>, %y: tensor<?xf64>):
      %0 = tensor.mul %x, %y : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
      tensor.yield %0 : (tensor<?xf64>) -> ()
    }) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
    """

    name: ClassVar[str] = "tensor.kernel"
    inputs = operand(Operand, variadic=True)
    out = result(Operand)
    body = region()

    def verify_extra(self) -> None:
        block = self.body.block
        if [a.type for a in block.args] != [v.type for v in self.inputs]:
            self.fail("region arguments must match the kernel's inputs")
        if not block.ops or not isinstance(block.ops[-1], YieldOp):
            self.fail("the body must end with tensor.yield")
        yielded = block.ops[-1].operands
        if len(yielded) != 1 or yielded[0].type != self.out.type:
            self.fail("the body must yield one value of the kernel's result type")


class YieldOp(Operation):
    """tensor.yield %r : (tensor<?xf64>) -> ()"""

    name: ClassVar[str] = "tensor.yield"
    is_terminator: ClassVar[bool] = True
    values = operand(Operand, variadic=True)


BINARY_OPS: Final = {
    "add": AddOp,
    "sub": SubOp,
    "mul": MulOp,
    "div": DivOp,
    "pow": PowOp,
    "maximum": MaximumOp,
    "minimum": MinimumOp,
}

TENSOR: Final = Dialect(
    "tensor",
    [
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        PowOp,
        MaximumOp,
        MinimumOp,
        NegOp,
        AbsOp,
        UnaryOp,
        BinaryFunctionOp,
        ClipOp,
        CompareOp,
        LogicalOp,
        SelectOp,
        ReduceOp,
        CastOp,
        KernelOp,
        YieldOp,
    ],
)

__all__ = [
    "AddOp",
    "SubOp",
    "MulOp",
    "DivOp",
    "PowOp",
    "MaximumOp",
    "MinimumOp",
    "NegOp",
    "AbsOp",
    "UnaryOp",
    "BinaryFunctionOp",
    "ClipOp",
    "CompareOp",
    "LogicalOp",
    "LOGICAL",
    "SelectOp",
    "ReduceOp",
    "CastOp",
    "KernelOp",
    "YieldOp",
    "TENSOR",
    "BINARY_OPS",
    "UNARY_FUNCTIONS",
    "BINARY_FUNCTIONS",
    "is_qualified_ufunc",
    "PREDICATES",
    "REDUCTIONS",
]
