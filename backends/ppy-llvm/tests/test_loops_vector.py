"""Typed loops with array statements inside loops (`C[i, :i + 1] += alpha * A[i, k] *
A[:i + 1, k]`, `Q[:, k] = A[:, k] / R[k, k]`): NPBench's kernels unmodified and
unannotated, random loop bodies, overlapping and aliased operands, broadcasting and
its errors, bit for bit against Python with the fast path asserted."""

from __future__ import annotations

import copy
import ctypes
import random
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from loops_harness import FLOATS, SPECIALS, layout_as, load_both, nan_bits, outcome, random_programs

POLYBENCH = (
    Path(__file__).resolve().parents[3] / "benchmarks/corpus/npbench/npbench/benchmarks/polybench"
)
NPBENCH = ("syrk", "syr2k", "symm", "gramschmidt", "seidel_2d")


@pytest.fixture(scope="module")
def npbench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    """Each kernel file as vendored, loaded both ways (unannotated)."""
    tmp = tmp_path_factory.mktemp("npbench_vector")
    return {
        name: load_both(tmp, name, (POLYBENCH / name / f"{name}_numpy.py").read_text())
        for name in NPBENCH
    }


def _inputs(name: str, n: int, m: int, rng: np.random.Generator, special: bool) -> tuple:
    if name == "seidel_2d":
        A = rng.standard_normal((n, n))
        args: tuple = (3, n, A)
    elif name == "gramschmidt":
        args = (rng.random((max(n, m), m)) + np.eye(max(n, m), m),)
    else:
        alpha, beta = np.float64(1.5), np.float64(1.2)
        cols = {"symm": (m, n), "syrk": (n, m), "syr2k": (n, m)}[name]
        C = rng.standard_normal((cols[0], cols[0]) if name != "symm" else (m, n))
        A = rng.standard_normal(cols if name != "symm" else (m, m))
        B = rng.standard_normal(cols if name != "symm" else (m, n))
        args = (alpha, beta, C, A, B) if name != "syrk" else (alpha, beta, C, A)
    if special:  # sprinkle NaNs, infinities, -0.0 and subnormals into every array
        for a in args:
            if isinstance(a, np.ndarray) and a.size:
                picks = rng.random(a.shape) < 0.2
                a[picks] = rng.choice(SPECIALS, size=int(picks.sum()))
    return args


def _run(fn: object, args: tuple) -> tuple:
    return outcome(fn, *copy.deepcopy(args))


@pytest.mark.parametrize("name", NPBENCH)
def test_npbench_kernels_bit_identical(npbench, name: str) -> None:
    mod, plain = npbench[name]
    rng = np.random.default_rng(28)
    sizes = [(0, 0, False), (1, 1, False), (2, 3, False), (12, 9, False)]
    for n, m, special in [*sizes, (7, 5, True), (13, 10, True)]:
        args = _inputs(name, n, m, rng, special)
        assert _run(mod.kernel, args) == _run(plain.kernel, args), (name, n, m, special)


def test_npbench_kernels_fast_path_counted(npbench) -> None:
    import ppy

    for name in NPBENCH:
        mod, _ = npbench[name]
        mod.kernel(*_inputs(name, 6, 5, np.random.default_rng(1), False))
    fast = {site for site, s in ppy.stats().items() if s["fast"]}
    for name in NPBENCH:
        assert any(site.startswith(f"{name}:kernel") for site in fast), (name, fast)


# -- random loop bodies with array statements -------------------------------------
BOUNDS = ["", "i", "i + 1", "-1", "1", "n", "0", "-i"]
ROWS = ["M[i, {lo}:{hi}]", "M[{lo}:{hi}, i]", "a[{lo}:{hi}]", "b[{lo}:{hi}]", "M[0, {lo}:{hi}]"]
SCALARS = ["s", "a[i]", "M[i, i]", "2.0", "-0.5", "s * M[i, 0]"]


def _view(r: random.Random) -> str:
    return r.choice(ROWS).format(lo=r.choice(BOUNDS), hi=r.choice(BOUNDS))


def _expr(r: random.Random, depth: int) -> str:
    """An elementwise expression holding a view, as NumPy code writes them: scalars
    beside views, temporaries on the left."""
    if depth == 0:
        return _view(r)
    op = r.choice("+-*/")
    shape = r.randrange(4)
    if shape == 0:  # scalar op (expression)
        return f"{r.choice(SCALARS)} {op} {_expr(r, depth - 1)}"
    if shape == 1:  # (expression) op scalar: one that cannot raise (the front end
        # refuses a raising scalar after an operation whose broadcast may raise)
        return f"({_expr(r, depth - 1)}) {op} {r.choice(['s', '2.0', '-0.5'])}"
    if shape == 2:  # (expression) op view
        return f"({_expr(r, depth - 1)}) {op} {_view(r)}"
    return f"{_view(r)} {op} {_view(r)}"


