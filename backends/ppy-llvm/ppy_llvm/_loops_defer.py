"""Typed loops: which float ops leave their inf/NaN test to the op that consumes them.

A float op's exact answer (the NaN payload Python and NumPy produce, NumPy's scalar
warnings) differs from the bare machine op only when its result is inf or NaN, so
each op tests its result and settles those cases off the hot path. The test can be
shared: an inf or NaN operand of `+`, `-`, `*` (or the dividend of `/`) always makes
the result inf or NaN too, so in `s - L[i, j] * x[j]` the subtraction's test also
catches the product's. An op *defers* its test to its consumer when

* it is that consumer's only use, as an operand that carries inf/NaN through;
* both sit in the same block, the consumer after it; and
* nothing between them can leave the function (an unproven bounds check, a
  ZeroDivisionError, `math.sqrt`'s ValueError): NumPy's warnings for the deferred
  op must be recorded before any exit, as Python would have warned by then.

The consumer's cold path then recomputes the whole tree of deferred ops from its
leaves, each with its own exact handling (`ScalarOps.settle`).
"""

from __future__ import annotations

from typing import Any

FLOAT_KINDS = frozenset({"float", "f64", "fnum"})
#: ops that never leave the function (loads and stores: only once proven in bounds)
_QUIET = frozenset(
    {"loops.const", "loops.get", "loops.set", "loops.cast", "loops.dim", "loops.compare"}
)


def use_counts(func: Any) -> dict[int, int]:
    """How many operands name each value (by id), over the whole function."""
    counts: dict[int, int] = {}
    for op in func.walk():
        for value in op.operands:
            counts[id(value)] = counts.get(id(value), 0) + 1
    return counts


def _can_exit(op: Any, proven: frozenset[int]) -> bool:
    name = op.name
    if name in _QUIET:
        return False
    if name in ("loops.load", "loops.store"):
        return id(op) not in proven
    if name == "loops.unary":
        return False
    if name == "loops.call":
        return op.attributes["fn"] == "sqrt"
    if name == "loops.binop":
        how, py = op.attributes["op"], op.attributes["py"]
        if py == "int":
            return how in ("floordiv", "mod")
        return how == "truediv" and py in ("float", "fnum")  # ZeroDivisionError
    return True  # control flow, regions, return: anything may happen there


def carries(consumer: Any, position: int) -> bool:
    """Whether an inf/NaN operand at `position` always makes `consumer`'s result one."""
    if consumer.name != "loops.binop" or consumer.attributes["py"] not in FLOAT_KINDS:
        return False
    how = consumer.attributes["op"]
    if how in ("add", "sub", "mul"):
        return True
    # x / inf is 0: only the dividend carries; and a `/` that may raise
    # ZeroDivisionError must find its operands' warnings already recorded
    return how == "truediv" and position == 0 and consumer.attributes["py"] == "f64"


def same_bits(op: Any) -> bool:
    """A cast between two float kinds (np.float64 <-> float): the same double."""
    return (
        op.name == "loops.cast"
        and op.attributes["py"] in FLOAT_KINDS
        and op.operands[0].type == op.results[0].type
    )


def source(value: Any) -> Any:
    """The value behind any same-bits casts."""
    while same_bits(getattr(value, "owner", None) or _NONE):
        value = value.owner.operands[0]
    return value


def defers(op: Any, uses: dict[int, int], proven: frozenset[int]) -> bool:
    """Whether the float binop `op` leaves its inf/NaN test to its consumer (through
    same-bits casts, each its producer's only use)."""
    if op.attributes.get("py") not in FLOAT_KINDS or not op.results:
        return False
    value = op.results[0]
    if op.parent is None:
        return False
    ops = op.parent.ops
    for later in ops[ops.index(op) + 1 :]:
        if value in later.operands:
            if uses.get(id(value)) != 1:
                return False
            if same_bits(later):
                value = later.results[0]
                continue
            return carries(later, later.operands.index(value))
        if _can_exit(later, proven):
            return False
    return False  # used in a nested region: its test may never run


class _None:
    name = ""


_NONE = _None()


__all__ = ["FLOAT_KINDS", "carries", "defers", "same_bits", "source", "use_counts"]
