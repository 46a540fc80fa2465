"""Typed loops at native speed, with Python's answers: accesses proven in bounds on
entry (`_loops_proof`), float ops sharing one inf/NaN test (`_loops_defer`),
reductions run untested and rerun when they must (`_loops_spec`), and the C caller
(`_loopcall`) in front of the Python site."""

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


AFFINE = """
import numpy as np


def shifted(a: np.ndarray, b: np.ndarray, lo: int, hi: int, off: int) -> float:
    s = 0.0
    for j in range(lo, hi):
        b[j] = a[j + off] * 2.0 + a[2 * j - off]
        s += b[j - 1]
    return s


def down(a: np.ndarray, b: np.ndarray, lo: int, hi: int, off: int) -> float:
    s = 0.0
    for j in range(hi, lo, -2):
        b[j - off] = a[j] + 1.0
        s -= a[off - j]
    return s


def grid(A: np.ndarray, lo: int, hi: int, off: int) -> float:
    s = 0.0
    for i in range(lo, hi):
        for j in range(i - off, hi):
            A[i, j] = A[j, i + off] + A[i][j]
            s += A[hi - j, off]
    return s


def moved(a: np.ndarray, b: np.ndarray, lo: int, hi: int, off: int) -> float:
    s = 0.0
    for j in range(lo, hi):
        s += a[j]
        j = off  # the counter rebound: its accesses are never proven
        b[j] = s
    return s
"""


@pytest.fixture(scope="module")
def affine(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, types.ModuleType]:
    return _load(tmp_path_factory.mktemp("affine"), "loops_affine", AFFINE)


@pytest.mark.parametrize("name", ["shifted", "down", "moved"])
def test_proven_accesses_raise_where_python_does(affine, name: str) -> None:
    """Loops whose accesses are proven in bounds on entry run without checks; every
    range that leaves the array (by one at either end, negative indices that wrap,
    empty ranges) raises IndexError at Python's access with the stores before made."""
    ppy_mod, plain = affine
    fast, py = getattr(ppy_mod, name), getattr(plain, name)
    before = _fast(fast)
    calls = 0
    for size in (0, 1, 5, 8):
        a = np.arange(size, dtype=np.float64) - 2.5
        for lo in (-9, -1, 0, 1, 3):
            for hi in (-1, 0, 2, size - 1, size, size + 1, 9):
                for off in (-1, 0, 1, 3):
                    args = (a, np.full(size, 7.0), lo, hi, off)
                    assert _outcome(fast, *args) == _outcome(py, *args), (size, lo, hi, off)
                    calls += 1
    assert _fast(fast) == before + calls


def test_proven_accesses_in_two_dimensions(affine) -> None:
    ppy_mod, plain = affine
    before = _fast(ppy_mod.grid)
    calls = 0
    for shape in ((0, 0), (4, 4), (3, 5), (6, 2)):
        A = np.arange(float(shape[0] * shape[1])).reshape(shape)
        for view in (A, A[::-1], A.T if shape[0] == shape[1] else A):
            for lo, hi, off in ((0, 3, 0), (1, 4, 1), (-2, 2, -1), (0, 6, 2), (2, 1, 0)):
                args = (view, lo, hi, off)  # `_outcome` copies it, reversed or F
                assert _outcome(ppy_mod.grid, *args) == _outcome(plain.grid, *args)
                calls += 1
    assert _fast(ppy_mod.grid) == before + calls


ANALYSED = """
import numpy as np
import numpy.typing as npt


def fsub(L: np.ndarray, b: np.ndarray, x: np.ndarray) -> None:
    n = b.shape[0]
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j] + L[j, i]
        x[i] = s / L[i, i]


def csr(indptr: npt.NDArray[np.int64], indices: npt.NDArray[np.int64],
        data: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    for i in range(y.shape[0]):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]] / 2.0 - 1.0
        y[i] = s


def peek(a: np.ndarray) -> float:
    s = 0.0
    for i in range(len(a)):
        s += a[i]
        if s > 1.0:  # s read outside its chain: a NaN in it would go unnoticed
            break
    return s
"""