def _program(r: random.Random, k: int) -> str:
    target = r.choice(["M[i, {lo}:{hi}]", "M[{lo}:{hi}, i]", "a[{lo}:{hi}]"]).format(
        lo=r.choice(BOUNDS), hi=r.choice(BOUNDS)
    )
    rhs = _expr(r, r.randrange(1, 3))
    if "+" not in rhs and "-" not in rhs and "*" not in rhs and "/" not in rhs:
        rhs = f"{rhs} * 1.5"
    statement = f"{target} {r.choice(['', '+', '-', '*', '/'])}= {rhs}"
    lines = [
        f"def q{k}(M: np.ndarray, a: np.ndarray, b: np.ndarray, n: int):",
        "    s = 0.5 * M.shape[1]",
        "    for i in range(n):",
        f"        {statement}",
        "        s = s + a[0]",
        "    return s",
    ]
    return "\n".join(lines)


COUNT = 40


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return random_programs(tmp_path_factory, "loops_vector", 20261228, COUNT, _program)


def test_random_bodies_compile(bodies) -> None:
    mod, _ = bodies
    compiled = [k for k in range(COUNT) if hasattr(getattr(mod, f"q{k}"), "ppy_stats")]
    assert len(compiled) == COUNT, sorted(set(range(COUNT)) - set(compiled))


ELEMENTS = st.one_of(FLOATS, st.sampled_from(SPECIALS))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k=st.integers(0, COUNT - 1),
    M=hnp.arrays(np.float64, st.tuples(st.integers(0, 11), st.integers(0, 11)), elements=ELEMENTS),
    a=hnp.arrays(np.float64, st.integers(0, 12), elements=ELEMENTS),
    b=hnp.arrays(np.float64, st.integers(0, 12), elements=ELEMENTS),
    n=st.integers(0, 4),
    how=st.integers(0, 2),
)
def test_random_bodies_match_python(bodies, k: int, M, a, b, n: int, how: int) -> None:
    mod, plain = bodies
    fn = getattr(mod, f"q{k}")
    args = (layout_as(M, how), layout_as(a, how), layout_as(b, how), n)
    before = fn.ppy_stats()["fast"]
    assert outcome(fn, *args) == outcome(getattr(plain, f"q{k}"), *args)
    assert fn.ppy_stats()["fast"] == before + 1


# -- NaN rules around NumPy's SIMD threshold, overlap, aliasing, broadcasting ------------
CASES = """
import numpy as np


def scaled(x: np.ndarray, y: np.ndarray, s: float, n: int):
    for i in range(n):
        x[:] += s * y[:]
        x[:] -= y[:] * s
        x[:] *= y[:] + x[:]
        x[:] = y[:] / s + y[:]


def behind(a: np.ndarray, n: int):
    for i in range(n):
        a[1:] += a[:-1] * 1.0


def ahead(a: np.ndarray, n: int):
    for i in range(n):
        a[:-1] += a[1:] * 1.0


def crossed(M: np.ndarray, n: int):
    for i in range(n):
        M[i, :] += M[:, i] * 2.0


def pair(x: np.ndarray, y: np.ndarray, n: int):
    for i in range(n):
        x[1:] = y[:-1] + y[1:]


def broadcast(x: np.ndarray, y: np.ndarray, n: int):
    for i in range(n):
        x[:] += y[:1] * 2.0 + y[i:]


def order(M: np.ndarray, x: np.ndarray, j: int, q: int):
    for i in range(1):
        M[j, :] += x[:] * M[q, 0]


def late(M: np.ndarray, x: np.ndarray, q: int, k: int):
    for i in range(1):
        if k == 0:
            M[0, :] += x[:] * 1e308 * M[q, 0]
        if k == 1:
            M[0, :] += x[:] * 1e308 + M[q, :]
        if k == 2:
            M[q, :] = x[:] * 1e308
        if k == 3:
            M[0, :] += (x[:] * 1e308) / M[q, 1:]


def whole(x: np.ndarray, y: np.ndarray, s: float):
    for i in range(2):
        x += y[:] * s - x[:]


def dotted(M: np.ndarray, x: np.ndarray, n: int):
    for j in range(n):
        x[:j] -= np.dot(M[j, :j], x[:j]) * M[:j, j]


def swapped(x: np.ndarray, y: np.ndarray, n: int):
    for i in range(n):
        x[:] += y[:] + (y[:] * 2.0)


def lone(x: np.ndarray, y: np.ndarray, n: int):
    for i in range(n):
        x[:] += y[:]
"""


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("loops_vector_cases"), "vector_cases", CASES)


