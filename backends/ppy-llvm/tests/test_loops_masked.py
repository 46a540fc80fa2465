"""`m = <mask>; v = X[m]; t = v.mean()` (or `v.sum()`) as one `loops.masked_reduce` in a
typed-loop function: NPBench's azimint_naive as vendored and unannotated, and random masks of
comparisons and logical and/or under hypothesis (none or all selected, NaN / inf /
-0.0 / subnormal data, empty arrays, lengths around the pairwise sum's blocks of 8 and
128 and the selecting pass's steps of 8), each call's value, arrays and warnings
Python's; the fast path asserted wherever NumPy's mean is finite and warns nothing,
the rerun as Python asserted elsewhere. The pairwise sum itself is proven against
NumPy's, and a failed proof leaves the function to Python (E2042)."""

from __future__ import annotations

import ctypes
import random
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loops_harness import load_both, outcome

NPBENCH = Path(__file__).resolve().parents[3] / "benchmarks/corpus/npbench/npbench/benchmarks"
AZIMINT = NPBENCH / "azimint_naive" / "azimint_naive_numpy.py"

pytestmark = pytest.mark.needs_llvm


def _nan(bits: int) -> float:
    return float(np.array([bits], np.uint64).view(np.float64)[0])


SPECIALS = [_nan(0x7FF8000000000001), _nan(0xFFF8000000000002), np.inf, -np.inf]
FINITE_EDGES = [-0.0, 0.0, 5e-324, -1e-310, 2.2250738585072014e-308, 1e300, -1e300]


def counts(module: str, name: str) -> tuple[int, int]:
    """(fast calls, fallbacks) of `name`'s specializations' function sites."""
    import ppy

    fast = fallback = 0
    for key, s in ppy.stats().items():
        if key.startswith(f"{module}:{name}.") and "@" in key and "site" not in s:
            fast += int(s["fast"])
            fallback += sum(int(v) for v in s["fallback"].values())
    return fast, fallback


TINY = 2.2250738585072014e-308


def quiet_and_finite(result: tuple) -> bool:
    """Whether Python's call returned only finite means and warned nothing: the cases
    the function answers itself (else it reruns as Python)."""
    if result[0] != "ok" or result[-1]:
        return False
    return bool(np.isfinite(np.frombuffer(result[3], np.float64)).all())


def underflow_possible(result: tuple) -> bool:
    """A mean of zero or below the normal range: the function reruns it as Python
    where its division may have underflowed (a sum that is not zero), answers it
    itself where not; which one, Python's result does not say."""
    means = np.frombuffer(result[3], np.float64) if result[0] == "ok" else np.empty(0)
    return bool((np.abs(means) < TINY).any())


