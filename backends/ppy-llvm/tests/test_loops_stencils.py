"""Time-step loops of slice statements compiled as one typed-loop function: NPBench's
jacobi_1d and adi as vendored and unannotated, and random bodies of the forms they
use (fills `V = s`, copies `V = W`, unary minus, row and column views of 2-D arrays,
negative bounds and steps), bit for bit against Python with the fast path asserted.
Long vectors cross the chunks of `_loops_vector_chunks` with specials in them."""

from __future__ import annotations

import copy
import random
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from loops_harness import FLOATS, SPECIALS, layout_as, load_both, outcome, random_programs

POLYBENCH = (
    Path(__file__).resolve().parents[3] / "benchmarks/corpus/npbench/npbench/benchmarks/polybench"
)
KERNELS = ("jacobi_1d", "adi")


def function_calls(module: str, name: str) -> int:
    """Fast calls of `name`'s specializations' function sites (`kernel.1@<signature>`)."""
    import ppy

    return sum(
        int(s["fast"])
        for key, s in ppy.stats().items()
        if key.startswith(f"{module}:{name}.") and "@" in key and "site" not in s
    )


def _sprinkle(args: tuple, rng: np.random.Generator) -> None:
    for a in args:
        if isinstance(a, np.ndarray) and a.size:
            picks = rng.random(a.shape) < 0.15
            a[picks] = rng.choice(SPECIALS, size=int(picks.sum()))


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple]:
    tmp = tmp_path_factory.mktemp("npbench_stencils")
    return {
        name: load_both(tmp, name, (POLYBENCH / name / f"{name}_numpy.py").read_text())
        for name in KERNELS
    }


def _inputs(name: str, n: int, steps: int, rng: np.random.Generator) -> tuple:
    if name == "jacobi_1d":
        return (steps, rng.standard_normal(n), rng.standard_normal(n))
    return (steps, n, rng.standard_normal((n, n)))


@pytest.mark.parametrize("name", KERNELS)
def test_kernels_bit_identical_and_one_function(kernels, name: str) -> None:
    mod, plain = kernels[name]
    rng = np.random.default_rng(27)
    cases = [(n, steps, False) for n in (0, 1, 2, 3, 4, 11) for steps in (0, 1, 3)]
    cases += [(7, 3, True), (12, 4, True), (300, 3, True), (600, 2, False)]
    for n, steps, special in cases:
        if name == "adi" and n > 40:
            continue  # adi's cost grows with n**2 per step in Python
        args = _inputs(name, n, steps, rng)
        if special:
            _sprinkle(args, rng)
        before = function_calls(name, "kernel")
        got = outcome(mod.kernel, *copy.deepcopy(args))
        assert got == outcome(plain.kernel, *copy.deepcopy(args)), (name, n, steps, special)
        assert function_calls(name, "kernel") == before + 1, (name, n, steps)


def test_adi_with_n_other_than_the_arrays(kernels) -> None:
    """adi's N is a separate argument: past u's shape its views clip and its rows raise
    IndexError, where Python does; a float u of another layout runs the same way."""
    mod, plain = kernels["adi"]
    rng = np.random.default_rng(5)
    for n, size in [(5, 4), (3, 6), (1, 3), (2, 0), (6, 6)]:
        for layout in (lambda u: u, np.asfortranarray, lambda u: np.repeat(u, 2, axis=1)[:, ::2]):
            u = layout(rng.standard_normal((size, size)))
            before = function_calls("adi", "kernel")
            assert outcome(mod.kernel, 2, n, u) == outcome(plain.kernel, 2, n, u)  # u's layout
            assert function_calls("adi", "kernel") == before + 1


# -- random bodies of the new forms ---------------------------------------------------
BOUNDS = ["", "i", "i + 1", "-1", "1", "-2", "n - 1", "-i"]
TARGETS = ["M[{lo}:{hi}, i]", "M[i, {lo}:{hi}]", "a[{lo}:{hi}]", "M[{lo}:{hi}, 0]"]
VIEWS = [*TARGETS, "b[{lo}:{hi}]", "M[-1, {lo}:{hi}]"]
FIRST = ["s", "-t", "-d", "2.0", "-M[0, 0]", "a[0]"]  # may raise: only before any operation
LATER = ["s", "-t", "d", "(1.0 + 2.0 * d)", "-0.5"]  # cannot raise


def _view(r: random.Random) -> str:
    return r.choice(VIEWS).format(lo=r.choice(BOUNDS), hi=r.choice(BOUNDS))