def _same(mod: types.ModuleType, plain: types.ModuleType, name: str, *args: object) -> None:
    fn = getattr(mod, name)
    before = fn.ppy_stats()["fast"]
    assert outcome(fn, *args) == outcome(getattr(plain, name), *args), (name, args)
    assert fn.ppy_stats()["fast"] == before + 1


def test_nan_payloads_around_the_simd_threshold(cases) -> None:
    mod, plain = cases
    rng = np.random.default_rng(8)
    nans = [*(nan_bits(0x7FF8000000000000 | k) for k in range(1, 40)), *SPECIALS]
    for n in [*range(20), 23, 24, 25, 31, 33, 40]:
        for s in (np.float64(2.0), nan_bits(0xFFF8000000000009), np.float64(np.inf), 0.0):
            x = rng.choice(nans, n) if n else np.zeros(0)
            y = rng.choice(nans, n) if n else np.zeros(0)
            _same(mod, plain, "scaled", x, y, float(s), 2)


def test_overlapping_views_read_the_old_values(cases) -> None:
    mod, plain = cases
    rng = np.random.default_rng(9)
    for n in (0, 1, 2, 9, 17):
        a = rng.standard_normal(n)
        _same(mod, plain, "behind", a, 3)
        _same(mod, plain, "ahead", a, 3)
        M = rng.standard_normal((n, n))
        _same(mod, plain, "crossed", M, n)
        _same(mod, plain, "crossed", np.asfortranarray(M), n)


def test_aliased_parameters(cases) -> None:
    mod, plain = cases
    for n in (1, 2, 10):
        x = np.arange(float(n + 1))
        fn, py = mod.pair, plain.pair
        before = fn.ppy_stats()["fast"]
        assert outcome(fn, x, x, 2) == outcome(py, x, x, 2)  # one copy for both arguments
        assert fn.ppy_stats()["fast"] == before + 1


def test_broadcasting_and_its_errors(cases) -> None:
    mod, plain = cases
    for nx, ny in [(3, 3), (1, 3), (3, 1), (0, 1), (1, 1), (4, 2), (0, 0), (2, 5)]:
        x, y = np.arange(1.0, nx + 1), np.arange(2.0, ny + 2)
        _same(mod, plain, "broadcast", x, y, 2)
        _same(mod, plain, "pair", x, y, 1)


def test_a_whole_vector_updated(cases) -> None:
    mod, plain = cases
    for n in (0, 1, 9, 20):
        x, y = np.arange(float(n)), np.full(n, np.nan)
        _same(mod, plain, "whole", x, np.arange(float(n)) * 3, 0.5)
        _same(mod, plain, "whole", x, y, np.inf)
    _same(mod, plain, "whole", np.ones(3), np.ones(4), 1.0)  # NumPy's broadcast error


def test_a_dot_beside_a_view(cases) -> None:
    mod, plain = cases
    rng = np.random.default_rng(4)
    for n in (0, 1, 5, 12):
        M, x = rng.standard_normal((n, n)), rng.standard_normal(n)
        _same(mod, plain, "dotted", M, x, n)
    _same(mod, plain, "dotted", np.full((3, 3), np.nan), np.full(3, np.inf), 3)


def test_errors_keep_pythons_order(cases) -> None:
    mod, plain = cases
    M, x = np.ones((3, 4)), np.ones(4)
    for j, q in [(0, 0), (5, 0), (0, 5), (5, 5), (-4, -3)]:
        _same(mod, plain, "order", M, x, j, q)
    _same(mod, plain, "order", M, np.ones(3), 0, 1)  # NumPy's broadcast error


def test_errors_after_an_operation_keep_its_warnings(cases) -> None:
    """Python raises after NumPy computed (and warned about) a temporary."""
    mod, plain = cases
    M, x = np.ones((3, 4)), np.full(4, 10.0)
    for k in range(4):
        for q in (0, 2, 3, -4, 7):
            _same(mod, plain, "late", M, x, q, k)
        _same(mod, plain, "late", M, np.ones(3), 0, k)  # broadcast errors after