def test_what_is_proven_and_shared(tmp_path: Path) -> None:
    """The analyses behind the unchecked copies, on the IR `ppy explain` shows: which
    accesses an innermost loop proves on entry (never a loaded index), and which float
    ops leave their inf/NaN test to their consumer (never across an exit)."""
    from ppy_core.compiler.cached import compile_file, load_manifest
    from ppy_core.ir import core_registry, parse_ir
    from ppy_llvm._loops_defer import defers, use_counts
    from ppy_llvm._loops_proof import provable
    from ppy_llvm._loops_spec import speculation

    path = tmp_path / "analysed.py"
    path.write_text(ANALYSED)
    sites = load_manifest(compile_file(path).entry)["function_sites"]
    funcs = {r["function"]: parse_ir(r["ir_final"], core_registry()) for r in sites}
    loops = {name: [op for op in f.walk() if op.name == "loops.for"] for name, f in funcs.items()}
    assert [len(provable(op)) for op in loops["fsub"]] == [0, 3]  # L[i, j], x[j], L[j, i]
    assert [len(provable(op)) for op in loops["csr"]] == [0, 2]  # not x[indices[k]]

    def deferring(name: str, proven: frozenset[int]) -> list[str]:
        uses = use_counts(funcs[name])
        return [
            op.attributes["op"]
            for op in funcs[name].walk()
            if op.name == "loops.binop" and defers(op, uses, proven)
        ]

    inner = loops["fsub"][1]
    # `*` defers to `+` only where L[j, i], loaded between them, cannot raise
    assert deferring("fsub", frozenset()) == ["add"]
    assert deferring("fsub", frozenset(id(a.op) for a in provable(inner))) == ["mul", "add"]
    # reductions that speculate: their float ops untested, the accumulator s at the end
    for name in ("fsub", "csr"):
        covered, accumulators = speculation(loops[name][1])
        assert accumulators == ("s",)
        assert len(covered) >= 3
        assert speculation(loops[name][0])[1] == ()  # nests, stores
    assert speculation(loops["peek"][0]) == (frozenset(), ())
    proven = frozenset(id(a.op) for a in provable(loops["csr"][1]))
    # `*` defers to `/` (its dividend); `/` to `-`; the unproven x[indices[k]] comes
    # before the `*`, so nothing exits between them
    assert deferring("csr", proven) == ["mul", "truediv", "sub"]


TREES = """
import numpy as np


def dot_like(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    s = 0.0
    for i in range(len(a)):
        s += a[i] * b[i] - c[i] * 0.5 + a[i] / 3.0
    return s


def ratios(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    for i in range(len(a)):
        c[i] = a[i] / (b[i] * c[i]) + a[i] * 1e300 * 1e10 - (b[i] - a[i]) * c[i]


def divisor(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    for i in range(len(a)):
        c[i] = a[i] / (b[i] * c[i])  # x / inf is 0: the product keeps its own test


def exits(a: np.ndarray, b: np.ndarray, n: int) -> float:
    s = 0.0
    for i in range(n):
        s += a[i] * 1e300 * 1e300 + b[i]  # b[i] may raise after the product overflowed
    return s


def mixed(a: np.ndarray, m: int) -> float:
    s = 0.0
    t = 0
    for i in range(len(a)):
        s += a[i] * 1e300
        t = (t + i) % m  # an int that accumulates too: never tested as a float
    return s + t


def until(a: np.ndarray, x: float) -> float:
    s = 0.0
    for i in range(len(a)):
        s -= a[i] * a[i] * 1e300  # a reduction left untested, rerun where inf/NaN
        if a[i] > x:
            break
    return s


def temps(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    s = 0.0
    t = 1.0
    for i in range(len(a)):
        d = a[i] * 1e300 - b[i]  # a local of this iteration, read twice
        e = c[i] * d
        if d > 5.0:  # may leave before d reaches s: d keeps its own test
            break
        s += d * e
        t -= e / 3.0
    return s + t


def pyfloats(x: float, y: float, n: int) -> float:
    s = x
    for i in range(n):
        s = (s * y - x) * (y + x) + (x - y) / (x * y + 1.0)
    return s
"""

