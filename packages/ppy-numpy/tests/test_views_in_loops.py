"""Views of locals a loop body binds: `un = u.copy()` at the top of a `while` body, read
by the body's later stencil statements, and column views (`u[1:-1, 0]`: an integer
literal beside a slice) read after an operation (NPBench's channel_flow).

The name is surely bound there (the assignment ran first on every path through the
body), so a store site whose views come after its first operation passes `un` by name
and the dispatcher takes the views (`ppy_core.compiler.frontend.views`). A local read
before its binding in the body (the previous iteration's) keeps Python's order: no site.
A column's integer may be out of range: the dispatcher's view fails and the fallback
raises NumPy's IndexError where Python does. Fast calls are NumPy's bytes in every array
written, with NaN, inf, -0.0 and subnormals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, difference, random_array, special_array
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def stepper(u, v, dt, n):
    k = 0
    while k < n:
        un = u.copy()
        vn = v.copy()
        u[1:-1, 1:-1] = un[1:-1, 1:-1] - vn[1:-1, 1:-1] * dt * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
        v[1:-1, 1:-1] = vn[1:-1, 1:-1] + un[1:-1, 1:-1] * dt * (vn[1:-1, 2:] - vn[1:-1, 0:-2])
        k += 1
    return k


def columns(b, u, dx, k):
    b[1:-1, -1] = (u[1:-1, 0] - u[1:-1, -2]) / (2 * dx) + (u[2:, -1] - u[0:-2, -1])
    b[1:-1, 0] = (u[1:-1, 1] - u[1:-1, -1]) / (2 * dx) - u[1:-1, 3] * u[0:-2, 0]
    b[1:-1, 1] = (u[1:-1, 1] - u[1:-1, -1]) * dx + u[1:-1, k]
    return b


def previous(x, n):
    for k in range(n):
        if k > 0:
            x[1:] = (x[1:] - x[:-1]) * 2.0 + xp[1:]
        xp = x.copy()
    return x
"""

FLOATS = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True)


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "views_in_loops", SOURCE)


def _counts(pair: Pair, function: str) -> tuple[int, dict[str, int]]:
    """Fast calls and fallbacks of every site of `function`, its specializations' too."""
    fast, fallback = 0, {}
    for key, data in ppy.stats().items():
        if key.startswith(f"{pair.name}:{function}."):
            fast += int(data["fast"])
            for reason, n in data["fallback"].items():
                fallback[reason] = fallback.get(reason, 0) + int(n)
    return fast, fallback


def _same(
    pair: Pair,
    function: str,
    arrays: list[np.ndarray],
    rest: tuple[Any, ...],
    allowed: frozenset[str] = frozenset({"result: nan/zero"}),
) -> int:
    """`function(*arrays, *rest)` on copies: value, exception, warnings and every array
    NumPy's; the fast calls it made (a NaN result may go back to NumPy instead, and
    whatever fallbacks `allowed` names)."""
    mine, theirs = [a.copy() for a in arrays], [a.copy() for a in arrays]
    fast0, fb0 = _counts(pair, function)
    got = call(getattr(pair.fast, function), (*mine, *rest), all="ignore")
    want = call(getattr(pair.plain, function), (*theirs, *rest), all="ignore")
    fast1, fb1 = _counts(pair, function)
    assert (got.error, got.warnings) == (want.error, want.warnings)
    assert type(got.value) is type(want.value)
    assert difference(got.value, want.value) is None, difference(got.value, want.value)
    for g, w in zip(mine, theirs, strict=True):
        assert difference(g, w) is None, difference(g, w)
    falls = {r: n - fb0.get(r, 0) for r, n in fb1.items() if n != fb0.get(r, 0)}
    assert set(falls) <= allowed, falls
    return fast1 - fast0


def test_the_loop_bodys_stencils_are_sites_passing_names(pair: Pair) -> None:
    u, v = pair.records("stepper")
    assert (u["store"], u["args"]) == ("=", ["un", "vn", "dt"])
    assert (v["store"], v["args"]) == ("=", ["vn", "un", "dt"])
    assert u["unit"] is not None
    assert v["unit"] is not None
    assert not pair.records("previous")  # `xp` may be the last iteration's, or unbound
    first, second = pair.records("columns")  # `u[1:-1, k]`: no literal, Python's order
    assert (first["store"], first["args"]) == ("=", ["u", "dx"])
    assert first["views"][0] == [0, [[1, -1, None], 0]]
    assert (second["store"], second["args"]) == ("=", ["u", "dx"])


@pytest.mark.parametrize("shape", [(4, 5), (9, 4), (61, 61)])
def test_column_views_are_numpys_bytes_and_fast(pair: Pair, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[0])
    b, u = rng.standard_normal(shape), rng.standard_normal(shape)
    assert _same(pair, "columns", [b, u], (0.25, 2)) == 2
    for make in (random_array, special_array):
        _same(pair, "columns", [make(rng, shape), make(rng, shape)], (-0.0, -1))
    assert _same(pair, "columns", [b, np.full(shape, 5e-324)], (1e-300, 1)) == 2


def test_a_column_out_of_range_raises_as_numpy(pair: Pair) -> None:
    # u[1:-1, 3] of 3 columns: NumPy's IndexError, after the first statement's store;
    # u[1:-1, k] (Python's) out of range after both sites stored
    rng = np.random.default_rng(3)
    view = frozenset({"guard: view"})
    assert _same(pair, "columns", [rng.random((5, 3)), rng.random((5, 3))], (0.5, 0), view) == 1
    assert _same(pair, "columns", [rng.random((5, 1)), rng.random((5, 1))], (0.5, 0), view) == 0
    assert _same(pair, "columns", [rng.random((5, 4)), rng.random((5, 4))], (0.5, 7), view) == 2


