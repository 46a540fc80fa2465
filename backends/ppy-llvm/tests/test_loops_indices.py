"""Typed loops over int32 index arrays (SciPy's CSR `indptr` / `indices`): each
element used as an index, a range or slice bound or `int(...)`, bit for bit against
Python, the fast path asserted; an int that becomes an np.int32 in the loop refused
(`s = 0; s += a[i]`: its Python type depends on whether the loop ran)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from loops_harness import FLOATS, load_both, outcome

SOURCE = """
import numpy as np
import numpy.typing as npt


def csr(indptr: npt.NDArray[np.int32], indices: npt.NDArray[np.int32], data: np.ndarray,
        x: np.ndarray, y: np.ndarray) -> None:
    for i in range(y.shape[0]):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i] = s


def rows(indptr: npt.NDArray[np.int32], data: np.ndarray, x: np.ndarray, y: np.ndarray):
    for i in range(y.shape[0]):
        lo, hi = int(indptr[i]), int(indptr[i + 1])
        y[i] = data[indptr[i]:indptr[i + 1]] @ x[:hi - lo]


def wraps(a: npt.NDArray[np.int32]) -> int:
    s = 0
    for i in range(a.shape[0]):
        s += a[i]
    return s
"""


@pytest.fixture(scope="module")
def mods(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("loops_i32"), "loops_i32", SOURCE)


def _same(mod: types.ModuleType, plain: types.ModuleType, name: str, *args: object) -> None:
    fn = getattr(mod, name)
    before = fn.ppy_stats()["fast"]
    assert outcome(fn, *args) == outcome(getattr(plain, name), *args)
    assert fn.ppy_stats()["fast"] == before + 1


def test_scipy_csr_matvec(mods) -> None:
    sparse = pytest.importorskip("scipy.sparse")
    mod, plain = mods
    for shape, density in (((50, 40), 0.2), ((1, 1), 1.0), ((7, 3), 0.0)):
        A = sparse.random(*shape, density=density, format="csr", random_state=1)
        assert A.indptr.dtype == np.int32
        x = np.random.default_rng(0).random(shape[1])
        _same(mod, plain, "csr", A.indptr, A.indices, A.data, x, np.zeros(shape[0]))
        _same(mod, plain, "rows", A.indptr, A.data, x, np.zeros(shape[0]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    indptr=hnp.arrays(np.int32, st.integers(1, 6), elements=st.integers(-3, 7)),
    indices=hnp.arrays(np.int32, st.integers(0, 8), elements=st.integers(-9, 9)),
    data=hnp.arrays(np.float64, st.integers(0, 8), elements=FLOATS),
    x=hnp.arrays(np.float64, st.integers(0, 9), elements=FLOATS),
)
def test_random_index_arrays(mods, indptr, indices, data, x) -> None:
    """Negative indices (NumPy's wrap), past the end (IndexError), empty ranges."""
    mod, plain = mods
    y = np.zeros(len(indptr) - 1)
    _same(mod, plain, "csr", indptr, indices, data, x, y)
    _same(mod, plain, "rows", indptr, data, x, y)


def test_int32_arithmetic_is_refused(mods, tmp_path) -> None:
    from ppy_core.compiler.cached import compile_file, load_manifest

    mod, plain = mods
    assert not hasattr(mod.wraps, "ppy_stats")
    a = np.array([2**31 - 1, 1], np.int32)
    assert outcome(mod.wraps, a) == outcome(plain.wraps, a)
    path = tmp_path / "wraps.py"
    path.write_text(SOURCE)
    remarks = load_manifest(compile_file(path).entry)["remarks"]
    why = {r["function"]: r["message"] for r in remarks if "typed loops" in r["message"]}
    assert "`s` is a int and a i32" in why["wraps"]
