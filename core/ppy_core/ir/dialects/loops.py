"""The loops dialect: a typed Python function of scalar loops over arrays.

Structured control flow (`loops.for`, `loops.while`, `loops.if`, `break`,
`continue`, `return`), scalar ops with Python's meaning, and element loads and
stores whose bounds checks and effects are explicit. Locals live in named slots
(`loops.get` / `loops.set`): a slot is SSA-free, so loop-carried values need no
block arguments and a backend turns slots into registers (LLVM's mem2reg).

Every scalar value carries `py`, the Python type it stands for, because the same
bits mean different things: "int" (a Python int proven to fit 64 bits), "float"
(a Python float), "bool", "f64" (`np.float64`), "i64" (`np.int64`, wrapping), "fnum" (float or
np.float64, tagged at run time), "i32" / "u8" (an np.int32 / np.uint8, widened to
64 bits: an int32's + - * wrap at 32 bits with NumPy's warning, a uint8's ops are
the bitwise ones that stay in range).
The function's `func.func` carries `py_args` and `py_result` the same way.

    %i = loops.get {name = "i"} : () -> i64
    %x = loops.load %a, %i : (tensor<?xf64, "numpy">, i64) -> f64   (IndexError if out)
    %y = loops.binop %x, %c {op = "mul", py = "f64"} : (f64, f64) -> f64
    loops.store %b, %y, %i : (tensor<?xf64, "numpy">, f64, i64) -> ()
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Dialect, Operation, attribute, operand, region, result
from ppy_core.ir.dialects.loops_masked import MASKED_OPS
from ppy_core.ir.dialects.loops_vector import VECTOR_OPS
from ppy_core.ir.types import ScalarType, TensorType

#: "fnum": a float or an np.float64, which one known only at run time (a local
#: `s = 0.0` that becomes `s += a[i]`): a backend carries a tag beside the double
PY_KINDS: Final = ("int", "float", "bool", "f64", "i64", "fnum", "i32", "u8", "u32")
#: binary ops; which `py` kinds each takes is the front end's business (Python's)
BINOPS: Final = (
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "lshift",
    "rshift",
    "and",
    "or",
    "xor",
)
COMPARES: Final = ("lt", "le", "gt", "ge", "eq", "ne")
#: functions whose bits equal Python's everywhere (IEEE correctly rounded, or exact)
CALLS: Final = ("sqrt", "fabs", "abs", "min", "max", "copysign", "np_sqrt")


class _Scalar(Operation):
    """An op producing one scalar that stands for a Python value of kind `py`."""

    def verify_extra(self) -> None:
        py = self.attributes.get("py")
        if py is not None and py not in PY_KINDS:
            self.fail(f"unknown py kind {py!r}")


class ConstOp(_Scalar):
    """%c = loops.const {value = 2.0, py = "float"} : () -> f64"""

    name: ClassVar[str] = "loops.const"
    value = attribute((int, float, bool))
    py = attribute(str, one_of=PY_KINDS)
    out = result(ScalarType)


class GetOp(_Scalar):
    """Read local slot `name` (definitely assigned: the front end proved it)."""

    name: ClassVar[str] = "loops.get"
    slot = attribute(str)
    py = attribute(str, one_of=PY_KINDS)
    out = result(ScalarType)


class SetOp(Operation):
    """Write local slot `name`."""

    name: ClassVar[str] = "loops.set"
    slot = attribute(str)
    value = operand(ScalarType)


class BinOp(_Scalar):
    """Python's binary operator `op` on kind `py` (both operands already that kind).
    Raises where Python does: ZeroDivisionError for int and float division."""

    name: ClassVar[str] = "loops.binop"
    lhs = operand(ScalarType)
    rhs = operand(ScalarType)
    op = attribute(str, one_of=BINOPS)
    py = attribute(str, one_of=PY_KINDS)
    out = result(ScalarType)


class CompareOp(Operation):
    """%b = loops.compare %x, %y {op = "lt"} : (f64, f64) -> i1"""

    name: ClassVar[str] = "loops.compare"
    lhs = operand(ScalarType)
    rhs = operand(ScalarType)
    op = attribute(str, one_of=COMPARES)
    out = result(ScalarType)


class UnaryOp(_Scalar):
    """neg (`-x`), not (`not b`), pos (`+x`), invert (`~n`)."""

    name: ClassVar[str] = "loops.unary"
    source = operand(ScalarType)
    op = attribute(str, one_of=("neg", "not", "pos", "invert"))
    py = attribute(str, one_of=PY_KINDS)
    out = result(ScalarType)


class CastOp(_Scalar):
    """A conversion Python makes implicitly (int -> float) or explicitly
    (`float(n)`, `int(a[i])`); `py` is the result's kind."""

    name: ClassVar[str] = "loops.cast"
    source = operand(ScalarType)
    py = attribute(str, one_of=PY_KINDS)
    out = result(ScalarType)