def _tree(r: random.Random, depth: int) -> str:
    """An expression holding a view: scalars on the left of views, temporaries on the
    left of views (as NumPy code writes them), unary minus of either."""
    if depth == 0:
        return _view(r) if r.random() < 0.7 else f"-{_view(r)}"
    op = r.choice("+-*/")
    shape = r.randrange(5)
    if shape == 0:
        return f"{r.choice(FIRST)} {op} ({_tree(r, depth - 1)})"
    if shape == 1:
        return f"({_tree(r, depth - 1)}) {op} {r.choice(LATER)}"
    if shape == 2:
        return f"({_tree(r, depth - 1)}) {op} {_view(r)}"
    if shape == 3:
        return f"-({_tree(r, depth - 1)} {op} {r.choice(LATER)})"
    return f"{_view(r)} {op} {_view(r)}"


def _statement(r: random.Random) -> str:
    target = r.choice(TARGETS).format(lo=r.choice(BOUNDS), hi=r.choice(BOUNDS))
    kind = r.randrange(4)
    if kind == 0:  # a fill
        return f"{target} = {r.choice(FIRST)}"
    if kind == 1:  # a copy
        return f"{target} = {_view(r)}"
    op, depth = r.choice(["", "", "+", "-", "*", "/"]), r.randrange(3)
    # `V op= W` of a lone view stays Python (NumPy's overlap copy decides its NaN rule)
    value = f"-{_view(r)}" if op and depth == 0 else _tree(r, depth)
    return f"{target} {op}= {value}"


def _program(r: random.Random, k: int) -> str:
    loop = r.choice(["range(n)", "range(n - 1, 0, -1)", "range(1, n)"])
    lines = [
        f"def q{k}(M, a, b, n):",
        "    s = 0.5 * M.shape[1]",
        "    t = -s / 2.0",
        "    d = 1.0 / (n + 2)",
        f"    for i in {loop}:",
        f"        {_statement(r)}",
        f"        {_statement(r)}",
        "    return t",
    ]
    return "\n".join(lines)


COUNT = 12


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return random_programs(tmp_path_factory, "loops_stencils", 20261227, COUNT, _program)


ELEMENTS = st.one_of(FLOATS, st.sampled_from(SPECIALS))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k=st.integers(0, COUNT - 1),
    M=hnp.arrays(np.float64, st.tuples(st.integers(0, 9), st.integers(0, 9)), elements=ELEMENTS),
    a=hnp.arrays(np.float64, st.integers(0, 10), elements=ELEMENTS),
    b=hnp.arrays(np.float64, st.integers(0, 10), elements=ELEMENTS),
    n=st.integers(-2, 5),
    how=st.integers(0, 2),
)
def test_random_bodies_match_python(bodies, k: int, M, a, b, n: int, how: int) -> None:
    mod, plain = bodies
    args = (layout_as(M, how), layout_as(a, how), layout_as(b, how), n)
    before = function_calls("loops_stencils", f"q{k}")
    assert outcome(getattr(mod, f"q{k}"), *args) == outcome(getattr(plain, f"q{k}"), *args)
    assert function_calls("loops_stencils", f"q{k}") == before + 1


def test_random_bodies_all_compile(bodies) -> None:
    mod, _ = bodies
    rng = np.random.default_rng(0)
    missed = []
    for k in range(COUNT):
        before = function_calls("loops_stencils", f"q{k}")
        outcome(getattr(mod, f"q{k}"), rng.random((4, 4)), rng.random(4), rng.random(4), 3)
        if function_calls("loops_stencils", f"q{k}") != before + 1:
            missed.append(k)
    assert not missed


# -- fills, copies, negation, chunks ---------------------------------------------------
CASES = """
import numpy as np


def fill(M, x, s, j):
    for i in range(1):
        M[j, 1:-1] = s
        M[1:, j] = s
        x[:] = s


def shifted(a, n):
    for i in range(n):
        a[1:] = a[:-1]


def ahead(a, n):
    for i in range(n):
        a[:-1] = a[1:]


def crossed(M, n):
    for i in range(n):
        M[1:, 0] = M[0, :-1]
        M[i, :] = M[:, i]


def pair(x, y):
    for i in range(1):
        x[:] = y[:]


def negated(x, y, n):
    for i in range(n):
        x[:] = -y[:]
        y[:] += -(x[:] * 0.5) - y[:]


def long_update(x, y, s, n):
    for i in range(n):
        x[:] = s * (y[:] + x[:]) / (y[:] - s)
        x[:-1] += x[1:] * 1.0
        x[:] /= -y[:]


def empty_target(x, y):
    for i in range(1):
        x[0:0] = (y[:1] * 1e308) * 10.0 + x[0:0]
"""


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("loops_stencil_cases"), "stencil_cases", CASES)


