"""The `numpy` plugin: what the compiler knows of NumPy.

This module imports no NumPy: `fingerprint()` and `detected()` import it, once,
when first asked. The hooks read the tables of `ppy_numpy.tables`: arrays are
typed with dtype and shape refinements, and elementwise arithmetic, comparisons,
`where` and whole-array reductions converge onto the tensor dialect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.plugin import (
    NOT_CONSTANT,
    AttributeContext,
    CallAnswer,
    CallContext,
    Converge,
    OperatorContext,
    Plugin,
    SubscriptContext,
)
from ppy_core.interface.specs import DialectOperationSpec, IntrinsicSpec
from ppy_core.ir.types import (
    F32,
    F64,
    I1,
    I64,
    NONE,
    UNKNOWN,
    OpaqueType,
    ScalarType,
    TensorType,
    Type,
)
from ppy_numpy import dtypes, surface
from ppy_numpy import tables as T
from ppy_numpy.build import NumpyBuild, probe


class NumpyPlugin(Plugin):
    """Teaches the compiler NumPy (claims the top-level module `numpy`)."""

    name: ClassVar[str] = "numpy"
    modules: ClassVar[tuple[str, ...]] = ("numpy",)
    version: ClassVar[str] = "2"

    def fingerprint(self) -> str:
        """`v2:numpy=VERSION:simd=BASELINE+DISPATCHED:blas=NAME/VERSION`; the SIMD part
        lists the baseline and the dispatch targets enabled on this CPU, since which
        loops NumPy runs (and so its last bits) depends on them."""
        build = probe()
        if build is None:
            return f"v{self.version}:numpy=none"
        simd = ",".join(build.baseline) + "+" + ",".join(build.dispatched)
        return f"v{self.version}:numpy={build.version}:simd={simd}:blas={build.blas}"

    def detected(self) -> Mapping[str, str]:
        """NumPy's version and place, its SIMD baseline and dispatch, its BLAS."""
        build = probe()
        if build is None:
            return {"numpy": "not installed"}
        return {
            "numpy": f"{build.version} ({build.path})",
            "simd baseline": " ".join(build.baseline) or "none",
            "simd dispatched": f"{' '.join(build.dispatched) or 'none'} "
            f"(build targets: {' '.join(build.dispatchable) or 'none'})",
            "blas": build.blas_detail,
        }

    # -- typing -----------------------------------------------------------------------
    def external_types(self) -> Mapping[str, Type]:
        return {
            "numpy.ndarray": T.ARRAY,
            "numpy.float64": F64,
            "numpy.float32": F32,
            # an np.int64 meets int64 and float64 arrays as a Python int does (the same
            # result dtype); with int32 or float32 arrays it promotes, which the guards
            # check (they take it only beside int64 arrays or in a float64 kernel)
            "numpy.int64": I64,
            T.GENERATOR: _GENERATOR,
        }

    def speculative_array(self) -> Type | None:
        """Unannotated leaves may be float64 arrays: the dispatcher's guard checks each
        one is an exact, C-contiguous float64 ndarray and runs Python otherwise."""
        return T.GUESS

    def subscript(self, ctx: SubscriptContext) -> Type | None:
        if ctx.in_annotation and ctx.qualname in ("numpy.typing.NDArray", "numpy.ndarray"):
            names = [n for n in ctx.index_names if isinstance(n, str)]
            element = next((T.DTYPES[n] for n in names if n in T.DTYPES), None)
            if element is None and ctx.qualname == "numpy.ndarray" and ctx.index:
                element = _dtype_of_generic(ctx.index_names)
            return TensorType(element or F64, None, T.LIBRARY) if element else T.ARRAY
        return None

    def attribute_type(self, ctx: AttributeContext) -> Type | None:
        qualname = f"{ctx.owner}.{ctx.name}"
        if ctx.owner and qualname in T.FLOAT_CONSTANTS:
            return F64
        if ctx.owner == "numpy" and qualname in T.DTYPES:  # `np.float32` as a value
            return dtypes.dtype_class(T.DTYPES[qualname])
        return NONE if qualname == "numpy.newaxis" else None

    def instance_attribute(self, ctx: AttributeContext) -> Type | None:
        t = ctx.owner_type
        if not _is_array(t):
            return None
        if ctx.name in ("size", "ndim", "itemsize", "nbytes"):
            return I64
        if ctx.name == "T":
            return t
        if ctx.name == "dtype":
            return dtypes.dtype_object(t.element)  # type: ignore[union-attr]
        if surface.missing_attribute(ctx.name):
            ctx.report(
                Diagnostic(
                    "E1003",
                    f"a NumPy array has no attribute {ctx.name!r}",
                    "see dir(numpy.ndarray) for what it has",
                    ctx.location,
                )
            )
        return None

    def call(self, ctx: CallContext) -> CallAnswer | None:
        if ctx.args and (ctx.kw_constants.get("axis") is not None):
            surface.check_axis(ctx, ctx.args[0])
        if _writes(ctx):  # `np.add(a, b, out=c)`, `np.copyto(a, b)`: an array is written
            return CallAnswer(UNKNOWN, effects=frozenset({"ReadMemory", "WriteMemory"}))
        if ctx.callee in T.CREATION or ctx.callee in T.JOINS:
            return CallAnswer(dtypes.created(ctx, T.DTYPE_POSITIONS.get(ctx.callee, 0)))
        typed = dtypes.dtype_call(ctx) or surface.indexed(ctx)
        if typed is not None:  # `np.float32(x)`, `a.astype(t)`, the checker's `a[i]`
            return CallAnswer(typed)
        if ctx.callee == "numpy.random.default_rng":
            return CallAnswer(_GENERATOR)
        if ctx.callee.startswith(T.GENERATOR + "."):
            return _generator_sample(ctx)
        if ctx.callee in T.LINALG:
            op = T.LINALG[ctx.callee]
            return CallAnswer(
                UNKNOWN, lowering=DialectOperationSpec(f"linalg.{op}", {"target": ctx.callee})
            )
        if ctx.callee == "numpy.ndarray.item" and _is_array(ctx.receiver):
            element = ctx.receiver.element  # type: ignore[union-attr]
            return CallAnswer(element if element.kind in ("f64", "i64", "i1") else UNKNOWN)
        counted = dtypes.histogram(ctx)  # `np.histogram(r, n)[0]`: int64 counts
        if counted is not None:
            return CallAnswer(counted)
        reduced = dtypes.axis_reduction(ctx)  # `np.max(x, axis=-1, keepdims=True)`
        if reduced is not None:
            return CallAnswer(reduced)
        converge = self.tensor_operation(ctx)
        if converge is not None:
            return CallAnswer(converge.result, lowering=_intrinsic(ctx.callee))
        if _scalar_math(ctx):
            return CallAnswer(F64)  # np.sin(1.5) is a numpy.float64
        return None

    def adjust_call(self, ctx: CallContext) -> CallContext | None:
        """Drop keywords whose literal value is NumPy's default (`axis=None`, `out=None`,
        `dtype=None`, `keepdims=False`, `where=True`): the call means the same without."""
        defaults = _defaults(ctx.callee)
        dropped = {
            k
            for k, value in ctx.kw_constants.items()
            if k in defaults and value is defaults[k]  # None/True/False: `is` is exact
        }
        if not dropped:
            return None
        return dataclasses.replace(
            ctx,
            kwargs={k: t for k, t in ctx.kwargs.items() if k not in dropped},
            kw_constants={k: v for k, v in ctx.kw_constants.items() if k not in dropped},
        )

    def call_alias(self, ctx: CallContext) -> str | None:
        prefix = "numpy.ndarray."
        if ctx.callee.startswith(prefix) and ctx.callee[len(prefix) :] in T.METHOD_ALIASES:
            return f"numpy.{ctx.callee[len(prefix) :]}"
        return None

    # -- convergence ---------------------------------------------------------------
    def operator(self, ctx: OperatorContext) -> Converge | Type | None:
        if ctx.in_place:
            return self._in_place(ctx)
        operands = _with_constants(ctx.operands, ctx.constants)
        if not any(_is_array(t) for t in operands):
            return None  # Python numbers: the core types them (its `arithmetic`)
        if ctx.op in T.LOGICAL_OPERATORS:
            logic = dtypes.logical_result(operands)
            op = T.LOGICAL_OPERATORS[ctx.op]
            return Converge("tensor.logical", logic, {"op": op}) if logic else None
        if not all(map(_fusible, operands)):
            return None
        kind = "neg" if ctx.op == "USub" else T.BINARY_OPERATORS.get(ctx.op)
        kind = "compare" if ctx.op in T.COMPARE_OPERATORS else kind
        result = _elementwise_result(operands, kind)
        if result is None:
            return None
        if ctx.op == "USub":
            return Converge("tensor.neg", result)
        if ctx.op in T.BINARY_OPERATORS:
            return Converge(f"tensor.{T.BINARY_OPERATORS[ctx.op]}", result)
        if ctx.op in T.COMPARE_OPERATORS:
            return Converge(
                "tensor.compare", _with_element(result, I1), {"pred": T.COMPARE_OPERATORS[ctx.op]}
            )
        if ctx.op == "Pow":
            return _power(ctx, result)
        return None

    def _in_place(self, ctx: OperatorContext) -> Converge | Type | None:
        """`t OP= v`: on an ndarray `t`, NumPy's in-place ufunc leaves `t` itself (its
        dtype, its shape) or raises (`same_kind` casting), whatever `v`'s dtype, where `v`
        is an ndarray or a number (an unknown object may take the operation over:
        `__array_ufunc__ = None`); on anything else (a scalar `t`) it is `t = t OP v`."""
        operands = _with_constants(ctx.operands, ctx.constants)
        if _is_array(operands[0]) and all(
            _is_array(t) or isinstance(t, ScalarType) for t in operands
        ):
            return operands[0]
        return self.operator(dataclasses.replace(ctx, in_place=False))

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        callee, args = ctx.callee, _with_constants(ctx.args, ctx.constants)
        if callee == T.CLIP and not ctx.kwargs:
            return _clip(args, ctx.constants)
        if callee in T.LOGICAL_FUNCTIONS and not ctx.kwargs:
            logic = dtypes.logical_result(args)
            op = T.LOGICAL_FUNCTIONS[callee]
            ok = logic is not None and len(args) == (1 if op == "not" else 2)
            return Converge("tensor.logical", logic, {"op": op}) if ok else None  # type: ignore[arg-type]
        if ctx.kwargs and _is_reduction(callee):
            return _row_reduction(ctx)
        if ctx.kwargs or not all(map(_fusible, args)):
            return None  # out=, where=, dtype=, axis=...: NumPy's own business
        if callee == T.OUTER:
            return _outer(args)
        if callee.startswith("numpy.") and callee[6:] in T.REDUCTIONS and len(args) == 1:
            if _is_float(args[0]) and not isinstance(args[0], ScalarType):
                return Converge("tensor.reduce", F64, {"op": T.REDUCTIONS[callee[6:]]})
            return None
        if callee == "builtins.abs":  # abs(x) is np.absolute(x) for an array x only
            result = _elementwise_result(args, "abs") if len(args) == 1 else None
            if result is None or not isinstance(args[0], TensorType):
                return None
            return Converge("tensor.abs", result if _is_complex(args[0]) else args[0])
        if callee == "numpy.fabs" and any(map(_is_complex, args)):
            return None  # NumPy's fabs has no complex loop: it raises
        if not any(_is_array(_guessed(t)) for t in args):
            return None  # scalars only: NumPy's scalar path (a leaf of a larger site)
        if callee == "numpy.where":
            return _where(args, ctx.constants)
        kind = T.BINARY_FUNCTIONS.get(callee) or T.SIGN_FUNCTIONS.get(callee, "")[7:]
        kind = "compare" if callee in T.COMPARE_FUNCTIONS else kind
        result = _elementwise_result(args, kind or None)
        if result is None:
            return None
        if callee in T.BINARY_FUNCTIONS and len(args) == 2:
            return Converge(f"tensor.{T.BINARY_FUNCTIONS[callee]}", result)
        if callee in T.LOOP_BINARY_FUNCTIONS and len(args) == 2:
            return Converge("tensor.binary", result, {"op": T.LOOP_BINARY_FUNCTIONS[callee]})
        if callee in T.COMPARE_FUNCTIONS and len(args) == 2:
            return Converge(
                "tensor.compare", _with_element(result, I1), {"pred": T.COMPARE_FUNCTIONS[callee]}
            )
        if callee in T.UNARY_FUNCTIONS and len(args) == 1:
            return Converge("tensor.unary", result, {"op": T.UNARY_FUNCTIONS[callee]})
        if callee in T.SIGN_FUNCTIONS and len(args) == 1:
            return Converge(T.SIGN_FUNCTIONS[callee], result)
        return None


