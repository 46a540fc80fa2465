"""`scipy.sparse` objects typed: the constructors, the common methods and attributes,
and `@`. SciPy runs every one of them (the plugin never reimplements SciPy); the
types let what they return be a leaf of a fused NumPy site (`(A @ x) * 2.0 + y` is
one loop over SciPy's product) and let `ppy check` see through them.

A sparse object is ``!opaque<"scipy.sparse.csr_matrix">`` (its class), or
``scipy.sparse.csr_matrix[float64]`` when its values are known to be float64 (built
from a float64 array): only then are a dense result's elements known. The result
classes follow SciPy 1.11-1.17 (checked against SciPy itself by the tests): `.T`
swaps CSR and CSC; a product or an elementwise product with another sparse object
keeps the left operand's format and kind, COO becoming CSR; `multiply` by a dense
array is left untyped (SciPy's answer changed between versions).
"""

from __future__ import annotations

from typing import Final

from ppy_core.interface.plugin import CallAnswer, CallContext, OperatorContext
from ppy_core.interface.specs import DialectOperationSpec
from ppy_core.ir.types import F64, I64, UNKNOWN, OpaqueType, TensorType, TupleType, Type

PREFIX: Final = "scipy.sparse."
FORMATS: Final = ("csr", "csc", "coo")
KINDS: Final = ("matrix", "array")
F64_TAG: Final = "[float64]"
#: the classes typed, by public name (``csr_matrix`` ... ``coo_array``)
CLASSES: Final = tuple(f"{form}_{kind}" for form in FORMATS for kind in KINDS)
#: methods typed (SciPy runs them) -> the `scipy.sparse` dialect op naming them
METHODS: Final = {
    "dot": "matmul",
    "tocsr": "tocsr",
    "tocsc": "tocsc",
    "tocoo": "tocoo",
    "toarray": "toarray",
    "sum": "sum",
    "multiply": "multiply",
}
NUMPY: Final = "numpy"


def sparse_type(cls: str, f64: bool) -> OpaqueType:
    """The type of a `cls` (``csr_matrix``...) object; `f64`: its values are float64."""
    return OpaqueType(f"{PREFIX}{cls}{F64_TAG if f64 else ''}")


def parse(t: object) -> tuple[str, str, bool] | None:
    """(format, kind, float64?) of a sparse object's type, else None."""
    if not isinstance(t, OpaqueType) or not t.name.startswith(PREFIX):
        return None
    name = t.name.removeprefix(PREFIX)
    f64 = name.endswith(F64_TAG)
    form, _, kind = name.removesuffix(F64_TAG).partition("_")
    return (form, kind, f64) if form in FORMATS and kind in KINDS else None


def external_types() -> dict[str, Type]:
    """``scipy.sparse.csr_matrix`` ... as annotations and method owners, and each
    float64 variant under its type's name (``scipy.sparse.csr_matrix[float64]``): a
    method call is asked as ``<owner>.<method>``, so ``A.dot(x)`` names SciPy and goes
    to this plugin even with a NumPy argument (routed by its operands, two libraries
    would be nobody's question)."""
    out: dict[str, Type] = {}
    for cls in CLASSES:
        out[f"{PREFIX}{cls}"] = sparse_type(cls, False)
        out[sparse_type(cls, True).name] = sparse_type(cls, True)
    return out


def _f64_array(t: object, rank: int | None = None) -> bool:
    return (
        isinstance(t, TensorType)
        and t.library == NUMPY
        and t.element == F64
        and (rank is None or t.rank == rank)
    )


def _dense(f64: bool, rank: int | None) -> Type:
    """A float64 NumPy array of `rank` (None: 1 or 2) when the values are float64."""
    if not f64:
        return UNKNOWN
    return TensorType(F64, None if rank is None else (None,) * rank, NUMPY)


def constructor(ctx: CallContext, name: str) -> CallAnswer | None:
    """`scipy.sparse.csr_matrix(a)` ...: its class (float64 values when `a` is a
    float64 array and no dtype is given)."""
    if name not in CLASSES:
        return None
    spec = DialectOperationSpec(f"scipy.sparse.{name.partition('_')[0]}", {"target": ctx.callee})
    first = ctx.args[0] if ctx.args else None
    f64 = _f64_array(first) and "dtype" not in ctx.kwargs
    return CallAnswer(sparse_type(name, f64), lowering=spec)


