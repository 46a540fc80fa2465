"""Typed loops with `np.dot` / `@` of vector views and `np.sqrt`: NPBench's loop
kernels (annotated copies) and random loop bodies, bit for bit against Python, the
fast path asserted; the per-build proof of NumPy's `ddot` refusing a wrong routine."""

from __future__ import annotations

import ctypes
import random
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from loops_harness import FLOATS, layout_as, load_both, nan_bits, outcome, random_programs

# NPBench's kernels as written (npbench/benchmarks/polybench/*/*_numpy.py), with
# their parameters annotated by hand
KERNELS = """
import numpy as np


def cholesky(A: np.ndarray):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def lu(A: np.ndarray):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]


def trisolv(L: np.ndarray, x: np.ndarray, b: np.ndarray):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def backward(A: np.ndarray, x: np.ndarray, y: np.ndarray):
    # ludcmp's back substitution: a negative-step range, views to the end
    for i in range(A.shape[0] - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]


def ludcmp(A: np.ndarray, b: np.ndarray):
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    for i in range(A.shape[0]):
        y[i] = b[i] - A[i, :i] @ y[:i]
    for i in range(A.shape[0] - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x, y


def prefix(a: np.ndarray):
    out = np.empty_like(a)
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i]
        out[i] = s
    return out


def syrk(alpha: float, beta: float, C: np.ndarray, A: np.ndarray):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


def with_step(A: np.ndarray, x: np.ndarray) -> float:
    s = 0.0
    for i in range(A.shape[0]):
        s += np.dot(A[i, ::2], x)
    return s
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("npbench_loops"), "npbench_loops", KERNELS)


def _spd(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = rng.random((n, n))
    return m @ m.T + n * np.eye(n)


def _same(mod: types.ModuleType, plain: types.ModuleType, name: str, *args: object) -> None:
    fn = getattr(mod, name)
    before = fn.ppy_stats()["fast"]
    assert outcome(fn, *args) == outcome(getattr(plain, name), *args)
    assert fn.ppy_stats()["fast"] == before + 1  # the compiled function ran


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 60])
def test_npbench_kernels_bit_identical(kernels, n: int) -> None:
    mod, plain = kernels
    A = _spd(n, n)
    rng = np.random.default_rng(n + 100)
    _same(mod, plain, "cholesky", A)  # n = 0: the IndexError of A[0, 0]
    _same(mod, plain, "lu", A)
    L = np.tril(A)
    _same(mod, plain, "trisolv", L, rng.random(n), rng.random(n))
    _same(mod, plain, "backward", np.triu(A), rng.random(n), rng.random(n))
    _same(mod, plain, "lu", np.asfortranarray(A))  # column-major: the any-strides copy
    _same(mod, plain, "trisolv", L.T.copy().T, rng.random(2 * n)[::2], rng.random(n))


@pytest.mark.parametrize("n", [0, 1, 2, 5, 40])
def test_ludcmp_makes_and_returns_its_arrays(kernels, n: int) -> None:
    """NPBench's ludcmp: `x = np.zeros_like(b)` made by NumPy up front, `return x, y`."""
    mod, plain = kernels
    rng = np.random.default_rng(n)
    A, b = _spd(n, n + 7), rng.random(n)
    _same(mod, plain, "ludcmp", A, b)
    _same(mod, plain, "ludcmp", np.asfortranarray(A), rng.random(2 * n)[::2])
    _same(mod, plain, "prefix", b)
    if n:
        _same(mod, plain, "ludcmp", A, rng.random(n + 1))  # A[n, :n]: IndexError
        before = mod.ludcmp.ppy_stats()["fallback"]
        assert outcome(mod.ludcmp, A, b.astype(np.float32)) == outcome(
            plain.ludcmp, A, b.astype(np.float32)
        )
        assert sum(mod.ludcmp.ppy_stats()["fallback"].values()) == sum(before.values()) + 1