_UFUNC_INPUTS: Final = (
    (T.BINARY_FUNCTIONS, 2),
    (T.LOOP_BINARY_FUNCTIONS, 2),
    ((T.CLIP,), 3),
    (T.COMPARE_FUNCTIONS, 2),
    (T.UNARY_FUNCTIONS, 1),
    (T.SIGN_FUNCTIONS, 1),
)


def _ufunc_inputs(callee: str) -> int:
    """How many inputs the ufunc `callee` takes (0: not one of ours)."""
    return next((n for table, n in _UFUNC_INPUTS if callee in table), 0)


def _is_reduction(callee: str) -> bool:
    return callee.startswith("numpy.") and callee[6:] in T.REDUCTIONS


#: reductions whose rows along the last axis a kernel reduces in NumPy's order (a
#: float sum pairwise in its own dtype; max and min of numbers, which NaN or a zero
#: extremum hand back to NumPy at run time)
ROW_REDUCTIONS: Final = ("add", "max", "min")


def _row_reduction(ctx: CallContext) -> Converge | None:
    """`np.sum(x, axis=-1)`, `np.max(x, axis=-1, keepdims=True)` of a float64 or
    float32 array: `tensor.reduce {axis = -1}` holding the call's keywords (the core
    lets those converge), an array of x's dtype. None for another axis or keyword."""
    reduced = dtypes.axis_reduction(ctx)
    op = T.REDUCTIONS[ctx.callee[6:]]
    if reduced is None or op not in ROW_REDUCTIONS or ctx.kw_constants.get("axis") != -1:
        return None
    attributes: dict[str, Any] = {"op": op, "axis": -1}
    if "keepdims" in ctx.kwargs:
        attributes["keepdims"] = ctx.kw_constants["keepdims"]
    return Converge("tensor.reduce", reduced, attributes)


