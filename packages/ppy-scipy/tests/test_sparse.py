"""`scipy.sparse` objects typed: every class (CSR/CSC/COO, `*_matrix` and `*_array`),
its methods (`dot`, `tocsr`, `tocsc`, `tocoo`, `toarray`, `sum`, `multiply`), its
attributes (`T`, `shape`, `nnz`) and `@`; each type the plugin gives is checked
against what SciPy itself returns. SciPy runs them all; a typed dense result is a
leaf of a fused NumPy site."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from _fused import compile_pair, counts, same

from ppy_core.interface.plugin import AttributeContext, CallContext, OperatorContext
from ppy_core.ir.types import F64, I64, UNKNOWN, OpaqueType, TensorType, TupleType, Type
from ppy_scipy import sparse as S
from ppy_scipy.plugin import ScipyPlugin

PLUGIN = ScipyPlugin()
DENSE = np.array([[1.5, 0.0, -2.0], [0.0, 3.25, 0.0], [4.0, 0.0, 0.5]])
VECTOR = TensorType(F64, (None,), "numpy")
MATRIX = TensorType(F64, (None, None), "numpy")
ARRAY = TensorType(F64, None, "numpy")  # `NDArray[np.float64]`: rank unknown


def _matches(t: Type, value: Any) -> str | None:
    """None when `value` is what type `t` says, else why not."""
    parsed = S.parse(t)
    if parsed is not None:
        form, kind, f64 = parsed
        if type(value).__name__ != f"{form}_{kind}" or type(value).__module__.split(".")[:2] != [
            "scipy",
            "sparse",
        ]:
            return f"{t} but SciPy returned {type(value)}"
        return None if (value.dtype == np.float64) == f64 or not f64 else f"dtype {value.dtype}"
    if isinstance(t, TensorType):
        ok = type(value) is np.ndarray and value.dtype == np.float64
        ok = ok and (t.rank is None or value.ndim == t.rank)
        return None if ok else f"{t} but SciPy returned {type(value)} {getattr(value, 'shape', '')}"
    if t == F64:
        return None if type(value) is np.float64 else f"f64 but {type(value)}"
    if t == I64:
        return None if type(value) is int else f"i64 but {type(value)}"
    if isinstance(t, TupleType):
        ok = type(value) is tuple and len(value) == len(t.elements)
        return None if ok and all(type(v) is int for v in value) else f"tuple but {value!r}"
    if t == OpaqueType("numpy.matrix"):
        return None if type(value) is np.matrix else f"np.matrix but {type(value)}"
    return f"untyped {t}"


def _method(receiver: Type, name: str, *args: Type, **kwargs: Any) -> Type:
    constants = (None,) * (1 + len(args))
    ctx = CallContext(
        f"{S.PREFIX}x.{name}",
        (receiver, *args),
        dict.fromkeys(kwargs, I64),
        constants=constants,
        kw_constants=kwargs,
        receiver=receiver,
    )
    answer = PLUGIN.call(ctx)
    assert answer is not None, name
    return answer.result


def _cases(cls: str) -> list[tuple[str, Type, Callable[[Any], Any]]]:
    """(what, the plugin's type, what SciPy returns) for a float64 `cls` object."""
    own = S.sparse_type(cls, True)
    other = S.sparse_type(cls.replace("csr", "csc") if "csr" in cls else "csr_" + cls[4:], True)
    attr = PLUGIN.instance_attribute
    return [
        ("T", attr(AttributeContext("T", owner_type=own)), lambda a: a.T),  # type: ignore[arg-type]
        ("shape", attr(AttributeContext("shape", owner_type=own)), lambda a: a.shape),  # type: ignore[arg-type]
        ("nnz", attr(AttributeContext("nnz", owner_type=own)), lambda a: a.nnz),  # type: ignore[arg-type]
        ("tocsr", _method(own, "tocsr"), lambda a: a.tocsr()),
        ("tocsc", _method(own, "tocsc"), lambda a: a.tocsc()),
        ("tocoo", _method(own, "tocoo"), lambda a: a.tocoo()),
        ("toarray", _method(own, "toarray"), lambda a: a.toarray()),
        ("sum", _method(own, "sum"), lambda a: a.sum()),
        ("sum(axis=0)", _method(own, "sum", axis=0), lambda a: a.sum(axis=0)),
        ("dot(vector)", _method(own, "dot", VECTOR), lambda a: a.dot(DENSE[0])),
        ("dot(matrix)", _method(own, "dot", MATRIX), lambda a: a.dot(DENSE)),
        ("dot(array)", _method(own, "dot", ARRAY), lambda a: a.dot(DENSE[1])),
        ("dot(sparse)", _method(own, "dot", other), lambda a: a.dot(_build(other, a))),
        ("multiply(sparse)", _method(own, "multiply", own), lambda a: a.multiply(a)),
        ("multiply(float)", _method(own, "multiply", F64), lambda a: a.multiply(2.5)),
        (
            "@ sparse",
            PLUGIN.operator(OperatorContext("MatMult", (own, other))),  # type: ignore[arg-type]
            lambda a: a @ _build(other, a),
        ),
    ]


def _build(t: Type, like: Any) -> Any:
    form, kind, _ = S.parse(t)  # type: ignore[misc]
    return getattr(sp, f"{form}_{kind}")(like.toarray().T)


@pytest.mark.parametrize("cls", S.CLASSES)
def test_every_type_is_what_scipy_returns(cls: str) -> None:
    value = getattr(sp, cls)(DENSE)
    constructed = PLUGIN.call(CallContext(f"scipy.sparse.{cls}", (MATRIX,), {}))
    assert constructed is not None
    assert constructed.result == S.sparse_type(cls, True)
    assert _matches(constructed.result, value) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # np.matrix's PendingDeprecationWarning
        for what, t, run in _cases(cls):
            assert t is not UNKNOWN, (cls, what)
            assert _matches(t, run(value)) is None, (cls, what, _matches(t, run(value)))


@pytest.mark.parametrize("cls", ["csr_matrix", "coo_array"])
def test_values_of_unknown_dtype_keep_the_class_not_the_elements(cls: str) -> None:
    own = S.sparse_type(cls, False)
    assert PLUGIN.call(CallContext(f"scipy.sparse.{cls}", (UNKNOWN,), {})).result == own  # type: ignore[union-attr]
    ints = getattr(sp, cls)(np.array([[1, 0], [0, 2]]))
    for name in ("tocsr", "tocsc", "tocoo"):
        t = _method(own, name)
        assert _matches(t, getattr(ints, name)()) is None
        assert not S.parse(t)[2]  # type: ignore[index]
    assert _method(own, "toarray") is UNKNOWN  # int64 here: no element type to promise
    assert _method(own, "dot", VECTOR) is UNKNOWN
    assert _method(own, "multiply", MATRIX) is UNKNOWN  # dense: SciPy's answer varies


def test_operators_and_names_outside_the_surface_are_not_answered() -> None:
    own = S.sparse_type("csr_array", True)
    assert PLUGIN.operator(OperatorContext("Add", (own, own))) is None
    assert PLUGIN.instance_attribute(AttributeContext("data", owner_type=own)) is None
    assert PLUGIN.call(CallContext("scipy.sparse.lil_matrix", (MATRIX,), {})) is None
    assert S.parse(OpaqueType("scipy.sparse.bsr_matrix")) is None
    assert S.parse(OpaqueType("numpy.matrix")) is None


SOURCE = """\
import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray


def smooth(a: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
    m = sp.csr_array(a)
    return m.dot(v) * 2.0 + m.T.dot(v) - v


def total(a: NDArray[np.float64]) -> float:
    m = sp.csc_matrix(a)
    return m.multiply(m).sum() + m.tocoo().nnz
"""


@pytest.mark.fused
def test_typed_sparse_results_are_leaves_of_a_fused_site(project: Path) -> None:
    fast, plain, manifest = compile_pair(project, "sparse_leaves", SOURCE)
    (record,) = [r for r in manifest["expr_sites"] if r["function"] == "smooth"]
    assert record["leaves"] == ["m.dot(v)", "m.T.dot(v)", "v"]
    assert record["unit"] is not None
    rng = np.random.default_rng(7)
    for n in (1, 5, 300):
        a = rng.standard_normal((n, n))
        a[a < 0.3] = 0.0
        v = rng.standard_normal(n)
        before = counts("sparse_leaves", "smooth", manifest)[0]
        assert same(fast.smooth(a, v), plain.smooth(a, v)) is None
        assert counts("sparse_leaves", "smooth", manifest)[0] == before + 1
        assert fast.total(a) == plain.total(a)