def test_what_stays_python_is_named(cases, tmp_path: Path) -> None:
    from ppy_core.compiler.cached import compile_file, load_manifest

    mod, _ = cases
    assert not hasattr(mod.swapped, "ppy_stats")  # NumPy's elision may swap its operands
    assert not hasattr(mod.lone, "ppy_stats")  # NumPy copies an overlapping lone view
    path = tmp_path / "vector_cases.py"
    path.write_text(CASES)
    remarks = load_manifest(compile_file(path).entry)["remarks"]
    why = {r["function"]: r["message"] for r in remarks if "typed loops" in r["message"]}
    assert "a view on the left of an array temporary" in why["swapped"]
    assert "a lone view on the right" in why["lone"]


def test_an_int64_array_statement_stays_python(tmp_path: Path) -> None:
    """Unannotated: float64 arrays take the fast path, int64 ones stay Python (refused
    by name: array statements compile only over float64 arrays)."""
    import ppy

    source = "import numpy as np\n\n\ndef ints(x, y, n):\n"
    source += "    for i in range(n):\n        x[:] += y[:] * 2\n"
    mod, plain = load_both(tmp_path, "int_statements", source)

    def fast() -> int:  # the specializations' typed loops (`ints.1@<signature>`)
        stats = ppy.stats().items()
        return sum(v["fast"] for k, v in stats if k.startswith("int_statements:") and "@" in k)

    before = fast()
    x, y = np.arange(3), np.arange(3)
    assert outcome(mod.ints, x, y, 2) == outcome(plain.ints, x, y, 2)
    assert fast() == before
    x, y = np.arange(3.0), np.arange(3.0)
    assert outcome(mod.ints, x, y, 2) == outcome(plain.ints, x, y, 2)
    assert fast() == before + 1


def test_layouts_numpy_would_not_hand_over_run_python(cases) -> None:
    mod, plain = cases
    fn = mod.broadcast
    before = sum(fn.ppy_stats()["fallback"].values())
    x1, x2 = np.arange(10.0)[::-1], np.arange(10.0)[::-1]  # negative strides: NumPy may flip
    fn(x1, np.arange(10.0), 1)
    plain.broadcast(x2, np.arange(10.0), 1)
    assert x1.tobytes() == x2.tobytes()
    assert sum(fn.ppy_stats()["fallback"].values()) == before + 1


# -- the per-build proof of NumPy's NaN rule -------------------------------------------
def _first_nan(out: int, so: int, x: int, sx: int, y: int, sy: int, n: int, inplace: int, _f):
    """A rule NumPy's build does not follow (an add whose NaN pair always gives the
    first operand's, and no warnings): the proof stops at the add."""
    for e in range(n):
        a = np.frombuffer((ctypes.c_char * 8).from_address(x + e * sx), np.float64)[0]
        b = np.frombuffer((ctypes.c_char * 8).from_address(y + e * sy), np.float64)[0]
        with np.errstate(all="ignore"):
            r = a + b
        if np.isnan(a):
            r = nan_bits(int(np.array([a]).view(np.uint64)[0]) | 0x0008000000000000)
        at = (x + e * sx) if inplace else (out + e * so)
        ctypes.c_double.from_address(at).value = float(r)


def test_proof_refuses_another_nan_rule() -> None:
    from ppy_numpy._runtime import vector

    probe = vector._FN(_first_nan)
    library = types.SimpleNamespace(
        **{f"ppy_loops_probe_vector_{name}": probe for name in ("add", "sub", "mul", "truediv")}
    )
    phrases = ["scalar add", "scalar subtract", "scalar multiply", "scalar divide"]
    ops = [*phrases, "dot", "matmul", "sqrt", "add", "subtract", "multiply", "divide"]
    why = vector._prove(library, ops, 16)
    assert why is not None
    assert "add of" in why


def test_loader_refuses_when_the_proof_fails(tmp_path: Path, monkeypatch) -> None:
    from ppy_numpy._runtime import vector

    monkeypatch.setattr(vector, "_prove", lambda *args: "a rule of another build")
    monkeypatch.setattr(vector, "_verdicts", {})
    with pytest.warns(RuntimeWarning, match="E2042"):
        mod, plain = load_both(tmp_path, "refused_vector", CASES)
    assert not hasattr(mod.behind, "ppy_stats")  # the Python function itself
    a = np.arange(5.0)
    assert outcome(mod.behind, a, 2) == outcome(plain.behind, a, 2)
