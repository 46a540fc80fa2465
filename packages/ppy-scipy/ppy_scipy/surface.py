"""What a SciPy call means to the compiler: its type, its name, its effects.

No SciPy import: the answers come from `ppy_scipy.tables`. Arrays are NumPy's
(``tensor<...xf64>`` of library ``numpy``): SciPy takes and returns ndarrays, so a
fused special function runs under the numpy runtime adapter's guard, which calls
SciPy's loop by its ``module:attr`` name.
"""

from __future__ import annotations

from typing import Final

from ppy_core.interface.plugin import CallAnswer, CallContext, Converge
from ppy_core.interface.specs import DialectOperationSpec
from ppy_core.ir.types import F64, I64, UNKNOWN, ScalarType, TensorType, Type
from ppy_scipy import sparse
from ppy_scipy import tables as T

NUMPY: Final = "numpy"
ARRAY: Final = TensorType(F64, None, NUMPY)
C128_ARRAY: Final = TensorType(ScalarType("c128"), None, NUMPY)
SPECIAL: Final = "scipy.special."
#: effects of a call that runs Python code it was given
CALLBACK: Final = frozenset({"ReadMemory", "Callback"})


def _f64_array(t: Type) -> bool:
    return isinstance(t, TensorType) and t.library == NUMPY and t.element.kind == "f64"


def _number(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.kind in ("f64", "i64")


def converge(ctx: CallContext) -> Converge | None:
    """A `scipy.special` ufunc with a float64 loop over float64 arrays (or unknown
    values the run-time guard checks), so arithmetic around it fuses into one loop:
    one input (`tables.FUSIBLE_UNARY`): ``tensor.unary``; two (`tables.FUSIBLE_BINARY`,
    at least one an array, the other may be a float or an int constant):
    ``tensor.binary``. The op names SciPy's ufunc; the backend calls its own loop."""
    name = ctx.callee.removeprefix(SPECIAL)
    if not ctx.callee.startswith(SPECIAL) or ctx.kwargs:
        return None  # out=, where=, dtype=: SciPy's own business
    if name in T.FUSIBLE_UNARY and len(ctx.args) == 1:
        kind = "tensor.unary"
    elif name in T.FUSIBLE_BINARY and len(ctx.args) == 2:
        kind = "tensor.binary"
    else:
        return None
    arrays = [t for t in ctx.args if _f64_array(t) or t is UNKNOWN]
    if not arrays:
        return None  # numbers only: SciPy returns a NumPy scalar
    constants = (*ctx.constants, *(None,) * (len(ctx.args) - len(ctx.constants)))
    for t, value in zip(ctx.args, constants, strict=False):
        if not (_f64_array(t) or t is UNKNOWN or t == F64 or (t == I64 and value is not None)):
            return None  # an int variable (SciPy may pick an integer loop) or another type
    shapes = {t.shape if isinstance(t, TensorType) else None for t in arrays}
    shape = shapes.pop() if len(shapes) == 1 else None
    return Converge(kind, TensorType(F64, shape, NUMPY), {"op": f"scipy.special:{name}"})


def answer(ctx: CallContext) -> CallAnswer | None:
    """The curated surface: special, fft, linalg, sparse typed; callbacks flagged."""
    callee = ctx.callee
    if callee in T.CALLBACKS or (callee in T.MAYBE_CALLBACKS and _takes_callable(ctx)):
        return CallAnswer(UNKNOWN, effects=CALLBACK)
    if callee.startswith(SPECIAL):
        return _special(ctx, callee.removeprefix(SPECIAL))
    if callee.startswith("scipy.fft."):
        return _fft(ctx, callee.removeprefix("scipy.fft."))
    if callee.startswith("scipy.linalg."):
        return _linalg(ctx, callee.removeprefix("scipy.linalg."))
    if sparse.parse(ctx.receiver) is not None:  # `A.dot(x)`, `A.tocsc()`, `A.sum()`...
        return sparse.method(ctx)
    if callee.startswith("scipy.sparse."):
        return sparse.constructor(ctx, callee.removeprefix("scipy.sparse."))
    return None


def _takes_callable(ctx: CallContext) -> bool:
    """An argument that is neither an array nor a number nor a string may be a callable."""
    return any(
        not (isinstance(t, TensorType) or _number(t) or getattr(t, "kind", "") == "str")
        for t in (*ctx.args, *ctx.kwargs.values())
    )


def _special(ctx: CallContext, name: str) -> CallAnswer | None:
    arity = 1 if name in T.FUSIBLE_UNARY else 2 if name in T.BINARY else 0
    if not arity or ctx.kwargs or len(ctx.args) != arity:
        return None
    if any(isinstance(t, TensorType) and not _f64_array(t) for t in ctx.args):
        return None  # other dtypes pick other loops: SciPy decides the result
    if converge(ctx) is not None:  # fused: no op spec on the `tensor.unary`/`binary` it becomes
        return CallAnswer(ARRAY)
    kind = "unary" if arity == 1 else "binary"
    spec = DialectOperationSpec(f"scipy.special.{kind}", {"target": ctx.callee})
    if all(_number(t) for t in ctx.args) and any(t.kind == "f64" for t in ctx.args):  # type: ignore[attr-defined]
        return CallAnswer(F64, lowering=spec)  # special.erf(0.5) is a numpy.float64
    if any(_f64_array(t) for t in ctx.args) and all(_f64_array(t) or _number(t) for t in ctx.args):
        return CallAnswer(ARRAY, lowering=spec)
    return CallAnswer(UNKNOWN, lowering=spec)


def _fft(ctx: CallContext, name: str) -> CallAnswer | None:
    kind = T.FFT.get(name)
    if kind is None:
        return None
    spec = DialectOperationSpec(f"scipy.fft.{name}", {"target": ctx.callee})
    first = ctx.args[0] if ctx.args else None
    if name.endswith("freq"):
        return CallAnswer(ARRAY, lowering=spec)  # always float64 frequencies
    if first is None or not _f64_array(first):
        return CallAnswer(UNKNOWN, lowering=spec)  # complex or unknown input
    result = {"c128": C128_ARRAY, "f64": ARRAY, "same": first}[kind]
    return CallAnswer(result, lowering=spec)


def _linalg(ctx: CallContext, name: str) -> CallAnswer | None:
    kind = T.LINALG.get(name)
    if kind is None:
        return None
    spec = DialectOperationSpec(f"scipy.linalg.{name}", {"target": ctx.callee})
    arrays_f64 = bool(ctx.args) and all(_f64_array(t) for t in ctx.args)
    if kind == "tuple" or not arrays_f64 or ctx.kwargs:
        return CallAnswer(UNKNOWN, lowering=spec)
    return CallAnswer(F64 if kind == "f64" else ARRAY, lowering=spec)


__all__ = ["answer", "converge"]