def _same(mod: types.ModuleType, plain: types.ModuleType, name: str, *args: object) -> None:
    before = function_calls("stencil_cases", name)
    assert outcome(getattr(mod, name), *args) == outcome(getattr(plain, name), *args), name
    assert function_calls("stencil_cases", name) == before + 1, name


def test_fills_keep_the_scalars_bits(cases) -> None:
    mod, plain = cases
    for s in [*SPECIALS, 1.0, 3, -7]:
        for rows, cols in [(3, 4), (1, 1), (0, 3), (3, 0), (2, 2)]:
            M, x = np.ones((rows, cols)), np.ones(cols)
            for j in (0, 1, -1, 5):
                _same(mod, plain, "fill", M, x, s, j)  # IndexError where j is out of range


def test_copies_read_the_old_values_where_they_overlap(cases) -> None:
    mod, plain = cases
    rng = np.random.default_rng(3)
    for n in (0, 1, 2, 9, 300, 700):
        a = rng.standard_normal(n)
        _same(mod, plain, "shifted", a, 3)
        _same(mod, plain, "ahead", a, 3)
    for n in (1, 2, 7):
        M = rng.standard_normal((n, n))
        _same(mod, plain, "crossed", M, n)
        _same(mod, plain, "crossed", np.asfortranarray(M), n)
    x = np.arange(5.0)  # aliased: the target is the source
    fast = function_calls("stencil_cases", "pair")
    got, want = x.copy(), x.copy()
    mod.pair(got, got)
    plain.pair(want, want)
    assert got.tobytes() == want.tobytes()
    assert function_calls("stencil_cases", "pair") == fast + 1


def test_copies_broadcast_as_numpy_does(cases) -> None:
    mod, plain = cases
    for nx, ny in [(3, 3), (3, 1), (1, 3), (0, 1), (1, 0), (0, 0), (4, 2)]:
        _same(mod, plain, "pair", np.arange(float(nx)), np.arange(2.0, ny + 2))


def test_negation_flips_the_sign_bit_only(cases) -> None:
    mod, plain = cases
    rng = np.random.default_rng(4)
    for n in (0, 1, 8, 9, 17, 257):
        x = rng.choice(SPECIALS, n) if n else np.zeros(0)
        y = rng.choice([*SPECIALS, 1.5, -2.0], n) if n else np.zeros(0)
        _same(mod, plain, "negated", x, y, 2)
    _same(mod, plain, "negated", np.ones(3), np.ones(2), 1)  # NumPy's broadcast error


def test_chunks_with_specials_anywhere(cases) -> None:
    """Across chunks of 256: a clean chunk is computed vectorized, one holding a NaN,
    an inf or a division by zero again element by element (its NaNs and warnings)."""
    mod, plain = cases
    rng = np.random.default_rng(6)
    for n in (255, 256, 257, 512, 513, 1000):
        for where in (None, 0, n // 2, n - 1):
            x, y = rng.standard_normal(n), rng.standard_normal(n)
            if where is not None:
                x[where] = SPECIALS[where % len(SPECIALS)]
                y[(where * 7) % n] = 0.0
            for s in (0.5, float("nan"), 1e308):
                _same(mod, plain, "long_update", x, y, s, 2)
    strided = np.repeat(rng.standard_normal(600), 2)[::2]  # not unit stride: element by element
    _same(mod, plain, "long_update", strided, rng.standard_normal(600), 0.5, 2)


def test_an_empty_target_still_warns(cases) -> None:
    mod, plain = cases
    for y in (np.full(3, 10.0), np.ones(3), np.zeros(0)):
        _same(mod, plain, "empty_target", np.zeros(4), y)


def test_only_functions_with_element_accesses_get_a_c_order_variant() -> None:
    """A function whose arrays only array statements touch is compiled once (its `_c`
    entry calls it); one that loads an element keeps its C-order variant."""
    from ppy_core.ir import F64, I64, TensorType
    from ppy_core.ir.dialects.builtin import FuncOp, ReturnOp
    from ppy_core.ir.dialects.loops import LoadOp
    from ppy_core.ir.dialects.loops_vector import VectorOp
    from ppy_llvm._loops_variants import needs_contiguous

    vector = TensorType(F64, (None,), "numpy")

    def build(load: bool) -> FuncOp:
        func = FuncOp.build("f", [vector, vector, I64], [], ["x", "y", "i"])
        x, y, i = func.args
        parts = [x, y, i, i, i, i]
        func.entry.append(VectorOp(parts, [], {"op": "set", "views": ("s", "s"), "tree": ("v1",)}))
        if load:
            func.entry.append(LoadOp([x, i], [F64], {"py": "f64"}))
        func.entry.append(ReturnOp([]))
        return func

    assert not needs_contiguous(build(load=False))
    assert needs_contiguous(build(load=True))