#: NaNs of distinct payloads and signs (a quiet and a signalling one): which operand's
#: NaN a result carries is part of Python's answer
_NANS = [
    np.frombuffer(np.array(bits, dtype=np.uint64).tobytes(), dtype=np.float64)[0]
    for bits in (0x7FF8000000000001, 0xFFF8000000000002, 0x7FF0000000000003)
]
_SPECIAL = [*_NANS, np.inf, -np.inf, 0.0, -0.0, 5e-324, 1e308, -1e308, 1.5, -2.0]
specials = st.sampled_from(_SPECIAL) | FLOATS


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, types.ModuleType]:
    return _load(tmp_path_factory.mktemp("trees"), "loops_trees", TREES)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.lists(st.tuples(specials, specials, specials), min_size=0, max_size=5))
def test_shared_float_tests_keep_payloads_and_warnings(trees, data) -> None:
    """Expression trees whose ops share one inf/NaN test: NaN payloads, NumPy's
    warnings for the op that overflowed inside the tree (a product under a divisor
    included), Python floats' ZeroDivisionError, all as Python's."""
    ppy_mod, plain = trees
    cols = [np.array([row[k] for row in data], dtype=np.float64) for k in range(3)]
    for name in ("dot_like", "ratios", "divisor", "temps"):
        before = _fast(getattr(ppy_mod, name))
        got = _outcome(getattr(ppy_mod, name), *cols)
        assert got == _outcome(getattr(plain, name), *cols)
        assert _fast(getattr(ppy_mod, name)) == before + 1
    before = _fast(ppy_mod.mixed)
    assert _outcome(ppy_mod.mixed, cols[0], 7) == _outcome(plain.mixed, cols[0], 7)
    assert _outcome(ppy_mod.mixed, cols[0], 0) == _outcome(plain.mixed, cols[0], 0)
    assert _fast(ppy_mod.mixed) == before + 2
    for x in (0.0, np.inf, np.nan):
        assert _outcome(ppy_mod.until, cols[0], x) == _outcome(plain.until, cols[0], x)
    for n in range(len(cols[0]) + 2):  # b shorter than a: IndexError after the warning
        args = (cols[0], cols[1][:1], n)
        assert _outcome(ppy_mod.exits, *args) == _outcome(plain.exits, *args)
    for x, y, _z in data:
        args = (float(x), float(y), 3)
        assert _outcome(ppy_mod.pyfloats, *args) == _outcome(plain.pyfloats, *args)


CALLER = """
import numpy as np
import numpy.typing as npt


def bump(a: npt.NDArray[np.int64], n: int) -> int:
    t = 0
    for i in range(n):
        t = int(a[i]) + 1  # a Python int: 2**63 - 1 + 1 does not wrap
    return t


def steps(a: npt.NDArray[np.int64]) -> float:
    s = 0.0
    for k in range(a[0], a[1], 2):  # the step past 2**63 - 1 ends the range
        s += 1.0
    return s


def span(a: npt.NDArray[np.int64], x: np.ndarray) -> float:
    s = 0.0
    for k in range(a[0], a[1]):  # int64 bounds of a range: fine, they only count
        s += x[k]
    return s


def fill(a: np.ndarray, n: int) -> int:
    for i in range(n):
        a[i] = 2.0 * i
    return n
"""


@pytest.fixture(scope="module")
def caller(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, types.ModuleType]:
    return _load(tmp_path_factory.mktemp("caller"), "loops_caller", CALLER)


def test_int64_elements_as_python_ints(caller) -> None:
    """An int64 element made a Python int may be 2**63 - 1: arithmetic on it is not
    proven to fit 64 bits (the function stays Python), counting with it is."""
    ppy_mod, plain = caller
    assert not hasattr(ppy_mod.bump, "ppy_stats")
    big = np.array([2**63 - 1], dtype=np.int64)
    assert ppy_mod.bump(big, 1) == plain.bump(big, 1) == 2**63
    before = _fast(ppy_mod.span)
    x = np.arange(5.0)
    for bounds in ([1, 4], [3, 1], [-2, 0], [2**63 - 2, 2**63 - 1], [0, 6]):
        a = np.array(bounds, dtype=np.int64)
        assert _outcome(ppy_mod.span, a, x) == _outcome(plain.span, a, x)
    assert _fast(ppy_mod.span) == before + 5
    top = 2**63 - 1
    for bounds in ([top - 1, top], [top - 2, top], [top - 3, top], [-top, -top + 5]):
        a = np.array(bounds, dtype=np.int64)
        assert _outcome(ppy_mod.steps, a) == _outcome(plain.steps, a)
    assert _fast(ppy_mod.steps) == 4


