"""NumPy 2's result dtypes for the elementwise operations the plugin fuses.

Only what a kernel reproduces exactly converges; everything else returns None and
NumPy runs it:

* float64 arrays (and operands the run-time guard checks are float64 arrays) with
  Python numbers: a float64 array;
* float32 arrays with Python numbers: a float32 array. NumPy 2 (NEP 50) treats a
  Python float or int as *weak*: it is cast to float32 and the arithmetic is float32.
  The guard accepts only such weak numbers (and np.float32) there: an `np.float64`
  or a 0-d float64 array is a strong operand that promotes to float64, so a call
  passing one runs NumPy;
* int64 (or int32) arrays with Python ints, under ``+ - *``, negation, abs,
  maximum/minimum and comparisons: an int64 (int32) array, wrapping around as NumPy
  does (the guard refuses a Python int outside the type: NumPy raises OverflowError);
* a mix of float32 and float64 arrays (NumPy promotes to float64), an operand that
  may be either (unannotated), int arrays under `/`, `**` or with a float (float64
  results), bool arrays (`+` of bools is `or`): None, NumPy runs them.
"""

from __future__ import annotations

from ppy_core.ir.types import F32, F64, I1, ScalarType, TensorType, Type
from ppy_numpy import tables as T

#: element kinds of the arrays a kernel takes, and what a weak Python number becomes
FLOAT_KINDS = ("f64", "f32")
INT_KINDS = ("i64", "i32")
#: the operations whose integer results a kernel gives exactly (wrapping)
INT_OPS = frozenset({"add", "sub", "mul", "neg", "abs", "maximum", "minimum", "compare"})


def elementwise_result(operands: tuple[Type, ...], op: str | None = None) -> TensorType | None:
    """The array type NumPy gives for elementwise `operands` under `op` (a tensor op
    name; None: a float-only function), or None (NumPy runs it).

    Shapes: the common shape when every known one agrees, else unknown."""
    arrays = [t for t in operands if isinstance(t, TensorType)]
    kinds = {a.element.kind for a in arrays}
    if len(kinds) == 1 and kinds <= set(INT_KINDS):
        return _int_result(operands, arrays, op)
    if not kinds <= set(FLOAT_KINDS) or len(kinds) > 1:
        return None  # bools, or float32 meeting float64: NumPy's promotion
    element = F32 if kinds == {"f32"} else F64
    if element is F32 and not all(isinstance(t, TensorType) or _weak(t) for t in operands):
        return None  # an operand that may be a float64 array would promote
    shapes = {a.shape for a in arrays if a.shape is not None}
    shape = shapes.pop() if len(shapes) == 1 else None
    return TensorType(element, shape, T.LIBRARY)


def logical_result(operands: tuple[Type, ...]) -> TensorType | None:
    """`&`, `|`, `^`, `~` (and np.logical_*) of bool arrays: a bool array. Only bool
    arrays (the guard checks each); with an int or a Python bool NumPy computes
    bitwise ints or promotes, and runs it."""
    if not operands or not all(
        isinstance(t, TensorType) and t.library == T.LIBRARY and t.element.kind == "i1"
        for t in operands
    ):
        return None
    shapes = {t.shape for t in operands if t.shape is not None}  # type: ignore[union-attr]
    return TensorType(I1, shapes.pop() if len(shapes) == 1 else None, T.LIBRARY)


def _int_result(
    operands: tuple[Type, ...], arrays: list[TensorType], op: str | None
) -> TensorType | None:
    """Integer arrays with Python ints under a wrapping op: the arrays' int type."""
    if op not in INT_OPS:
        return None  # `/` and `**` of ints, float functions: NumPy's loops
    if not all(
        isinstance(t, TensorType) or (isinstance(t, ScalarType) and t.kind == "i64")
        for t in operands
    ):
        return None  # a float or an unknown operand promotes
    shapes = {a.shape for a in arrays if a.shape is not None}
    shape = shapes.pop() if len(shapes) == 1 else None
    return TensorType(arrays[0].element, shape, T.LIBRARY)


def _weak(t: Type) -> bool:
    """A Python number (NumPy 2's weak scalar; the guard checks it is one)."""
    return isinstance(t, ScalarType) and t.kind in ("f64", "i64")


def is_float_array(t: Type) -> bool:
    """A NumPy array of a float kind a kernel computes in (float64 or float32)."""
    return isinstance(t, TensorType) and t.library == T.LIBRARY and t.element.kind in FLOAT_KINDS


__all__ = ["FLOAT_KINDS", "elementwise_result", "is_float_array", "logical_result"]
