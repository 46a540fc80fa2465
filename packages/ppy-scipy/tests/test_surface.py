"""The curated surface: special, fft, linalg and sparse typed and named by their
dialect op (SciPy runs them, answering exactly as SciPy), and the calls that take
a Python callable carrying the Callback effect, which `ppy explain` reports."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import fft, linalg

from ppy_core.interface.plugin import CallContext
from ppy_core.interface.specs import DialectOperationSpec
from ppy_core.ir.types import F64, I64, UNKNOWN, ScalarType, TensorType
from ppy_scipy.plugin import ScipyPlugin
from ppy_scipy.tables import FUSIBLE_UNARY

ARRAY = TensorType(F64, None, "numpy")
PLUGIN = ScipyPlugin()


def _call(callee: str, *args: object) -> object:
    return PLUGIN.call(CallContext(callee, tuple(args), {}))  # type: ignore[arg-type]


def test_every_fusible_name_is_a_one_input_float64_ufunc_of_this_scipy() -> None:
    import scipy.special as sc

    for name in FUSIBLE_UNARY:
        ufunc = getattr(sc, name)
        assert isinstance(ufunc, np.ufunc), name
        assert (ufunc.nin, ufunc.nout) == (1, 1), name
        assert "d->d" in ufunc.types, name


def test_a_special_function_of_an_array_converges_onto_a_qualified_unary() -> None:
    ctx = CallContext("scipy.special.erf", (ARRAY,), {})
    converge = PLUGIN.tensor_operation(ctx)
    assert converge is not None
    assert (converge.op, dict(converge.attributes)) == ("tensor.unary", {"op": "scipy.special:erf"})
    assert converge.result == ARRAY
    answer = _call("scipy.special.erf", ARRAY)
    assert answer.result == ARRAY
    assert answer.lowering is None


def test_a_two_input_special_function_converges_onto_a_qualified_binary() -> None:
    for args, constants in (((ARRAY, ARRAY), ()), ((ARRAY, F64), ()), ((I64, ARRAY), (3, None))):
        ctx = CallContext("scipy.special.xlogy", args, {}, constants=constants)
        converge = PLUGIN.tensor_operation(ctx)
        assert converge is not None, args
        assert (converge.op, dict(converge.attributes)) == (
            "tensor.binary",
            {"op": "scipy.special:xlogy"},
        )
        assert converge.result == ARRAY
    assert _call("scipy.special.xlogy", ARRAY, ARRAY).lowering is None  # type: ignore[union-attr]


def test_what_does_not_fuse_is_typed_and_named() -> None:
    f32_array = TensorType(ScalarType("f32"), None, "numpy")
    assert PLUGIN.tensor_operation(CallContext("scipy.special.erf", (f32_array,), {})) is None
    assert PLUGIN.tensor_operation(CallContext("scipy.special.erf", (F64,), {})) is None
    assert PLUGIN.tensor_operation(CallContext("scipy.special.xlogy", (F64, F64), {})) is None
    # an int variable may pick an integer loop; zeta and hyp0f1 are not fused
    assert PLUGIN.tensor_operation(CallContext("scipy.special.xlogy", (ARRAY, I64), {})) is None
    assert PLUGIN.tensor_operation(CallContext("scipy.special.zeta", (ARRAY, ARRAY), {})) is None
    assert PLUGIN.tensor_operation(CallContext("scipy.special.hyp0f1", (F64, ARRAY), {})) is None
    scalar = _call("scipy.special.erf", F64)
    assert scalar.result == F64  # type: ignore[union-attr]
    assert scalar.lowering == DialectOperationSpec(  # type: ignore[union-attr]
        "scipy.special.unary", {"target": "scipy.special.erf"}
    )
    two = _call("scipy.special.xlogy", ARRAY, I64)
    assert two.result == ARRAY  # type: ignore[union-attr]
    assert two.lowering.op == "scipy.special.binary"  # type: ignore[union-attr]
    assert _call("scipy.special.erf", f32_array) is None  # SciPy picks the loop


@pytest.mark.parametrize(
    ("callee", "args", "result", "op"),
    [
        ("scipy.fft.rfft", (ARRAY,), TensorType(ScalarType("c128"), None, "numpy"), "rfft"),
        ("scipy.fft.irfft", (ARRAY,), ARRAY, "irfft"),
        ("scipy.fft.fftfreq", (I64,), ARRAY, "fftfreq"),
        ("scipy.fft.fft", (UNKNOWN,), UNKNOWN, "fft"),
    ],
)
def test_fft_calls_are_typed(callee: str, args: tuple, result: object, op: str) -> None:
    answer = _call(callee, *args)
    assert answer.result == result  # type: ignore[union-attr]
    assert answer.lowering == DialectOperationSpec(f"scipy.fft.{op}", {"target": callee})  # type: ignore[union-attr]


def test_linalg_and_sparse_calls_are_typed_and_named() -> None:
    assert _call("scipy.linalg.det", ARRAY).result == F64  # type: ignore[union-attr]
    assert _call("scipy.linalg.solve", ARRAY, ARRAY).result == ARRAY  # type: ignore[union-attr]
    assert _call("scipy.linalg.svd", ARRAY).result is UNKNOWN  # type: ignore[union-attr]
    assert _call("scipy.linalg.lu_factor", ARRAY).lowering.op == "scipy.linalg.lu_factor"  # type: ignore[union-attr]
    assert _call("scipy.sparse.csr_array", ARRAY).lowering.op == "scipy.sparse.csr"  # type: ignore[union-attr]
    assert _call("scipy.linalg.not_a_function", ARRAY) is None


def test_callables_carry_the_callback_effect() -> None:
    for callee in ("scipy.optimize.minimize", "scipy.integrate.quad", "scipy.stats.bootstrap"):
        assert "Callback" in _call(callee, UNKNOWN).effects  # type: ignore[union-attr]
    assert "Callback" in _call("scipy.stats.kstest", ARRAY, UNKNOWN).effects  # type: ignore[union-attr]
    assert _call("scipy.stats.kstest", ARRAY, ARRAY) is None


SOURCE = """\
import numpy as np
import scipy.sparse as sp
from scipy import fft, integrate, linalg, optimize