def test_c_caller_answers_as_the_python_site(caller) -> None:
    """The C caller (`_loopcall`) guards, calls and boxes without Python code; every
    call it does not answer goes to the Python site, which re-guards and falls back.
    Both give Python's outcome on the same arguments, guard edges included."""
    ppy_mod, plain = caller
    fill, site = ppy_mod.fill, ppy_mod.fill.site
    assert type(fill).__name__ == "LoopCall"
    assert fill.__name__ == "fill"
    assert fill.__wrapped__ is site.fallback
    before, python_fast = _fast(fill), site.ppy_stats()["fast"]
    a = np.zeros(4)
    for n in (0, 3, 4, 5, -1):
        assert _outcome(fill, a, n) == _outcome(plain.fill, a, n) == _outcome(site, a, n)
    fast_calls = _fast(fill) - before
    assert fast_calls == 10  # five by C, five by the Python site
    assert site.ppy_stats()["fast"] == python_fast + 5  # C's five never reached Python
    falls = sum(fill.ppy_stats()["fallback"].values())
    wide = np.lib.stride_tricks.as_strided(np.zeros(1), (2**32,), (0,))
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    odd = [
        (a, 2**32 + 1),  # beyond the proven int range
        (a, True),  # a bool is no int
        (a, np.int64(2)),  # nor a NumPy integer
        (np.zeros(3, dtype=np.float32), 1),
        (np.zeros((2, 2)), 1),
        ([0.0, 0.0], 1),
    ]
    for args in odd:
        assert _outcome(fill, *args) == _outcome(plain.fill, *args)
    assert fill(wide, 0) == 0  # a dimension past 2**32 (not copied: 32 GiB)
    assert _outcome(fill, frozen, 2) == _outcome(plain.fill, frozen, 2)  # read-only: it stores
    assert _outcome(fill, a) == _outcome(plain.fill, a)  # arity: Python's TypeError
    assert _outcome(lambda: fill(a, n=2)) == _outcome(lambda: plain.fill(a, n=2))
    assert sum(fill.ppy_stats()["fallback"].values()) == falls + len(odd) + 4
    assert _fast(fill) == before + fast_calls
    assert _outcome(fill, a, 2**32) == _outcome(plain.fill, a, 2**32)  # the bound itself
    assert _fast(fill) == before + fast_calls + 1
    fill.ppy_reset()
    assert fill.ppy_stats() == {"fast": 0, "fallback": {}}


@pytest.fixture(scope="module")
def reductions(tmp_path_factory: pytest.TempPathFactory) -> Programs:
    source = loops_programs.reductions(30)
    return load_programs(tmp_path_factory, "loops_reductions", source, "r", 30)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(k=st.integers(0, 29), **program_inputs(specials))
def test_random_reductions_match_python(reductions: Programs, k: int, a, b, n: int, x) -> None:
    """Random loops that only accumulate (they speculate): untested runs, reruns on
    inf/NaN, IndexError or ZeroDivisionError midway, all answered as Python does."""
    reductions.same_as_python(k, a, b, n, x)


def test_most_random_reductions_speculate(tmp_path: Path) -> None:
    from ppy_core.compiler.cached import compile_file, load_manifest
    from ppy_core.ir import core_registry, parse_ir
    from ppy_llvm._loops_spec import speculation

    path = tmp_path / "reductions.py"
    path.write_text(loops_programs.reductions(30))
    sites = load_manifest(compile_file(path).entry)["function_sites"]
    speculating = [
        r["function"]
        for r in sites
        if any(
            speculation(op)[1]
            for op in parse_ir(r["ir_final"], core_registry()).walk()
            if op.name == "loops.for"
        )
    ]
    assert len(sites) == 30
    assert len(speculating) >= 18, speculating