class CallOp(_Scalar):
    """A `math` or builtin function from CALLS (sqrt raises ValueError below 0);
    "np_sqrt" is `np.sqrt` of a scalar: an np.float64, NaN and NumPy's invalid-value
    warning below 0."""

    name: ClassVar[str] = "loops.call"
    args = operand(ScalarType, variadic=True)
    fn = attribute(str, one_of=CALLS)
    py = attribute(str, one_of=PY_KINDS)
    out = result(ScalarType)


class ShortCircuitOp(Operation):
    """`lhs and <region>` / `lhs or <region>` on booleans: the region (ending in
    `loops.yield`) runs only when Python would evaluate the right side."""

    name: ClassVar[str] = "loops.short_circuit"
    lhs = operand(ScalarType)
    op = attribute(str, one_of=("and", "or"))
    rhs = region()
    out = result(ScalarType)


class DimOp(Operation):
    """`a.shape[axis]` / `len(a)`: a Python int."""

    name: ClassVar[str] = "loops.dim"
    array = operand(TensorType)
    axis = attribute(int)
    out = result(ScalarType)


class LoadOp(_Scalar):
    """An element; each index is bounds-checked (negative ones wrap, as NumPy's):
    out of range raises NumPy's IndexError. Result kind: the element's NumPy scalar."""

    name: ClassVar[str] = "loops.load"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory"})
    array = operand(TensorType)
    indices = operand(ScalarType, variadic=True)
    py = attribute(str, one_of=PY_KINDS)
    axes = attribute(tuple, optional=True)  # the axis each IndexError names (`a[i][j]`: 0, 0)
    out = result(ScalarType)

    def verify_extra(self) -> None:
        super().verify_extra()
        rank = self.operands[0].type.rank
        if rank is not None and rank != len(self.operands) - 1:
            self.fail(f"{len(self.operands) - 1} indices for an array of rank {rank}")


class DotOp(_Scalar):
    """`np.dot(u, v)` (kind "dot") or `u @ v` (kind "matmul") of two float64 vector
    views, as NumPy computes them (its BLAS `ddot` where NumPy calls it): an
    np.float64. Each view is an array operand indexed per axis as `views` says:
    "i" an index (one operand, bounds-checked as LoadOp), "s" a slice with step 1
    (two operands, Python's start and stop, None already made 0 / the length), "r"
    such a slice reversed (`np.flip(a[lo:hi])`: a negative stride); exactly one
    "s" or "r" per view. Lengths that differ raise NumPy's ValueError."""

    name: ClassVar[str] = "loops.dot"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory"})
    lhs = operand(TensorType)
    rhs = operand(TensorType)
    bounds = operand(ScalarType, variadic=True)
    kind = attribute(str, one_of=("dot", "matmul"))
    views = attribute(tuple)
    py = attribute(str, one_of=PY_KINDS)
    out = result(ScalarType)

    def verify_extra(self) -> None:
        super().verify_extra()
        want = 0
        for k, view in enumerate(self.attributes["views"]):
            rank = self.operands[k].type.rank
            slices = view.count("s") + view.count("r")
            if slices != 1 or set(view) - {"i", "s", "r"} or len(view) != rank:
                self.fail(f"view {view!r} of a rank-{rank} array")
            want += sum(1 if c == "i" else 2 for c in view)
        if want != len(self.operands) - 2:
            self.fail(f"{len(self.operands) - 2} bounds for views needing {want}")


