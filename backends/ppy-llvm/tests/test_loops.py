"""Typed loops (the core's loops dialect, lowered by `_loops`): compiled functions
answer exactly as Python does: values, their types, arrays, exceptions, warnings."""

from __future__ import annotations

import types
from pathlib import Path

import loops_programs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loops_harness import FLOATS, Programs, load_programs, program_inputs
from loops_harness import fast_calls as _fast
from loops_harness import load_both as _load
from loops_harness import outcome as _outcome

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

FIXED = """
import math
import numpy as np
import numpy.typing as npt


def clamp_count(a: np.ndarray, lo: float, hi: float) -> int:
    c = 0
    for i in range(len(a)):
        if lo <= a[i] < hi and not a[i] == 0.5:
            c = (c + 1) % 1000000
    return c


def rows(A: np.ndarray, n: int) -> float:
    s = 0.0
    for i in range(n):
        for j in range(n):
            A[i][j] = A[i][j] + 1.0
            s += A[i][j - 1]
    return s


def first_above(a: np.ndarray, x: float) -> int:
    k = 0
    while k < len(a) and a[k] <= x:
        k += 1
    return k


def isum(a: npt.NDArray[np.int64]):
    s = a[0]
    for i in range(1, len(a)):
        s = s + a[i] * 3
    return s


def fsub(L: np.ndarray, b: np.ndarray, x: np.ndarray) -> None:
    n = b.shape[0]
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]


def acc(a: np.ndarray) -> float:
    s = 0.0
    for i in range(len(a)):
        s += a[i] * 2
    return s


def roots(a: np.ndarray) -> float:
    s = 0.0
    for i in range(len(a)):
        s += math.sqrt(a[i])
    return s


def fdiv(x: float, n: int) -> float:
    s = 0.0
    k = 0
    while k < n:
        s += x / (n - k - 1)
        k += 1
    return s


def idiv(n: int) -> int:
    t = 0
    for i in range(n):
        t = (t + 7 // (3 - i)) % 1000
    return t


def fill(a: np.ndarray, n: int) -> int:
    for i in range(n):
        a[i] = 2.0 * i
    return n


def growing(n: int) -> int:
    t = 0
    for i in range(n):
        t += i
    return t


def uses_list(a: np.ndarray) -> float:
    out = [0.0]
    for i in range(len(a)):
        out.append(a[i])
    return out[0]
"""


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, types.ModuleType]:
    return _load(tmp_path_factory.mktemp("loops"), "loops_fixed", FIXED)


def test_forward_substitution_bits(fixed) -> None:
    ppy_mod, plain = fixed
    rng = np.random.default_rng(1)
    L = np.tril(rng.standard_normal((7, 7))) + 4 * np.eye(7)
    b = rng.standard_normal(7)
    before = _fast(ppy_mod.fsub)
    assert _outcome(ppy_mod.fsub, L, b, np.zeros(7)) == _outcome(plain.fsub, L, b, np.zeros(7))
    assert _fast(ppy_mod.fsub) == before + 1
    # any strides: a transposed view and a strided vector
    Lt = np.ascontiguousarray(L.T).T
    assert _outcome(ppy_mod.fsub, Lt, b[::1], np.zeros(7)) == _outcome(
        plain.fsub, Lt, b, np.zeros(7)
    )


def test_types_follow_python(fixed) -> None:
    ppy_mod, plain = fixed
    a = np.array([1.0, -0.0, np.inf, 5e-324])
    assert type(ppy_mod.acc(a)) is np.float64  # s = 0.0; s += a[i] * 2 -> np.float64
    assert type(ppy_mod.acc(np.empty(0))) is float  # the loop never ran: Python's float
    assert _outcome(ppy_mod.acc, a) == _outcome(plain.acc, a)
    assert type(ppy_mod.roots(a)) is float  # math.sqrt returns a float