def spectrum(x: np.ndarray) -> np.ndarray:
    return np.abs(fft.rfft(x)) * 2.0 + fft.rfftfreq(x.size)[0]


def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    lu = linalg.lu_factor(a)
    return linalg.lu_solve(lu, b) * 2.0 + linalg.solve(a, b) + linalg.det(a)


def sparse(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    m = sp.csr_array(a)
    return (m @ v) * 2.0 + m.T.dot(v) + m.multiply(a).sum()


def root(x: np.ndarray) -> float:
    return optimize.brentq(lambda t: t * t - 2.0, 0.0, 2.0) + np.sum(x * 2.0)


def area(x: np.ndarray) -> np.ndarray:
    return np.exp(x) * integrate.quad(np.sin, 0.0, 1.0)[0]
"""


@pytest.mark.fused
def test_a_module_using_the_surface_answers_exactly_as_scipy(project: Path) -> None:
    import ppy

    path = project / "surface.py"
    path.write_text(SOURCE, encoding="utf-8")
    fast = ppy.load(path, "surface")
    spec = importlib.util.spec_from_file_location("surface_plain", path)
    assert spec is not None
    assert spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    rng = np.random.default_rng(3)
    x, a, b = (
        rng.standard_normal(64),
        rng.standard_normal((6, 6)) + 6 * np.eye(6),
        rng.standard_normal(6),
    )
    a[a < -0.5] = 0.0
    for name, args in (
        ("spectrum", (x,)),
        ("solve", (a, b)),
        ("sparse", (a, b)),
        ("root", (x,)),
        ("area", (x,)),
    ):
        got, want = getattr(fast, name)(*args), getattr(plain, name)(*args)
        assert np.array_equal(np.asarray(got).view(np.uint64), np.asarray(want).view(np.uint64)), (
            name
        )
    assert np.array_equal(plain.spectrum(x), np.abs(fft.rfft(x)) * 2.0)
    assert sp.csr_array(a).shape == (6, 6)
    assert linalg.det(a) != 0.0
    stats = ppy.stats()
    assert any(k.startswith("surface:") and v["fast"] for k, v in stats.items())


@pytest.mark.fused
def test_ppy_explain_says_why_a_callback_call_stays_python(project: Path) -> None:
    path = project / "callbacks.py"
    path.write_text(SOURCE, encoding="utf-8")
    ppy_cmd = Path(sys.executable).parent / "ppy"
    done = subprocess.run(
        [str(ppy_cmd), "explain", str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "`optimize.brentq(lambda t: t * t - 2.0, 0.0, 2.0)` has effect Callback" in text
    assert "`integrate.quad(np.sin, 0.0, 1.0)` has effect Callback" in text
    # the callback is no leaf of a fused site: only `np.exp(x)` is compiled in `area`
    assert "np.exp(x) * integrate.quad" not in text.split("stays Python:")[0]