@pytest.fixture(scope="module")
def azimint(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    return load_both(tmp_path_factory.mktemp("azimint"), "azimint_naive", AZIMINT.read_text())


def _inputs(rng: np.random.Generator, n: int, edges: bool) -> tuple:
    data, radius = rng.random(n), rng.random(n)
    if edges and n:
        picks = rng.random(n) < 0.2
        data[picks] = rng.choice(FINITE_EDGES[:5], size=int(picks.sum()))
    return data, radius


@pytest.mark.parametrize(
    ("n", "npt", "edges"),
    [
        *((2, 1, False), (5, 1, False), (100, 3, True), (3000, 7, True), (2500, 2, False)),
        *((40_000, 4, True), (3, 0, False), (64, 8, False)),
    ],
)
def test_azimint_naive_fast_and_bit_identical(azimint, n: int, npt: int, edges: bool) -> None:
    """Bins holding elements: the compiled function answers, NumPy's bits (selections
    past the stack buffer included: 40000 / 4)."""
    mod, plain = azimint
    data, radius = _inputs(np.random.default_rng(n + npt), n, edges)
    want = outcome(plain.azimint_naive, data, radius, npt)
    before = counts("azimint_naive", "azimint_naive")
    assert outcome(mod.azimint_naive, data, radius, npt) == want
    after = counts("azimint_naive", "azimint_naive")
    assert quiet_and_finite(want), "a case meant for the fast path"
    assert after[0] == before[0] + 1, (n, npt)
    assert after[1] == before[1], (n, npt)


@pytest.mark.parametrize(
    "case",
    [
        *("empty bin", "nan radius", "inf data", "nan data", "overflowing sum"),
        *("no elements", "underflowing mean"),
    ],
)
def test_azimint_naive_python_cases(azimint, case: str) -> None:
    """Empty bins (NumPy's 'Mean of empty slice' and NaN), NaN or inf where a bin
    sums, a sum overflowing, an empty radius (its max raises): Python's answer,
    warnings and error, the call rerun as Python once it reached the mean."""
    mod, plain = azimint
    rng = np.random.default_rng(3)
    data, radius, npt = rng.random(50), rng.random(50), 5
    if case == "empty bin":
        npt = 500
    elif case == "nan radius":
        radius[7] = np.nan
    elif case == "inf data":
        data[3] = np.inf
    elif case == "nan data":
        data[:] = _nan(0x7FF8000000000003)
    elif case == "overflowing sum":
        data[:] = 1e308
    elif case == "underflowing mean":  # Python raises it here
        data[:] = 1e-310 * np.arange(50)
        npt = 5
    else:
        data, radius = np.empty(0), np.empty(0)
    with np.errstate(under="raise" if case == "underflowing mean" else "ignore"):
        want = outcome(plain.azimint_naive, data, radius, npt)
        assert not quiet_and_finite(want)
        before = counts("azimint_naive", "azimint_naive")
        assert outcome(mod.azimint_naive, data, radius, npt) == want
    after = counts("azimint_naive", "azimint_naive")
    assert after[0] == before[0], case  # never answered by the compiled function


# -- random masks -------------------------------------------------------------------
COMPARES = ["<", "<=", ">", ">=", "==", "!="]
LEAVES = ["a", "b", "lo", "hi", "0.5", "2"]


def _compare(r: random.Random) -> str:
    left = r.choice(["a", "b"])
    right = r.choice(LEAVES)
    if r.random() < 0.5:
        left, right = right, left
    return f"({left} {r.choice(COMPARES)} {right})"


def _mask(r: random.Random, depth: int) -> str:
    if depth == 0 or r.random() < 0.3:
        return _compare(r)
    a, b = _mask(r, depth - 1), _mask(r, depth - 1)
    form = r.randrange(4)
    if form == 0:
        return f"np.logical_and({a}, {b})"
    if form == 1:
        return f"np.logical_or({a}, {b})"
    return f"({a} {'&' if form == 2 else '|'} {b})"


def _programs(count: int, seed: int) -> str:
    r = random.Random(seed)
    out = ["import numpy as np", ""]
    for k in range(count):
        mean = ("v.mean()", "np.mean(v)", "v.sum()", "np.sum(v)")[k % 4]
        out += [
            "",
            f"def f{k}(a, b, s, t, n):",
            "    out = np.zeros(n, dtype=np.float64)",
            "    for i in range(n):",
            "        lo = s + i * t",
            "        hi = lo + t",
            f"        m = {_mask(r, 2)}",
            f"        v = {r.choice(['a', 'b'])}[m]",
            f"        out[i] = {mean}",
            "    return out",
            "",
        ]
    return "\n".join(out)


PROGRAMS = 8
LENGTHS = [0, 1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 136, 255, 256, 257, 300, 1031]


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    return load_both(tmp_path_factory.mktemp("masks"), "masks", _programs(PROGRAMS, 27))


def _array(draw: st.DrawFn, n: int) -> np.ndarray:
    kind = draw(st.sampled_from(["uniform", "edges", "specials"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.random(n)
    if kind != "uniform" and n:
        pool = FINITE_EDGES + (SPECIALS if kind == "specials" else [])
        picks = rng.random(n) < draw(st.sampled_from([0.05, 0.3, 1.0]))
        x[picks] = rng.choice(pool, size=int(picks.sum()))
    return x


@st.composite
def calls(draw: st.DrawFn) -> tuple:
    n = draw(st.sampled_from(LENGTHS))
    a, b = _array(draw, n), _array(draw, n)
    # bins from none selected (t = 0.0) through some to all (a wide first bin)
    s = draw(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 2.0]))
    t = draw(st.sampled_from([0.0, 0.01, 0.1, 0.5, 4.0]))
    steps = draw(st.sampled_from([0, 1, 3]))
    return draw(st.integers(0, PROGRAMS - 1)), a, b, s, t, steps


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(call=calls())
def test_random_masks_as_python(programs, call: tuple) -> None:
    mod, plain = programs
    k, a, b, s, t, steps = call
    name = f"f{k}"
    want = outcome(getattr(plain, name), a, b, s, t, steps)
    before = counts("masks", name)
    assert outcome(getattr(mod, name), a, b, s, t, steps) == want, _programs(PROGRAMS, 27)
    after = counts("masks", name)
    assert sum(after) == sum(before) + 1  # the function site took the call
    if underflow_possible(want):
        return
    if quiet_and_finite(want):
        assert after[0] == before[0] + 1  # answered by the compiled function
    else:
        assert after[0] == before[0]


def test_lengths_that_differ_run_as_python(programs) -> None:
    """NumPy broadcasts a length-1 operand of the mask, or raises: Python's answer."""
    mod, plain = programs
    for a, b in [(np.arange(5.0), np.arange(1.0)), (np.arange(5.0), np.arange(3.0))]:
        for k in range(PROGRAMS):
            name = f"f{k}"
            got = outcome(getattr(mod, name), a, b, 0.0, 1.0, 2)
            assert got == outcome(getattr(plain, name), a, b, 0.0, 1.0, 2)


# -- the pairwise sum's proof ---------------------------------------------------------
def _sequential(p: int, n: int) -> float:
    values = ctypes.cast(p, ctypes.POINTER(ctypes.c_double))
    total = 0.0
    for i in range(n):
        total += values[i]
    return total


def test_the_proof_accepts_the_backends_sum_and_refuses_another(tmp_path: Path) -> None:
    from llvmlite import ir

    from ppy_llvm._host import target_machine
    from ppy_llvm._loops_masked import PROBE, pairwise_function
    from ppy_llvm._toolchain import build_shared
    from ppy_numpy._runtime import masked

    module = ir.Module(name="masked_probe")
    machine = target_machine()
    module.triple, module.data_layout = machine.triple, str(machine.target_data)
    host = types.SimpleNamespace(module=module, ir=ir, i64=ir.IntType(64), f64=ir.DoubleType())
    pairwise_function(host)
    library = ctypes.CDLL(str(build_shared(str(module), "masked_probe")))
    assert hasattr(library, PROBE)
    assert masked._prove(library) is None
    wrong = types.SimpleNamespace(ppy_loops_probe_pairwise=masked._FN(_sequential))
    why = masked._prove(wrong)
    assert why is not None
    assert why.startswith("the sum of")
    assert masked._prove(types.SimpleNamespace()) is not None


ANNOTATED = """
import numpy as np


def binned(data: np.ndarray, radius: np.ndarray, n: int):
    res = np.zeros(n, dtype=np.float64)
    for i in range(n):
        hi = i + 1.0
        m = np.logical_and(i <= radius, radius < hi)
        v = data[m]
        res[i] = v.mean()
    return res
"""


def test_loader_refuses_when_the_proof_fails(tmp_path: Path, monkeypatch) -> None:
    from ppy_numpy._runtime import masked

    monkeypatch.setattr(masked, "_prove", lambda library: "a sum of another build")
    monkeypatch.setattr(masked, "_verdicts", {})
    with pytest.warns(RuntimeWarning, match="E2042"):
        mod, plain = load_both(tmp_path, "refused_masked", ANNOTATED)
    assert not hasattr(mod.binned, "ppy_stats")  # the Python function itself
    data, radius = np.arange(9.0), np.arange(9.0) / 3
    assert outcome(mod.binned, data, radius, 3) == outcome(plain.binned, data, radius, 3)


TWICE = """
import numpy as np


def reread(a, n):
    out = np.zeros(n, dtype=np.float64)
    for i in range(n):
        m = a < 0.5
        v = a[m]
        out[i] = v.mean()
        out[i] += m.sum()
    return out
"""


def test_a_mask_read_again_stays_python(tmp_path: Path) -> None:
    """The mask is read after its mean: nobody may skip making it, so the function
    is no typed loop (it runs as written)."""
    mod, plain = load_both(tmp_path, "twice", TWICE)
    a = np.linspace(0.0, 1.0, 11)
    assert outcome(mod.reread, a, 3) == outcome(plain.reread, a, 3)
    assert counts("twice", "reread") == (0, 0)


def test_azimint_naive_strided_views(azimint) -> None:
    """Operands stepping by more than one element: the element-at-a-time pass."""
    mod, plain = azimint
    rng = np.random.default_rng(8)
    base_d, base_r = rng.random(3000), rng.random(6000)
    data, radius = base_d[::3], base_r[::6]
    want = outcome(plain.azimint_naive, data, radius, 5)
    before = counts("azimint_naive", "azimint_naive")
    assert outcome(mod.azimint_naive, data, radius, 5) == want
    assert quiet_and_finite(want)
    assert counts("azimint_naive", "azimint_naive")[0] == before[0] + 1


@pytest.mark.parametrize("under", ["raise", "warn"])
def test_underflow_reported_where_numpy_reports_it(azimint, under: str) -> None:
    """`rmax * i / npt` of a subnormal rmax underflows: NumPy reports it under
    np.errstate(under=...), which no compiled op does, so the call runs as Python."""
    mod, plain = azimint
    rng = np.random.default_rng(9)
    data, radius = rng.random(50), rng.random(50) * 4e-322
    radius[7] = 101 * 5e-324  # the max, and rmax / 3 is inexact: an underflow
    with np.errstate(under=under):
        want = outcome(plain.azimint_naive, data, radius, 3)
        assert want[0] == "raise" or want[-1]  # NumPy's error or warning
        before = counts("azimint_naive", "azimint_naive")
        assert outcome(mod.azimint_naive, data, radius, 3) == want
    assert counts("azimint_naive", "azimint_naive")[0] == before[0]
    assert outcome(mod.azimint_naive, data, radius, 3) == outcome(
        plain.azimint_naive, data, radius, 3
    )
    assert counts("azimint_naive", "azimint_naive")[0] == before[0] + 1  # ignored: compiled