@pytest.mark.parametrize("shape", [(3, 3), (4, 7), (17, 9), (61, 61)])
def test_the_steps_are_numpys_bytes_and_fast(pair: Pair, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    finite = [rng.standard_normal(shape), rng.standard_normal(shape)]
    assert _same(pair, "stepper", finite, (0.01, 4)) == 8  # two sites, four steps
    for make in (random_array, special_array):
        _same(pair, "stepper", [make(rng, shape), make(rng, shape)], (0.5, 3))
        _same(pair, "previous", [make(rng, (shape[1],))], (3,))
    tiny = np.full(shape, 5e-324)
    zeros = -np.zeros(shape)
    assert _same(pair, "stepper", [tiny, zeros], (-0.0, 2)) == 4
    assert _same(pair, "stepper", [finite[0], finite[1]], (0.1, 0)) == 0  # no step


def test_empty_and_thin_arrays_answer_as_numpy(pair: Pair) -> None:
    empty = frozenset({"guard: empty"})  # nothing to compute: NumPy's own no-op
    for shape in [(0, 0), (2, 5), (1, 1), (5, 2), (0, 3)]:
        _same(pair, "stepper", [np.ones(shape), np.ones(shape)], (0.1, 2), empty)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    hnp.arrays(np.float64, st.tuples(st.integers(3, 9), st.integers(3, 9)), elements=FLOATS),
    st.data(),
)
def test_hypothesis_steps(pair: Pair, u: np.ndarray, data: st.DataObject) -> None:
    v = data.draw(hnp.arrays(np.float64, u.shape, elements=FLOATS))
    dt = data.draw(FLOATS)
    _same(pair, "stepper", [u, v], (dt, 2))


# -- random programs: where a loop body binds the viewed name, and which columns --------

POSITIONS = ("top", "before", "nested", "after", "branch")
#: the binding dominates the statement: the rule passes the name, a site must exist
DOMINATING = ("top", "before", "nested")
ROWS = ("1:-1", "2:", ":-2")
COLUMNS = ("0", "1", "-1", "-2", "2", "4")


def _program(rng: np.random.Generator, index: int) -> tuple[str, str]:
    """One random function (its source) and where it binds `w`."""
    position = POSITIONS[index % len(POSITIONS)]
    column = str(rng.choice(COLUMNS)) if rng.random() < 0.6 else None

    def view(name: str) -> str:
        rows = str(rng.choice(ROWS))
        if column is not None:
            return f"{name}[{rows}, {rng.choice(COLUMNS)}]"
        return f"{name}[{rows}, {rng.choice(ROWS)}]"

    def tree(depth: int) -> str:
        if depth == 0 or rng.random() < 0.25:
            pick = rng.random()
            if pick < 0.6:
                return view(str(rng.choice(["u", "w", "v"])))
            return "s" if pick < 0.8 else str(rng.choice(["2.0", "0.5", "-1.5", "1e-310"]))
        op = str(rng.choice(["+", "-", "*"]))
        return f"({tree(depth - 1)} {op} {tree(depth - 1)})"

    # at least two operations, and a view of `w` read after the first of them
    value = f"({view('v')} {rng.choice(['+', '-', '*'])} {tree(2)}) * s + {view('w')}"
    target = f"u[1:-1, {column}]" if column is not None else "u[1:-1, 1:-1]"
    stencil = f"{target} = {value}"
    body = {
        "top": [stencil],
        "before": ["w = v.copy()", stencil],
        "nested": ["w = v.copy()", "for j in range(1):", f"    {stencil}"],
        "after": [stencil, "w = v.copy()"],
        "branch": ["if k % 2 == 0:", "    w = v.copy()", stencil],
    }[position]
    lines = [f"def p{index}(u, v, s, n):"]
    lines += ["    w = v.copy()"] if position == "top" else []  # "after": unbound at first
    lines += ["    k = 0", "    while k < n:"]
    lines += [f"        {line}" for line in body]
    lines += ["        k += 1", "    return k", ""]
    return "\n".join(lines), position


def _finite(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.standard_normal(shape)


@pytest.fixture(scope="module")
def programs(project: Path) -> tuple[Pair, list[str]]:
    rng = np.random.default_rng(2027)
    made = [_program(rng, k) for k in range(15)]
    source = "import numpy as np\n\n\n" + "\n\n".join(text for text, _ in made)
    return compile_pair(project, "views_in_loops_random", source), [p for _, p in made]


def test_random_programs_answer_as_numpy_and_take_the_rule(
    programs: tuple[Pair, list[str]],
) -> None:
    pair, positions = programs
    rng = np.random.default_rng(7)
    # a NaN result, a column or target out of range, an empty view: NumPy answers
    loose = frozenset({"result: nan/zero", "guard: view", "guard: target", "guard: empty"})
    for k, position in enumerate(positions):
        records = pair.records(f"p{k}")
        if position in DOMINATING:  # the loop body's stencil is a site passing `w`
            (record,) = records
            assert record["unit"] is not None, record["reasons"]
            assert "w" in record["args"], (k, record["args"])
        else:  # `w` may be unbound there, or the last iteration's: never passed by name
            assert all("w" not in r["args"] for r in records), (k, records)
        fast = 0
        for shape in [(7, 8), (3, 3), (6, 2)]:
            # finite values (a NaN result goes back to NumPy: `_same`), then specials
            for make in (_finite, random_array, special_array):
                u, v = make(rng, shape), make(rng, shape)
                fast += _same(pair, f"p{k}", [u, v], (float(rng.standard_normal()), 2), loose)
        if position in DOMINATING:
            assert fast > 0, k