def _defaults(callee: str) -> Mapping[str, Any]:
    if _is_reduction(callee):
        return T.REDUCTION_DEFAULTS
    return T.UFUNC_DEFAULTS if _ufunc_inputs(callee) else {}


def _writes(ctx: CallContext) -> bool:
    """Whether the call writes an array it is given: an `out` (by keyword, or a ufunc's
    positional argument after its inputs) that is not the literal None, or a call that
    writes in place (`T.WRITES`)."""
    if ctx.callee in T.WRITES:
        return True
    inputs = _ufunc_inputs(ctx.callee)
    if not inputs and not _is_reduction(ctx.callee):
        return False
    if "out" in ctx.kwargs and ctx.kw_constants.get("out", NOT_CONSTANT) is not None:
        return True
    return inputs > 0 and len(ctx.args) > inputs


def _intrinsic(callee: str) -> IntrinsicSpec | None:
    """How a converged unary function lowers: the intrinsic of its name (`np.sin` ->
    "sin", `np.fabs` -> "abs"); a backend that does not implement it leaves the site."""
    if callee in T.UNARY_FUNCTIONS:
        return IntrinsicSpec(T.UNARY_FUNCTIONS[callee])
    if callee in T.SIGN_FUNCTIONS:
        return IntrinsicSpec(T.SIGN_FUNCTIONS[callee].removeprefix("tensor."))
    return None