class InplaceOp(Operation):
    """`X op= s` for a float64 array parameter or a view of one and a float64 scalar
    (`C *= beta`, `C[i, :j] += x`): NumPy's in-place ufunc, element by element, with
    its NaN and warnings. `views` as DotOp's, any number of "s" axes; the view's
    index checks come before nothing that could raise (the front end's order)."""

    name: ClassVar[str] = "loops.inplace"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory", "WriteMemory"})
    array = operand(TensorType)
    value = operand(ScalarType)
    bounds = operand(ScalarType, variadic=True)
    op = attribute(str, one_of=("add", "sub", "mul", "truediv"))
    views = attribute(str)

    def verify_extra(self) -> None:
        view = self.attributes["views"]
        rank = self.operands[0].type.rank
        if "s" not in view or set(view) - {"i", "s"} or len(view) != rank:
            self.fail(f"view {view!r} of a rank-{rank} array")
        want = sum(1 if c == "i" else 2 for c in view)
        if want != len(self.operands) - 2:
            self.fail(f"{len(self.operands) - 2} bounds for a view needing {want}")


class FlipUpdateOp(Operation):
    """`V op= s * np.flip(W)` (form "left"), `V op= np.flip(W) * s` ("right") or
    `V op= np.flip(W)` ("none", `scale` unused) for float64 vector views V and W
    (`views` as DotOp's, W's slice "r"), s a float64 scalar: NumPy's temporary
    `s * np.flip(W)` made in full first (so W may be V itself: the update reads the
    old values), then its in-place ufunc. Where NumPy's answer depends on what the
    function does not model (lengths that differ or broadcast, two different NaNs
    meeting in one operation) the call reruns as Python: the front end emits it
    only in functions that write no array but those they make up front."""

    name: ClassVar[str] = "loops.flip_update"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory", "WriteMemory"})
    target = operand(TensorType)
    source = operand(TensorType)
    scale = operand(ScalarType)
    bounds = operand(ScalarType, variadic=True)
    op = attribute(str, one_of=("add", "sub", "mul", "truediv"))
    form = attribute(str, one_of=("left", "right", "none"))
    views = attribute(tuple)

    def verify_extra(self) -> None:
        want = 0
        for k, (view, flip) in enumerate(zip(self.attributes["views"], "sr", strict=True)):
            rank = self.operands[k].type.rank
            if view.count(flip) != 1 or set(view) - {"i", flip} or len(view) != rank:
                self.fail(f"view {view!r} of a rank-{rank} array")
            want += sum(1 if c == "i" else 2 for c in view)
        if want != len(self.operands) - 3:
            self.fail(f"{len(self.operands) - 3} bounds for views needing {want}")


class OuterUpdateOp(Operation):
    """`X[:] = np.minimum(X, np.add.outer(u, v))` (fn "minimum", or "maximum") for a
    2-D int32/int64 array X and whole vector views u, v of X's dtype (`views` as
    DotOp's, each slice whole: its bounds 0 and the dim): NumPy's temporaries in
    full first (u and v as they were), integer addition wrapping. u's length must
    be X's rows and v's its columns (else the call runs as Python, before anything)."""

    name: ClassVar[str] = "loops.outer_update"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory", "WriteMemory"})
    target = operand(TensorType)
    lhs = operand(TensorType)
    rhs = operand(TensorType)
    bounds = operand(ScalarType, variadic=True)
    fn = attribute(str, one_of=("minimum", "maximum"))
    views = attribute(tuple)

    def verify_extra(self) -> None:
        want = 0
        for k, view in enumerate(self.attributes["views"]):
            rank = self.operands[k + 1].type.rank
            if view.count("s") != 1 or set(view) - {"i", "s"} or len(view) != rank:
                self.fail(f"view {view!r} of a rank-{rank} array")
            want += sum(1 if c == "i" else 2 for c in view)
        if want != len(self.operands) - 3:
            self.fail(f"{len(self.operands) - 3} bounds for views needing {want}")
        if self.operands[0].type.rank != 2:
            self.fail("the target is not a 2-D array")