def test_npbench_kernels_special_values(kernels) -> None:
    """Negative pivots (np.sqrt's NaN and warning), NaN, inf, -0.0 and subnormals."""
    mod, plain = kernels
    A = _spd(6, 1)
    A[2, 2] = -50.0
    _same(mod, plain, "cholesky", A)
    B = _spd(6, 2)
    B[1, 0], B[3, 1], B[4, 4], B[5, 2] = np.nan, np.inf, -0.0, 5e-324
    _same(mod, plain, "cholesky", B)
    _same(mod, plain, "lu", B)
    big = np.full((4, 4), 1e200)  # products overflow inside ddot: NumPy's warning
    _same(mod, plain, "lu", big)
    _same(mod, plain, "trisolv", np.zeros((3, 3)), np.ones(3), np.ones(3))


def test_npbench_kernels_fast(kernels) -> None:
    """The compiled kernels beat the interpreter's many NumPy calls by a wide margin."""
    import time

    mod, plain = kernels
    A = _spd(120, 3)

    def best(fn: object) -> float:
        times = []
        for _ in range(3):
            a = A.copy()
            t = time.perf_counter()
            fn(a)  # type: ignore[operator]
            times.append(time.perf_counter() - t)
        return min(times)

    assert best(mod.cholesky) * 5 < best(plain.cholesky)
    assert best(mod.lu) * 5 < best(plain.lu)


def test_shape_mismatch_and_index_errors(kernels) -> None:
    mod, plain = kernels
    L = _spd(4, 4)
    _same(mod, plain, "trisolv", L, np.zeros(5), np.zeros(5))  # L[4, :4]: IndexError
    _same(mod, plain, "trisolv", L[:, :2], np.zeros(3), np.zeros(3))  # lengths differ


def test_what_stays_python_is_named(kernels, tmp_path: Path) -> None:
    from ppy_core.compiler.cached import compile_file, load_manifest

    mod, _ = kernels
    assert not hasattr(mod.with_step, "ppy_stats")
    path = tmp_path / "step.py"
    path.write_text(KERNELS)
    remarks = load_manifest(compile_file(path).entry)["remarks"]
    why = {r["function"]: r["message"] for r in remarks if "typed loops" in r["message"]}
    assert "a slice with a step does not compile yet" in why["with_step"]
    assert "syrk" not in why  # its array statements compile (test_loops_vector)


# -- random loop bodies ----------------------------------------------------------
BOUNDS = ["", "i", "i + 1", "-1", "n", "0", "-i", "2"]
VIEWS = ["a[{lo}:{hi}]", "b[{lo}:{hi}]", "M[i, {lo}:{hi}]", "M[{lo}:{hi}, i]", "M[-1, {lo}:{hi}]"]


def _view(r: random.Random) -> str:
    return r.choice(VIEWS).format(lo=r.choice(BOUNDS), hi=r.choice(BOUNDS))


def _program(r: random.Random, k: int) -> str:
    """`q{k}(M, a, b, n)`: a loop whose body computes dots of random views and
    updates arrays and views in place."""
    call = r.choice(["np.dot({u}, {v})", "{u} @ {v}"]).format(u=_view(r), v=_view(r))
    body = r.choice(
        [
            [f"s += {call}"],
            [f"a[i] = {call} - a[i]"],
            [f"t = {call}", "if t > s:", "    s = t"],
            [f"s = s * 0.5 + np.sqrt({call})"],
            [f"M[i, 0] -= {call}", "M[i, 0] /= M[0, 0]"],
            [f"s += {call}", f"a[{r.choice(BOUNDS)}:{r.choice(BOUNDS)}] {r.choice('+-*/')}= s"],
            [f"s = {call}", f"M {r.choice('+-*/')}= s"],
            [f"M[i, {r.choice(BOUNDS)}:] {r.choice('+-*/')}= 0.5", f"s -= {call}"],
        ]
    )
    stop = r.choice(["n", "M.shape[0]", "len(a)"])
    lines = [
        f"def q{k}(M: np.ndarray, a: np.ndarray, b: np.ndarray, n: int):",
        "    s = 0.0 * M.shape[1]",  # M is 2-D in every program
        f"    for i in range({stop}):",
        *("        " + line for line in body),
        "    return s",
    ]
    return "\n".join(lines)


COUNT = 32


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return random_programs(tmp_path_factory, "loops_dot", 20261201, COUNT, _program)