def _outer(args: tuple[Type, ...]) -> Converge | None:
    """`np.outer(u, v)` of two arrays of rank 1 (exactly: a vector's ravel is itself) is
    `u[:, None] * v[None, :]`, NumPy's `multiply` of the two views; the core takes the
    views only where the call's guard proves the ranks (`Converge.views`)."""
    vectors = [t for t in args if isinstance(t, TensorType) and t.rank == 1]
    if len(args) != 2 or len(vectors) != 2 or not all(map(_is_array, vectors)):
        return None
    result = _elementwise_result(args, "mul")
    if result is None:
        return None
    return Converge("tensor.mul", TensorType(result.element, None, T.LIBRARY), views=T.OUTER_VIEWS)


def _where(args: tuple[Type, ...], constants: tuple[Any, ...]) -> Converge | None:
    """np.where(mask, x, y) with the mask computed in the site. Its dtype is float64
    only if a branch is surely float: an array (the guard checks float64) or a float
    literal; two Python-number variables could be two ints at run time (an int array)."""
    if len(args) != 3:
        return None
    cond = args[0]
    if not (isinstance(cond, TensorType) and cond.element.kind == "i1"):
        return None  # a mask computed elsewhere: NumPy's where takes it
    consts = (*constants, NOT_CONSTANT, NOT_CONSTANT, NOT_CONSTANT)[1:3]
    if not any(
        (_is_float(t) and not isinstance(t, ScalarType))
        or dtypes.is_float_array(t)
        or isinstance(c, float)
        for t, c in zip(args[1:], consts, strict=True)
    ):
        return None  # no sure float branch: NumPy's where may give an int array
    branches = _elementwise_result(args[1:])
    return Converge("tensor.select", branches) if branches else None