def product(left: tuple[str, str, bool], other: object) -> Type | None:
    """The type of ``left @ other`` (and ``left.dot(other)``): a dense vector or
    matrix for a float64 array, a sparse object for a sparse one, else unknown."""
    form, kind, f64 = left
    if _f64_array(other) and other.rank in (1, 2, None):  # type: ignore[union-attr]
        return _dense(f64, other.rank)  # type: ignore[union-attr]
    right = parse(other)
    if right is not None:
        out = "csr" if form == "coo" else form
        return sparse_type(f"{out}_{kind}", f64 and right[2])
    return None


def method(ctx: CallContext) -> CallAnswer | None:
    """A method of a sparse object: ``A.dot(x)``, ``A.tocsc()``, ``A.sum()``... (the
    receiver is `ctx.args[0]`)."""
    receiver = parse(ctx.args[0]) if ctx.args else None
    name = ctx.callee.rpartition(".")[2]
    if receiver is None or name not in METHODS:
        return None
    form, kind, f64 = receiver
    target = f"{PREFIX}{form}_{kind}.{name}"
    args = ctx.args[1:]
    spec = DialectOperationSpec(f"scipy.sparse.{METHODS[name]}", {"target": target})
    result: Type | None = None
    if name.startswith("to") and name != "toarray" and not args and not ctx.kwargs:
        result = sparse_type(f"{name.removeprefix('to')}_{kind}", f64)
    elif name == "toarray" and not args and not ctx.kwargs:
        result = _dense(f64, 2)
    elif name == "dot" and len(args) == 1 and not ctx.kwargs:
        result = product(receiver, args[0])
    elif name == "sum":
        result = _sum(ctx, kind, f64)
    elif name == "multiply" and len(args) == 1 and not ctx.kwargs:
        other = args[0]
        if parse(other) is not None:
            out = "csr" if form == "coo" else form
            result = sparse_type(f"{out}_{kind}", f64 and parse(other)[2])  # type: ignore[index]
        elif other == F64:
            result = sparse_type(f"{form}_{kind}", f64)
    return CallAnswer(result or UNKNOWN, lowering=spec)


def _sum(ctx: CallContext, kind: str, f64: bool) -> Type | None:
    """``A.sum()``: a NumPy scalar; ``A.sum(axis=0|1)``: a 1-D array for the `*_array`
    classes, an `np.matrix` for the `*_matrix` ones."""
    axis = ctx.kw_constants.get("axis", ctx.constants[1] if len(ctx.constants) > 1 else None)
    extra = len(ctx.args) - 1 + len(ctx.kwargs)
    if extra == 0:
        return F64 if f64 else None
    if extra == 1 and axis in (0, 1, -1, -2):
        return _dense(f64, 1) if kind == "array" else OpaqueType("numpy.matrix")
    return None


def attribute(owner: object, name: str) -> Type | None:
    """``A.T`` (the transpose's class), ``A.shape`` (two ints), ``A.nnz`` (an int)."""
    parsed = parse(owner)
    if parsed is None:
        return None
    form, kind, f64 = parsed
    if name == "T":
        swapped = {"csr": "csc", "csc": "csr"}.get(form, form)
        return sparse_type(f"{swapped}_{kind}", f64)
    if name == "shape":
        return TupleType((I64, I64))
    if name in ("nnz", "ndim"):
        return I64
    return None


def operator(ctx: OperatorContext) -> Type | None:
    """``A @ B`` with a sparse left operand (`product`)."""
    if ctx.op != "MatMult" or len(ctx.operands) != 2:
        return None
    left = parse(ctx.operands[0])
    return product(left, ctx.operands[1]) if left is not None else None


__all__ = [
    "CLASSES",
    "METHODS",
    "attribute",
    "constructor",
    "external_types",
    "method",
    "operator",
    "parse",
    "sparse_type",
]
