"""The loops dialect's masked reduction: `m = <mask>; v = X[m]; t = v.mean()` (or `v.sum()`).

NumPy makes the boolean mask (one ufunc call per comparison and per logical_and /
logical_or), then `X[m]` (a fresh contiguous copy of the selected elements, in order),
then its mean (`np.add.reduce`'s pairwise sum of the copy, divided by the count) or its
sum (the same sum). The op is all three at once, where the function binds m and v for
that use only: a backend selects the elements in one pass over the operands and sums
them in NumPy's order (see ppy_llvm._loops_masked).

    %t = loops.masked_reduce %X, %radius, %r1, %r2
        {arrays = 1, reduce = "mean", tree = ("s0", "a0", "le", "a0", "s1", "lt", "and"),
         py = "f64"}

`tree` is postfix: "aK" the K-th mask array (operand 1 + K), "sK" the K-th scalar
(operand 1 + arrays + K, a double), a comparison pops two and pushes a bool, "and" /
"or" pop two bools. Every array is 1-D float64.
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Operation, attribute, operand, result
from ppy_core.ir.types import ScalarType, TensorType

#: comparisons as NumPy's (NaN: false, but `!=` true)
MASK_COMPARES: Final = ("lt", "le", "gt", "ge", "eq", "ne")
MASK_LOGICAL: Final = ("and", "or")


class MaskedReduceOp(Operation):
    """`X[mask].mean()` / `.sum()` (`reduce`) as a np.float64 (`py` "f64"): X, the
    mask's arrays, its scalars."""

    name: ClassVar[str] = "loops.masked_reduce"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory"})
    data = operand(TensorType)
    rest = operand((TensorType, ScalarType), variadic=True)
    arrays = attribute(int)
    reduce = attribute(str, one_of=("mean", "sum"))
    tree = attribute(tuple)
    py = attribute(str, one_of=("f64",))
    out = result(ScalarType)

    def verify_extra(self) -> None:
        na = self.attributes["arrays"]
        ns = len(self.operands) - 1 - na
        for v in self.operands[: 1 + na]:
            t = v.type
            if not isinstance(t, TensorType) or len(t.shape or ()) != 1 or t.element.kind != "f64":
                self.fail("an operand that is not a 1-D float64 array")
        if any(not isinstance(v.type, ScalarType) for v in self.operands[1 + na :]):
            self.fail("a scalar operand that is an array")
        depth = 0
        for item in self.attributes["tree"]:
            if item in MASK_COMPARES or item in MASK_LOGICAL:
                depth -= 1
            elif _leaf(item, na, ns):
                depth += 1
            else:
                self.fail(f"tree item {item!r}")
            if depth < 1:
                self.fail("a tree that pops more than it pushed")
        if depth != 1:
            self.fail("a tree that leaves more than one mask")


def _leaf(item: str, na: int, ns: int) -> bool:
    """ "aK" below `na` mask arrays, "sK" below `ns` scalars."""
    count = {"a": na, "s": ns}.get(item[:1], 0)
    return item[1:].isdigit() and int(item[1:]) < count


MASKED_OPS: Final = (MaskedReduceOp,)

__all__ = ["MASKED_OPS", "MASK_COMPARES", "MASK_LOGICAL", "MaskedReduceOp"]