def _clip(args: tuple[Type, ...], constants: tuple[Any, ...]) -> Converge | None:
    """`np.clip(x, lo, hi)` as NumPy 2's `_clip` dispatches it: both bounds given, its
    clip ufunc; a literal None bound, np.minimum / np.maximum of the other; both None
    (NumPy: positive, a copy) stays NumPy; so do operands NumPy would promote."""
    if len(args) != 3:
        return None
    consts = (*constants, NOT_CONSTANT, NOT_CONSTANT, NOT_CONSTANT)[:3]
    given = tuple(k for k in range(3) if not (k and consts[k] is None))
    operands = tuple(args[k] for k in given)
    if len(given) == 1 or not all(map(_fusible, operands)):
        return None
    if not isinstance(_guessed(args[0]), TensorType):
        return None  # np.clip of a Python number: NumPy's scalar path
    result = _elementwise_result(operands, "clip")
    if result is None:
        return None
    if len(given) == 3:
        return Converge("tensor.clip", result)
    op = "tensor.minimum" if given == (0, 2) else "tensor.maximum"
    return Converge(op, result, operands=given)


def _with_constants(types: tuple[Type, ...], constants: tuple[Any, ...]) -> tuple[Type, ...]:
    """Operand types, with `-3` / `-2.5` (unknown to the typer) typed by their value."""
    out = list(types)
    for i, value in enumerate(constants[: len(out)]):
        if out[i] is UNKNOWN and isinstance(value, int | float) and not isinstance(value, bool):
            out[i] = F64 if isinstance(value, float) else I64
    return tuple(out)


_GENERATOR: Final = OpaqueType(T.GENERATOR)