def test_errors_match(fixed) -> None:
    ppy_mod, plain = fixed
    assert _outcome(ppy_mod.roots, np.array([4.0, -1.0])) == _outcome(
        plain.roots, np.array([4.0, -1.0])
    )
    fast = _fast(ppy_mod.fdiv)
    assert _outcome(ppy_mod.fdiv, 1.5, 3) == _outcome(plain.fdiv, 1.5, 3)  # float division by zero
    assert _fast(ppy_mod.fdiv) == fast + 1
    assert _outcome(ppy_mod.idiv, 5) == _outcome(plain.idiv, 5)  # integer division or modulo
    a = np.zeros(3)
    fast = _fast(ppy_mod.fill)
    got = _outcome(ppy_mod.fill, a, 5)
    assert got == _outcome(plain.fill, a, 5)
    assert got[1] is IndexError
    assert got[3][0] == np.array([0.0, 2.0, 4.0]).tobytes()
    assert _fast(ppy_mod.fill) == fast + 1


def test_numpy_scalar_warnings(fixed) -> None:
    ppy_mod, plain = fixed
    a = np.array([1e308, 1.0])
    assert _outcome(ppy_mod.acc, a) == _outcome(plain.acc, a)  # overflow in scalar multiply
    with np.errstate(over="ignore"):
        assert _outcome(ppy_mod.acc, a) == _outcome(plain.acc, a)
    with np.errstate(over="raise"):  # raising mid-loop: the guard runs Python
        assert _outcome(ppy_mod.acc, a) == _outcome(plain.acc, a)


def test_row_then_column_indexing(fixed) -> None:
    ppy_mod, plain = fixed
    A = np.arange(12.0).reshape(3, 4)
    fast = _fast(ppy_mod.rows)
    for n in (3, 4, 0):  # n = 4: row 3 is out of bounds: IndexError names axis 0
        assert _outcome(ppy_mod.rows, A, n) == _outcome(plain.rows, A, n)
    B = np.arange(12.0).reshape(4, 3)  # n = 4: column 3 of a row: axis 0 of the row
    assert _outcome(ppy_mod.rows, B, 4) == _outcome(plain.rows, B, 4)
    assert _fast(ppy_mod.rows) == fast + 4


def test_while_counter(fixed) -> None:
    ppy_mod, plain = fixed
    a = np.array([0.5, 1.0, np.nan, 3.0])
    fast = _fast(ppy_mod.first_above)
    for x in (0.0, 0.7, 2.0, 5.0, np.inf):
        assert _outcome(ppy_mod.first_above, a, x) == _outcome(plain.first_above, a, x)
    assert _fast(ppy_mod.first_above) == fast + 5


def test_chained_comparisons(fixed) -> None:
    ppy_mod, plain = fixed
    a = np.array([np.nan, -1.0, 0.0, 0.5, 0.7, 1.0, np.inf, -0.0])
    fast = _fast(ppy_mod.clamp_count)
    for lo, hi in ((0.0, 1.0), (-np.inf, np.inf), (np.nan, 1.0), (1.0, 0.0)):
        assert _outcome(ppy_mod.clamp_count, a, lo, hi) == _outcome(plain.clamp_count, a, lo, hi)
    assert _fast(ppy_mod.clamp_count) == fast + 4


def test_int64_elements_wrap_as_numpy(fixed) -> None:
    ppy_mod, plain = fixed
    fast = _fast(ppy_mod.isum)
    for a in (np.array([1, 2, 3]), np.array([2**62, 2**62, 5]), np.array([-(2**63), -1])):
        assert _outcome(ppy_mod.isum, a) == _outcome(plain.isum, a)
        with np.errstate(over="raise"):  # NumPy raises midway: the guard runs Python
            assert _outcome(ppy_mod.isum, a) == _outcome(plain.isum, a)
    assert _fast(ppy_mod.isum) == fast + 3
    assert type(ppy_mod.isum(np.array([4, 5]))) is np.int64


def test_guard_falls_back(fixed) -> None:
    ppy_mod, plain = fixed
    st_ = ppy_mod.acc.ppy_stats()
    for arg in (np.arange(4), [1.0, 2.0], np.ones((2, 2)), np.ones(3, dtype=">f8")):
        assert _outcome(ppy_mod.acc, arg) == _outcome(plain.acc, arg)
    assert ppy_mod.acc.ppy_stats()["fast"] == st_["fast"]
    assert sum(ppy_mod.acc.ppy_stats()["fallback"].values()) == sum(st_["fallback"].values()) + 4
    big = 2**40
    assert _outcome(ppy_mod.fill, np.zeros(1), big - big) == _outcome(plain.fill, np.zeros(1), 0)
    assert ppy_mod.fill(np.zeros(2), True) == 1  # a bool is no int for the guard: Python


