"""Python's own arithmetic on numbers, the one place the front end types it.

`i // 2`, `-s`, `n * 0.5` of Python ints and floats have Python's types whatever
plugins are active: the core answers them and plugins answer only for their library's
types. Bools are numbers only where the caller says an `i1` is a Python bool (the
checker): to the compiler an `i1` may be a NumPy bool scalar, whose `+` is `or` and
whose `-` raises, so there bools stay the plugins' (or Unknown)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ppy_core.ir.types import F64, I1, I64, Type

#: operators whose result is an int of ints and a float as soon as one operand is a
#: float (`**` is not: `2 ** -1` is a float, `(-8.0) ** 0.5` a complex)
_CLOSED: Final = frozenset({"UAdd", "USub", "Add", "Sub", "Mult", "FloorDiv", "Mod"})
_NUMBERS: Final = (I64, F64)


def python_arithmetic(op: str, operands: Sequence[Type], *, bools: bool = False) -> Type | None:
    """The type of `op` (an `ast` operator's class name) applied to Python numbers (and
    bools, which are ints, where `bools`), or None when an operand is no number or the
    result's type depends on the values."""
    numbers = (*_NUMBERS, I1) if bools else _NUMBERS
    if not operands or not all(t in numbers for t in operands):
        return None
    if op == "Div":
        return F64
    if op in _CLOSED:
        return F64 if F64 in operands else I64
    return None


__all__ = ["python_arithmetic"]