def _generator_sample(ctx: CallContext) -> CallAnswer | None:
    """`rng.standard_normal(n)`: a float64 array (with a size), a float (without)."""
    position = T.GENERATOR_FLOAT_SIZE.get(ctx.callee[len(T.GENERATOR) + 1 :])
    if position is None or set(ctx.kwargs) - {"size", "loc", "scale", "low", "high"}:
        return None  # dtype=, out=, integers(), choice(): not a plain float64 sample
    given = len(ctx.args) - (ctx.receiver is not None)  # args[0] is the generator
    sized = given > position or "size" in ctx.kwargs
    return CallAnswer(T.ARRAY if sized else F64)


def _is_array(t: Type | None) -> bool:
    return isinstance(t, TensorType) and t.library == T.LIBRARY


def _guessed(t: Type) -> Type:
    """An operand as the fast path takes it: an Unknown one is the guess every
    unannotated leaf gets (`speculative_array`'s answer; the guard checks it)."""
    return T.GUESS if t is UNKNOWN else t


def _is_complex(t: Type) -> bool:
    return isinstance(t, TensorType) and t.element.kind == "c128"


def _is_float(t: Type) -> bool:
    """A float64 operand (an array or an f64 scalar, an Unknown one as `_guessed`)."""
    t = _guessed(t)
    if isinstance(t, TensorType):
        return _is_array(t) and t.element.kind == "f64"
    return isinstance(t, ScalarType) and t.kind == "f64"


def _scalar_math(ctx: CallContext) -> bool:
    """`np.sin(x)`, `np.maximum(x, 2)` of Python numbers, one a float: a numpy.float64."""
    if ctx.kwargs or not ctx.args:
        return False
    if not any(
        ctx.callee in table
        for table in (
            T.UNARY_FUNCTIONS,
            T.BINARY_FUNCTIONS,
            T.LOOP_BINARY_FUNCTIONS,
            T.SIGN_FUNCTIONS,
        )
    ):
        return False
    args = _with_constants(ctx.args, ctx.constants)
    kinds = [t.kind if isinstance(t, ScalarType) else "" for t in args]
    return all(k in ("f64", "i64") for k in kinds) and "f64" in kinds


def _fusible(t: Type) -> bool:
    """An operand the fast path may take: a NumPy array or a Python number (an Unknown
    one as `_guessed`: the run-time guard decides)."""
    t = _guessed(t)
    if _is_array(t):
        return True
    return isinstance(t, ScalarType) and t.kind in ("f64", "i64")


def _elementwise_result(operands: tuple[Type, ...], op: str | None = None) -> TensorType | None:
    """float64 arrays in, a float64 array out; float32 arrays with Python numbers, a
    float32 array; int arrays with Python ints under a wrapping `op`, an int array
    (NumPy 2's rules: `dtypes`). Bool arrays are no operands here: NumPy's `+` of two
    is `or`, `-` of one an error."""
    return dtypes.elementwise_result(operands, op)


def _with_element(t: TensorType, element: ScalarType) -> TensorType:
    return TensorType(element, t.shape, t.library)


def _power(ctx: OperatorContext, result: TensorType) -> Converge | None:
    exponent = ctx.constants[1] if len(ctx.constants) > 1 else NOT_CONSTANT
    if _is_array(ctx.operands[0]) and not _is_array(ctx.operands[1]):
        if exponent is NOT_CONSTANT or isinstance(exponent, bool):
            return None  # NumPy picks square/sqrt/... by the exponent's value at run time
        if exponent in T.POWER_FAST_PATHS:
            # NumPy's fast_scalar_power (square, sqrt, reciprocal), kept a power: for a
            # Python float base Python calls C's pow, whose x ** 0.5 is not sqrt's
            return Converge("tensor.pow", result, {"scalar_fast_path": True})
        if exponent in T.POWER_NO_FUSE:
            return None
    return Converge("tensor.pow", result)


def _dtype_of_generic(names: tuple[Any, ...]) -> ScalarType | None:
    for name in names:
        if isinstance(name, str) and name in T.DTYPES:
            return T.DTYPES[name]
    return None


__all__ = ["NumpyPlugin", "NumpyBuild", "probe"]