def test_random_bodies_compile(bodies) -> None:
    mod, _ = bodies
    compiled = [k for k in range(COUNT) if hasattr(getattr(mod, f"q{k}"), "ppy_stats")]
    assert len(compiled) == COUNT, compiled


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k=st.integers(0, COUNT - 1),
    M=hnp.arrays(np.float64, st.tuples(st.integers(0, 5), st.integers(0, 5)), elements=FLOATS),
    a=hnp.arrays(np.float64, st.integers(0, 6), elements=FLOATS),
    b=hnp.arrays(np.float64, st.integers(0, 6), elements=FLOATS),
    n=st.integers(-1, 6),
    how=st.integers(0, 2),
)
def test_random_bodies_match_python(bodies, k: int, M, a, b, n: int, how: int) -> None:
    mod, plain = bodies
    fn = getattr(mod, f"q{k}")
    args = (layout_as(M, how), layout_as(a, how), layout_as(b, how), n)
    before = fn.ppy_stats()["fast"]
    assert outcome(fn, *args) == outcome(getattr(plain, f"q{k}"), *args)
    assert fn.ppy_stats()["fast"] == before + 1


# -- the proof of NumPy's routine ----------------------------------------------------
_DDOT = ctypes.CFUNCTYPE(
    ctypes.c_double,
    ctypes.c_int64,
    ctypes.POINTER(ctypes.c_double),
    ctypes.c_int64,
    ctypes.POINTER(ctypes.c_double),
    ctypes.c_int64,
)


@_DDOT
def _in_order(n: int, x: object, incx: int, y: object, incy: int) -> float:
    """A dot in plain order: right on short vectors, not OpenBLAS's bits on long ones."""
    total = 0.0
    for k in range(n):
        total += x[k * incx] * y[k * incy]  # type: ignore[index]
    return total


def test_proof_refuses_a_different_routine(kernels) -> None:
    from ppy_numpy._runtime import blas

    mod, _ = kernels
    library = mod.cholesky._library
    from ppy_llvm._loops import FLAG_PHRASES, FLAG_STRIDE

    data = {
        "blas": {"ddot": "ppy_loops_blas_ddot"},
        "flag_ops": list(FLAG_PHRASES),
        "flag_stride": FLAG_STRIDE,
    }
    right = blas.numpy_ddot()
    assert right is not None
    wrong = ctypes.cast(_in_order, ctypes.c_void_p).value
    try:
        why = blas.proven(library, wrong, data, "test-wrong-routine")
        assert why is not None
        assert "NumPy gives" in why
    finally:
        assert blas.proven(library, right, data, "test-right-routine") is None
    A = _spd(8, 5)
    _same(mod, kernels[1], "cholesky", A)  # NumPy's routine is back in the slot


def test_loader_refuses_when_the_proof_fails(tmp_path: Path, monkeypatch) -> None:
    from ppy_numpy._runtime import blas

    wrong = ctypes.cast(_in_order, ctypes.c_void_p).value
    monkeypatch.setattr(blas, "numpy_ddot", lambda: wrong)
    with pytest.warns(RuntimeWarning, match="E2042"):
        mod, plain = load_both(tmp_path, "refused_blas", KERNELS)
    assert not hasattr(mod.cholesky, "ppy_stats")  # the Python function itself
    A = _spd(5, 6)
    assert outcome(mod.cholesky, A) == outcome(plain.cholesky, A)


# -- in-place array updates (`C *= beta`) ------------------------------------------
UPDATES = """
import numpy as np


def trmm(alpha: float, A: np.ndarray, B: np.ndarray):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha


def mixed(alpha: float, B: np.ndarray):
    B *= alpha
    for i in range(B.shape[0]):
        B[i, 0] = alpha / B[i, 1]  # a float's ZeroDivisionError, an np.float64's inf


def accumulate(alpha: float, x: np.ndarray) -> float:
    s = 0.0
    for i in range(x.shape[0]):
        s += alpha  # a float sum, or an np.float64 one: not a scale
        x[i:] *= alpha
    return s


def syrk_rows(beta: float, C: np.ndarray):
    for i in range(C.shape[0]):
        C[i, :i + 1] *= beta


def updates(C: np.ndarray, x: np.ndarray, s: float):
    for i in range(x.shape[0]):
        x[:i] += s
        x[i:] -= 2.0
        x[i:] /= s
    C /= s
    C += x[0]
    return C.shape[1]  # C is 2-D (an array used only whole has no rank of its own)
"""


@pytest.fixture(scope="module")
def updates(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("loops_updates"), "loops_updates", UPDATES)


