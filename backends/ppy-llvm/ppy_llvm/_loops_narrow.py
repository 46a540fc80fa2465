"""NumPy's np.int32 and np.uint8 scalars of the loops dialect in LLVM IR.

The mixin of `_loops_emit.Emitter`. Both kinds live widened in an i64 holding their
exact value (sign-extended from an int32 element, zero-extended from a uint8 one).
An np.int32 `+ - *` is exact in 64 bits (two int32s' product fits); NumPy's result
is that value wrapped to 32 bits, with its overflow warning (event 1 of the op, as
an np.int64's) where the wrap changed it. Their bitwise ops, and a uint8's `>>` by
0..7, never leave the kind's range: the plain i64 op is NumPy's answer.
"""

from __future__ import annotations

from typing import Any

from ._loops_scalar import FLAG_OPS, FLAG_STRIDE, _bad

_EXACT = ("and", "or", "xor", "rshift")


class NarrowOps:
    """np.int32 / np.uint8 binary ops; mixed into Emitter (b, ir, i64, flags)."""

    b: Any
    ir: Any
    i64: Any
    flags: Any

    def narrow_int_binop(self, name: str, py: str, a: Any, b: Any) -> Any:
        b_ = self.b
        if name in _EXACT:
            return {"and": b_.and_, "or": b_.or_, "xor": b_.xor, "rshift": b_.lshr}[name](a, b)
        if py != "i32" or name not in ("add", "sub", "mul"):
            _bad(f"np.{py} {name}")
        exact = {"add": b_.add, "sub": b_.sub, "mul": b_.mul}[name](a, b, flags=["nsw"])
        wrapped = b_.sext(b_.trunc(exact, self.ir.IntType(32)), self.i64)
        with b_.if_then(b_.icmp_signed("!=", wrapped, exact), likely=False):
            bit = self.i64(1 << (FLAG_STRIDE + FLAG_OPS.index(name)))
            b_.store(b_.or_(b_.load(self.flags), bit), self.flags)
        return wrapped


__all__ = ["NarrowOps"]
