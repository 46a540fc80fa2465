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
  maximum/minimum, clip and comparisons: an int64 (int32) array, wrapping around as NumPy
  does (the guard refuses a Python int outside the type: NumPy raises OverflowError);
* the absolute value of a complex128 array: a float64 array (nothing else of complex
  arithmetic: NumPy runs it);
* int64 arrays with float64 arrays or Python floats under ``+ - * /``, and int64
  arrays under ``/``: a float64 array (NumPy casts the ints to float64 first);
* a mix of float32 and float64 arrays (NumPy promotes to float64), an operand that
  may be either (unannotated), int32 arrays with floats, int arrays under `**`, bool
  arrays (`+` of bools is `or`): None, NumPy runs them.

And what a dtype named as a value means: `np.float32` is typed `type[numpy.float32]`,
`np.dtype(...)` and `a.dtype` `numpy.dtype[float32]`, so `a.astype(np.float32)`,
`np.zeros(n, dtype="float32")` and `np.float32(1.5)` are typed by the dtype they name.
These types are hints like every other: a site's guard checks each operand's dtype.
"""

from __future__ import annotations

from typing import Any, Final

from ppy_core.interface.plugin import NOT_CONSTANT, CallContext
from ppy_core.ir.types import (
    F32,
    F64,
    I1,
    UNKNOWN,
    OpaqueType,
    ScalarType,
    TensorType,
    TupleType,
    Type,
)
from ppy_numpy import tables as T

#: element kinds of the arrays a kernel takes, and what a weak Python number becomes
FLOAT_KINDS = ("f64", "f32")
INT_KINDS = ("i64", "i32")
#: the operations whose integer results a kernel gives exactly (wrapping)
INT_OPS = frozenset({"add", "sub", "mul", "neg", "abs", "maximum", "minimum", "clip", "compare"})
#: the operations where an int64 array meets float64 in a kernel (NumPy casts the ints)
MIXED_OPS = frozenset({"add", "sub", "mul", "div"})


def elementwise_result(operands: tuple[Type, ...], op: str | None = None) -> TensorType | None:
    """The array type NumPy gives for elementwise `operands` under `op` (a tensor op
    name; None: a float-only function), or None (NumPy runs it).

    Shapes: the common shape when every known one agrees, else unknown."""
    arrays = [t for t in operands if isinstance(t, TensorType)]
    kinds = {a.element.kind for a in arrays}
    if kinds == {"c128"}:
        return _complex_result(operands, op)
    mixed = _mixed_result(operands, arrays, kinds, op)
    if mixed is not None:
        return mixed
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


def _complex_result(operands: tuple[Type, ...], op: str | None) -> TensorType | None:
    """`abs(z)` / `np.abs(z)` of one complex128 array: a float64 array (NumPy's SIMD
    hypot, which a kernel reproduces: ppy-llvm's `_complex`); any other complex
    operation None (NumPy runs it)."""
    if op != "abs" or len(operands) != 1:
        return None
    return TensorType(F64, operands[0].shape, T.LIBRARY)  # type: ignore[union-attr]


def _mixed_result(
    operands: tuple[Type, ...], arrays: list[TensorType], kinds: set[str], op: str | None
) -> TensorType | None:
    """int64 arrays meeting float64 (arrays or Python floats) under ``+ - * /``, and
    int64 arrays under ``/``: a float64 array. NumPy casts the ints to float64 (to
    nearest, as C does) and runs its float64 loop; the kernel converts as it loads."""
    if op not in MIXED_OPS or not kinds or not kinds <= {"f64", "i64"} or "i64" not in kinds:
        return None
    floats = "f64" in kinds or any(isinstance(t, ScalarType) and t.kind == "f64" for t in operands)
    if not floats and op != "div":
        return None  # ints alone: integer arithmetic (`_int_result`)
    if not all(isinstance(t, TensorType) or _weak(t) for t in operands):
        return None  # an operand the guard cannot pin as a number or one of these arrays
    shapes = {a.shape for a in arrays if a.shape is not None}
    return TensorType(F64, shapes.pop() if len(shapes) == 1 else None, T.LIBRARY)


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


def dtype_class(element: ScalarType) -> OpaqueType:
    """The type of a dtype class as a value (`np.float32`): `type[numpy.float32]`."""
    return OpaqueType(f"type[numpy.{T.DTYPE_NAMES[element.kind]}]")


def dtype_object(element: ScalarType) -> OpaqueType:
    """The type of a dtype object (`np.dtype("f4")`, `a.dtype`): `numpy.dtype[float32]`."""
    return OpaqueType(f"numpy.dtype[{T.DTYPE_NAMES[element.kind]}]")


_ELEMENTS: Final = frozenset(T.DTYPES.values())
_CLASSES: Final[dict[Type, ScalarType]] = {dtype_class(e): e for e in _ELEMENTS}
_DENOTED: Final[dict[Type, ScalarType]] = {
    **_CLASSES,
    **{dtype_object(e): e for e in _ELEMENTS},
}


def denoted(t: Type, value: Any = NOT_CONSTANT) -> ScalarType | None:
    """The element type a dtype argument names: a dtype class or object (by its type),
    or a string literal NumPy reads one way on every platform ("float32", "f4")."""
    if isinstance(value, str):
        return T.DTYPE_STRINGS.get(value)
    return _DENOTED.get(t)


def dtype_call(ctx: CallContext) -> Type | None:
    """`np.float32(x)` (and a dtype class called through a name), `np.dtype(x)` and
    `a.astype(x)`: the type of what they make, or None (not one of them, or the dtype
    or the argument not known)."""
    callee, args, constants, receiver = ctx.callee, ctx.args, ctx.constants, ctx.receiver
    if callee.endswith(".__call__") and receiver is not None and receiver in _CLASSES:
        return _scalar(_CLASSES[receiver], args[1:], constants[1:], ctx)  # `t = np.float32; t(1)`
    if callee in T.DTYPES and callee.startswith("numpy."):
        return _scalar(T.DTYPES[callee], args, constants, ctx)
    if callee == "numpy.dtype" and len(args) == 1 and not ctx.kwargs:
        element = denoted(args[0], constants[0] if constants else NOT_CONSTANT)
        return dtype_object(element) if element is not None else None
    if callee == "numpy.ndarray.astype" and isinstance(ctx.receiver, TensorType):
        given = _argument(ctx, 1, "dtype")
        element = denoted(*given) if given is not None else None
        return None if element is None else TensorType(element, ctx.receiver.shape, T.LIBRARY)
    return None


def created(ctx: CallContext, position: int) -> Type:
    """An array creation's type (`np.zeros`, `np.asarray`, `np.zeros_like`...): of the
    dtype it is given (by keyword, or at `position`, its place among the parameters);
    without one a `_like` call or a conversion of an array keeps the array's dtype and
    any other is assumed float64 (NumPy's default; the guard checks). A dtype that is
    given but not known (a variable, a builtins class) types nothing."""
    given = _argument(ctx, position, "dtype")
    if given is not None:
        element = denoted(*given)
        return TensorType(element, None, T.LIBRARY) if element is not None else UNKNOWN
    source = ctx.args[0] if ctx.args else None
    if isinstance(source, TensorType) and source.library == T.LIBRARY:
        if ctx.callee.endswith("_like"):
            return TensorType(source.element, source.shape, T.LIBRARY)
        if ctx.callee in T.CONVERSIONS:
            return TensorType(source.element, None, T.LIBRARY)
    return T.ARRAY


def axis_reduction(ctx: CallContext) -> TensorType | None:
    """`np.max(x, axis=-1, keepdims=True)`, `x.mean(axis=0)` of a float array (float64
    or float32): an array of its dtype, which NumPy keeps for these reductions of
    floats. Without `keepdims=True` typed only where the rank left is known to be at
    least 1 (a whole reduction is a scalar). None for anything else (another keyword,
    an axis that is no literal int, int or bool arrays, whose sums widen): NumPy's
    answer, untyped."""
    callee = ctx.callee
    if not (callee.startswith("numpy.") and callee[6:] in T.REDUCTIONS) or len(ctx.args) != 1:
        return None
    source = ctx.args[0]
    if not is_float_array(source) or set(ctx.kwargs) - {"axis", "keepdims"}:
        return None
    axis = ctx.kw_constants.get("axis", NOT_CONSTANT)
    if not isinstance(axis, int) or isinstance(axis, bool):
        return None
    keep = ctx.kw_constants.get("keepdims", False) if "keepdims" in ctx.kwargs else False
    if not isinstance(keep, bool):
        return None
    shape = source.shape  # type: ignore[union-attr]
    if not keep and (shape is None or len(shape) < 2):
        return None  # it may be a scalar
    # of unknown rank, as a view is: the IR's operands agree in rank, NumPy broadcasts
    return TensorType(source.element, None, T.LIBRARY)  # type: ignore[union-attr]


def histogram(ctx: CallContext) -> TupleType | None:
    """`np.histogram(a, bins)` of a float array: (hist, bin_edges). The counts are an
    np.intp array (int64 here; the guard checks), the sums with `weights=w` of a float
    array w's dtype; the edges have a's dtype for an int count of bins (of edges given
    as an array, or untyped bins, NumPy's promotion: untyped). None with `density` or
    another keyword (`range`, `bins` by keyword stay typed), or an untyped a."""
    if ctx.callee != T.HISTOGRAM or not ctx.args or not is_float_array(ctx.args[0]):
        return None
    if set(ctx.kwargs) - {"bins", "range", "weights"} or len(ctx.args) > 3:
        return None  # `density=`, positional `density`/`weights`: another dtype or unknown
    source: TensorType = ctx.args[0]  # type: ignore[assignment]
    weights = ctx.kwargs.get("weights")
    if weights is None or ctx.kw_constants.get("weights", NOT_CONSTANT) is None:
        counts: Type = TensorType(T.INTP, (None,), T.LIBRARY)
    elif is_float_array(weights):
        counts = TensorType(weights.element, (None,), T.LIBRARY)  # type: ignore[union-attr]
    else:
        counts = UNKNOWN
    bins = ctx.kwargs.get("bins", ctx.args[1] if len(ctx.args) > 1 else None)
    # edges given as an array (or a string rule of unknown type): NumPy's promotion
    edges = UNKNOWN if isinstance(bins, TensorType) or bins is UNKNOWN else source.element
    edges_type = TensorType(edges, (None,), T.LIBRARY) if edges is not UNKNOWN else UNKNOWN
    return TupleType((counts, edges_type))  # type: ignore[arg-type]


def _argument(ctx: CallContext, position: int, keyword: str) -> tuple[Type, Any] | None:
    """(type, literal value) of the argument given by `keyword` or at `position` (0: by
    keyword only), or None: not given, or given as a literal None (NumPy's default)."""
    if keyword in ctx.kwargs:
        found = (ctx.kwargs[keyword], ctx.kw_constants.get(keyword, NOT_CONSTANT))
    elif 0 < position < len(ctx.args):
        value = ctx.constants[position] if position < len(ctx.constants) else NOT_CONSTANT
        found = (ctx.args[position], value)
    else:
        return None
    return None if found[1] is None else found


def _scalar(
    element: ScalarType, args: tuple[Type, ...], constants: tuple[Any, ...], ctx: CallContext
) -> Type | None:
    """`np.float32(x)`: a scalar of `element` from a number or a string (or nothing: 0);
    an array of `element` from an array of known, non-zero rank (a 0-d one gives a
    scalar, an unknown rank may be either)."""
    if ctx.kwargs or len(args) > 1:
        return None
    if not args:
        return element
    arg, value = args[0], constants[0] if constants else NOT_CONSTANT
    if isinstance(arg, ScalarType) and arg.kind in ("f64", "f32", "i64", "i32", "i1"):
        return element
    if isinstance(value, str | int | float):
        return element
    if isinstance(arg, TensorType) and arg.shape:
        return TensorType(element, arg.shape, T.LIBRARY)
    return None


__all__ = [
    "FLOAT_KINDS",
    "axis_reduction",
    "created",
    "denoted",
    "dtype_call",
    "dtype_class",
    "dtype_object",
    "elementwise_result",
    "histogram",
    "is_float_array",
    "logical_result",
]