@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (3, 2), (4, 9), (12, 12), (33, 20)])
def test_trmm_bit_identical(updates, shape: tuple[int, int]) -> None:
    mod, plain = updates
    rng = np.random.default_rng(shape[0])
    A = rng.random((shape[0], shape[0]))
    B = rng.random(shape)
    for alpha in (1.5, -0.0, nan_bits(0x7FF8000000000002), float("inf")):
        B2 = B.copy()
        B2.flat[:: max(1, B2.size // 5)] = nan_bits(0x7FF8000000000001)  # NaN with NaN
        for b in (B, B2, np.asfortranarray(B2)):
            _same(mod, plain, "trmm", alpha, A, b)
            _same(mod, plain, "syrk_rows", alpha, np.asfortranarray(A))


def test_updates_warn_and_keep_numpy_nans(updates) -> None:
    mod, plain = updates
    x = np.array([1e300, nan_bits(0x7FF8000000000001), -0.0, 5e-324, 0.0, np.inf] * 3)
    C = np.full((5, 4), 1e300)
    C[1, 1] = nan_bits(0xFFF8000000000007)
    for s in (0.0, 1e-300, nan_bits(0x7FF8000000000002), -np.inf, 3.0):
        _same(mod, plain, "updates", C, x, s)
        _same(mod, plain, "updates", C[:, ::-1], x[::2], s)


def test_a_scale_takes_an_np_float64(updates) -> None:
    """NPBench passes trmm's alpha as an np.float64: `B *= alpha` gives the same
    answer for it and for a float, so the fast path takes both; `syrk_rows` and
    `updates` too, and `mixed`, whose `alpha / B[i, 1]` is NumPy's scalar division for
    either (a float over an np.float64). `accumulate` adds alpha to a float: a float only."""
    mod, plain = updates
    rng = np.random.default_rng(3)
    A, B = rng.random((6, 6)), rng.random((6, 5))
    for alpha in (np.float64(1.5), np.float64("nan"), 2.0):
        _same(mod, plain, "trmm", alpha, A, B)
        _same(mod, plain, "syrk_rows", alpha, A)
    _same(mod, plain, "updates", np.ones((2, 2)), np.ones(3), np.float64(0.0))
    B = np.zeros((3, 2))
    _same(mod, plain, "mixed", 2.0, B)  # NumPy's inf and its warning
    _same(mod, plain, "accumulate", 0.5, np.ones(4))
    before = sum(mod.accumulate.ppy_stats()["fallback"].values())
    args = (np.float64(0.5), np.ones(4))
    assert outcome(mod.accumulate, *args) == outcome(plain.accumulate, *args)
    assert sum(mod.accumulate.ppy_stats()["fallback"].values()) == before + 1
    _same(mod, plain, "mixed", np.float64(2.0), B)


def test_update_of_a_layout_numpy_would_not_coalesce_runs_python(updates) -> None:
    mod, plain = updates
    rows = np.random.default_rng(1).random((4, 10))[:, :5]  # rows that do not abut
    before = mod.trmm.ppy_stats()
    assert outcome(mod.trmm, 2.0, np.eye(4), rows) == outcome(plain.trmm, 2.0, np.eye(4), rows)
    after = mod.trmm.ppy_stats()
    assert after["fast"] == before["fast"]
    assert sum(after["fallback"].values()) == sum(before["fallback"].values()) + 1


def test_proof_refuses_a_different_nan_rule(tmp_path: Path, monkeypatch) -> None:
    """A library built with another SIMD threshold gives other NaNs: refused."""
    from ppy_llvm import _loops_inplace

    monkeypatch.setattr(_loops_inplace, "SIMD_MIN", 4)
    source = UPDATES.replace("def syrk_rows", "def syrk_rows_wrong_rule")
    with pytest.warns(RuntimeWarning, match="E2042"):
        mod, plain = load_both(tmp_path, "wrong_rule", source)
    assert not hasattr(mod.syrk_rows_wrong_rule, "ppy_stats")
    C = np.full((12, 12), nan_bits(0x7FF8000000000001))
    args = (nan_bits(0x7FF8000000000002), C)
    assert outcome(mod.syrk_rows_wrong_rule, *args) == outcome(plain.syrk_rows_wrong_rule, *args)