class GatherDotOp(_Scalar):
    """`u @ x[idx]` / `np.dot(u, x[idx])` (or the gather on the left, `side`): x a 1-D
    float64 array, idx a 1-D int32/uint32/int64 view (`views[1]` "s"), u a vector
    view as DotOp's (`views[0]`); NumPy's temporary `x[idx]` first (negative indices
    wrap, the first out of range raises IndexError), then its dot of the two."""

    name: ClassVar[str] = "loops.gather_dot"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory"})
    vector = operand(TensorType)
    data = operand(TensorType)
    index = operand(TensorType)
    bounds = operand(ScalarType, variadic=True)
    kind = attribute(str, one_of=("dot", "matmul"))
    views = attribute(tuple)
    side = attribute(str, one_of=("left", "right"))
    py = attribute(str, one_of=PY_KINDS)
    out = result(ScalarType)

    def verify_extra(self) -> None:
        super().verify_extra()
        view, index = self.attributes["views"]
        rank = self.operands[0].type.rank
        slices = view.count("s") + view.count("r")
        if slices != 1 or set(view) - {"i", "s", "r"} or len(view) != rank:
            self.fail(f"view {view!r} of a rank-{rank} array")
        if index != "s" or self.operands[1].type.rank != 1 or self.operands[2].type.rank != 1:
            self.fail("a gather of a 1-D array by a 1-D view")
        want = sum(1 if c == "i" else 2 for c in view) + 2
        if want != len(self.operands) - 3:
            self.fail(f"{len(self.operands) - 3} bounds for views needing {want}")


class StoreOp(Operation):
    """`a[i, j] = v`, bounds-checked as LoadOp; earlier stores stay visible."""

    name: ClassVar[str] = "loops.store"
    effects: ClassVar[frozenset[str]] = frozenset({"WriteMemory"})
    array = operand(TensorType)
    value = operand(ScalarType)
    indices = operand(ScalarType, variadic=True)
    axes = attribute(tuple, optional=True)


class ForOp(Operation):
    """`for <slot> in range(lo, hi, step)` (step a nonzero constant); the slot holds
    each value in turn, as Python's loop variable."""

    name: ClassVar[str] = "loops.for"
    lo = operand(ScalarType)
    hi = operand(ScalarType)
    slot = attribute(str)
    step = attribute(int)
    body = region()


class WhileOp(Operation):
    """`while <cond>: <body>`; the cond region ends in `loops.yield %b`."""

    name: ClassVar[str] = "loops.while"
    cond = region()
    body = region()


class IfOp(Operation):
    """`if %c: <then> else: <else>`."""

    name: ClassVar[str] = "loops.if"
    cond = operand(ScalarType)
    then = region()
    orelse = region()


class YieldOp(Operation):
    """The value of a condition or short-circuit region."""

    name: ClassVar[str] = "loops.yield"
    is_terminator: ClassVar[bool] = True
    value = operand(ScalarType)


class BreakOp(Operation):
    name: ClassVar[str] = "loops.break"


class ContinueOp(Operation):
    name: ClassVar[str] = "loops.continue"


class ReturnOp(Operation):
    """Return the operand (none: Python's None)."""

    name: ClassVar[str] = "loops.return"
    values = operand(ScalarType, variadic=True)


LOOPS: Final = Dialect(
    "loops",
    (
        ConstOp,
        GetOp,
        SetOp,
        BinOp,
        CompareOp,
        UnaryOp,
        CastOp,
        CallOp,
        ShortCircuitOp,
        DimOp,
        LoadOp,
        DotOp,
        InplaceOp,
        FlipUpdateOp,
        OuterUpdateOp,
        GatherDotOp,
        StoreOp,
        ForOp,
        WhileOp,
        IfOp,
        YieldOp,
        BreakOp,
        ContinueOp,
        ReturnOp,
        *VECTOR_OPS,
        *MASKED_OPS,
    ),
)


def is_loops(func: object) -> bool:
    """Whether a `func.func` is a loops function (its body holds loops ops)."""
    attributes = getattr(func, "attributes", {})
    return "py_result" in attributes and "py_args" in attributes


__all__ = ["LOOPS", "PY_KINDS", "BINOPS", "COMPARES", "CALLS", "is_loops"]
