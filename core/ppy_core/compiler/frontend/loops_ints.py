"""Typed loops, NumPy's small ints: np.int32 and np.uint8 scalars as NumPy 2 types them.

The mixin of `loops.LoopsBuilder`. An element of an int32 array is an np.int32, of a
uint8 array an np.uint8 (kinds "i32" and "u8": widened to 64 bits, their value
exact). Under NEP 50 a Python int beside one takes its type, and NumPy raises
OverflowError where the int does not fit it: each such int must be proven to fit
(its bound; for uint8 also its sign, read from the expression: `x & 255`, a
constant), else the function stays Python.

- np.int32 `+ - *` of np.int32s, or of one and a Python int below 2**31: they wrap at
  32 bits with NumPy's warning ("overflow encountered in scalar add"; the backend's
  `_loops_narrow`); `& | ^` are exact.
- np.uint8 `& | ^` with np.uint8s or ints proven in 0..255, `>>` by a constant 0..7:
  exact, never out of range.
- comparisons of either with ints and each other (exact: their values are ints);
  the truth of an int of any kind (`if b & 1:`) as `!= 0`;
- `max` / `min` of two of one kind (Python's builtins: one of the two objects);
- stores into int32 / uint8 / int64 / float64 arrays of a value every element holds.
"""

from __future__ import annotations

import ast
from typing import Any

from ppy_core.compiler.frontend.loops_expr import NARROW, Refused, Typed, ir_type
from ppy_core.ir.dialects import loops as L

#: the exact range of each NumPy int kind a Python int beside it must fit (NEP 50)
_RANGE = {"i32": (-(2**31), 2**31 - 1), "u8": (0, 255)}
#: the ops of each kind that compile (an int32's + - * may wrap: NumPy's warning)
_OPS = {"i32": ("add", "sub", "mul", "and", "or", "xor"), "u8": ("and", "or", "xor", "rshift")}
_INTS = ("int", "i64", "i32", "u8")
#: np.uint32 (NPBench's CSR indices): exact as an int; no arithmetic of its own yet
_RANGE["u32"] = (0, 2**32 - 1)
_OPS["u32"] = ()


class NarrowInts:
    """np.int32 / np.uint8 scalar rules; mixed into LoopsBuilder."""

    emit: Any
    cast: Any
    const: Any
    expr: Any

    def narrow_binop(self, node: ast.BinOp, op: str, a: Typed, b: Typed) -> Typed | None:
        """`a op b` where either is an np.int32 / np.uint8; None where neither is."""
        kinds = {a.py, b.py} & set(NARROW)
        if not kinds:
            return None
        where = f"line {node.lineno}: `{ast.unparse(node)}`"
        if len(kinds) != 1 or not {a.py, b.py} <= {*kinds, "int"}:
            raise Refused(node, f"{where}: {a.py} {op} {b.py} (NumPy promotes) stays Python")
        (kind,) = kinds
        if op not in _OPS[kind]:
            raise Refused(node, f"{where}: np.{_NAME[kind]} `{op}` does not compile yet")
        for side, t in ((node.left, a), (node.right, b)):
            if t.py == "int" and not _fits(side, t, kind):
                lo, hi = _RANGE[kind]
                raise Refused(
                    node,
                    f"{where}: the Python int is not proven in {lo}..{hi}, where NumPy "
                    f"takes it as an np.{_NAME[kind]} (else it raises OverflowError)",
                    "E1061",
                )
        if op == "rshift" and not (
            isinstance(node.right, ast.Constant)
            and type(node.right.value) is int
            and 0 <= node.right.value < 8
        ):
            raise Refused(node, f"{where}: an np.uint8 shift count must be a constant in 0..7")
        if kind == "u8" and op == "rshift" and b.py != "int":
            raise Refused(node, f"{where}: shift by an np.uint8 stays Python")
        out = self.emit(L.BinOp, [a.value, b.value], ir_type(kind), op=op, py=kind)
        return Typed(out.results[0], kind)

    def as_int(self, t: Typed) -> Typed:
        """An np.int32 / np.uint8 compared: its value, a Python int of its bound."""
        if t.py in NARROW:
            return Typed(self.cast(t, "int").value, "int", NARROW[t.py])
        return t

    def truth(self, node: ast.expr, t: Typed) -> Typed:
        """`if x:` of an int of any kind: `x != 0`; a bool is itself."""
        if t.py == "bool":
            return t
        if t.py not in _INTS:
            raise Refused(
                node, f"line {node.lineno}: the truth of a {t.py} does not compile; compare it"
            )
        value = self.cast(self.as_int(t), "int") if t.py != "int" else t
        zero = self.const(0, "int")
        out = self.emit(L.CompareOp, [value.value, zero.value], ir_type("bool"), op="ne")
        return Typed(out.results[0], "bool")

    def extreme_operand(self, node: ast.expr, assigned: set[str]) -> Typed:
        """An operand of builtin `max` / `min`: a number of any kind (the two must be of
        one kind, which the caller checks: Python returns one of the objects)."""
        t = self.expr(node, assigned)
        if t.py == "bool":
            raise Refused(node, f"line {node.lineno}: a bool where a number is needed")
        return t

    def narrow_store(self, kind: str, value: Typed, stmt: ast.stmt) -> Typed:
        """The value stored into an array of `kind` when either is narrow: one every
        element of that kind holds exactly (NumPy's assignment), else Refused."""
        where = f"line {stmt.lineno}: `{ast.unparse(stmt).splitlines()[0]}`"
        if value.py == kind:
            return value
        if kind == "i32" and value.py == "int" and value.bound < 2**31:
            return value  # NumPy assigns a Python int that fits exactly
        if kind == "i32" and value.py == "u8":
            return value
        if kind == "i64" and value.py in NARROW:
            return value  # widened: every np.int32 / np.uint8 is an int64
        if kind == "f64" and value.py in NARROW:
            return self.cast(self.as_int(value), "float")  # exact: below 2**53
        raise Refused(
            stmt, f"{where}: stores a {value.py} into an np.{_NAME.get(kind, kind)} array"
        )


_NAME = {"i32": "int32", "u8": "uint8", "u32": "uint32", "i64": "int64", "f64": "float64"}


def _fits(node: ast.expr, t: Typed, kind: str) -> bool:
    """Whether the Python int `node` (typed `t`) is proven inside `kind`'s range."""
    hi = _RANGE[kind][1]  # |value| <= bound: within int32 once bound <= its top
    return t.bound <= hi and (kind == "i32" or _nonnegative(node))


def _nonnegative(node: ast.expr) -> bool:
    """A Python int expression that cannot be negative, read from its form."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int and node.value >= 0
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.BitAnd):  # x & m with m >= 0 lies in 0..m
            return _nonnegative(node.left) or _nonnegative(node.right)
        if isinstance(node.op, ast.BitOr | ast.BitXor):
            return _nonnegative(node.left) and _nonnegative(node.right)
        if isinstance(node.op, ast.RShift | ast.FloorDiv):
            return _nonnegative(node.left) and _nonnegative(node.right)
        if isinstance(node.op, ast.Mod):  # Python's % takes the divisor's sign
            return isinstance(node.right, ast.Constant) and _nonnegative(node.right)
    return False


__all__ = ["NarrowInts"]