def test_refusals_stay_python(fixed) -> None:
    ppy_mod, _ = fixed
    assert not hasattr(ppy_mod.growing, "ppy_stats")  # an unbounded accumulator
    assert not hasattr(ppy_mod.uses_list, "ppy_stats")  # a list
    assert ppy_mod.growing(10**6) == sum(range(10**6))


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Programs:
    return load_programs(tmp_path_factory, "loops_gen", loops_programs.module(40), "p", 40)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(k=st.integers(0, 39), **program_inputs(FLOATS))
def test_random_programs_match_python(generated: Programs, k: int, a, b, n: int, x: float) -> None:
    generated.same_as_python(k, a, b, n, x)


def test_most_random_programs_compile(generated: Programs) -> None:
    count = generated.count
    compiled = [k for k in range(count) if hasattr(getattr(generated.mod, f"p{k}"), "ppy_stats")]
    assert len(compiled) >= count * 3 // 4, compiled


def test_special_values_and_strides(fixed) -> None:
    ppy_mod, plain = fixed
    specials = np.array([np.nan, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 1e308, 0.0])
    for arg in (specials, specials[::2], specials[::-1], np.empty(0)):
        assert _outcome(ppy_mod.acc, arg) == _outcome(plain.acc, arg)
        assert _outcome(ppy_mod.roots, arg) == _outcome(plain.roots, arg)
    L = np.array([[0.0, 0.0], [1.0, -0.0]])  # zero pivots: NumPy's inf/nan and warnings
    b = np.array([1.0, np.nan])
    assert _outcome(ppy_mod.fsub, L, b, np.zeros(2)) == _outcome(plain.fsub, L, b, np.zeros(2))


def test_explain_names_the_statement(tmp_path: Path) -> None:
    from ppy_core.compiler.cached import compile_file, load_manifest

    path = tmp_path / "why_python.py"
    path.write_text(FIXED)
    remarks = load_manifest(compile_file(path).entry)["remarks"]
    why = {r["function"]: r["message"] for r in remarks if "typed loops" in r["message"]}
    assert "line 86" in why["growing"]
    assert "[E1061]" in why["growing"]
    assert "`[0.0]`" in why["uses_list"]
    assert "[E1060]" in why["uses_list"]
    sites = load_manifest(compile_file(path).entry)["function_sites"]
    fsub = next(r for r in sites if r["function"] == "fsub")
    assert fsub["backend"] == "llvm"
    assert fsub["unit"] is not None
    assert "loops.for" in fsub["ir_final"]  # `ppy explain` shows the loops IR


THREE_WAYS = """
import numpy as np
import ppy


def cholesky(A: np.ndarray, L: np.ndarray) -> None:
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        L[j, j] = s
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]


M = np.arange(16.0).reshape(4, 4)
A = M @ M.T + 4 * np.eye(4)
L = np.zeros((4, 4))
cholesky(A, L)
print(L.tobytes().hex())
print(sum(site["fast"] for key, site in ppy.stats().items() if ":cholesky." in key))
"""


def test_three_ways_agree(tmp_path: Path) -> None:
    """`python prog.py`, `ppy prog.py` and `ppy run prog.py` print the same bytes;
    the compiled ways ran the typed-loops function."""
    import os
    import subprocess
    import sys

    program = tmp_path / "prog.py"
    program.write_text(THREE_WAYS)
    script = Path(sys.executable).with_name("ppy")
    ppy_cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "ppy_core.cli"]
    env = {**os.environ, "PPY_CACHE_DIR": str(tmp_path / "cache")}
    outs = [
        subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
        for cmd in (
            [sys.executable, str(program)],
            [*ppy_cmd, str(program)],
            [*ppy_cmd, "run", str(program)],
        )
    ]
    plain, compiled, artifact = (o.stdout.splitlines() for o in outs)
    assert compiled[0] == plain[0] == artifact[0]
    assert compiled[1] == artifact[1] == "1"  # under plain Python: "0"
    assert plain[1] == "0"
