"""Views the dispatcher takes itself: `y[:, None]` read after an operation.

In `np.sqrt((x[:, None] - x[None, :])**2 + (y[:, None] - y[None, :])**2)` Python reads
`y[:, None]` after two operations, so the site call passes the names `x` and `y` and the
C dispatcher takes the views from exact ndarrays; anything else runs the fallback, which
evaluates every view where Python does (`ppy_core.compiler.frontend.views`). Fast calls
are NumPy's answer bit for bit; fallbacks keep Python's order, values and exceptions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import (
    Pair,
    call,
    compile_pair,
    counting,
    generic,
    outcome_difference,
    random_array,
    special_array,
    with_reasons,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ppy_numpy.testing import layout_copies

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def pairwise(x, y):
    return np.sqrt((x[:, None] - x[None, :]) * (x[:, None] - x[None, :])
                   + (y[:, None] - y[None, :]) * (y[:, None] - y[None, :]))


def blend(a, b, alpha):
    return a * alpha[:, None] + b * (1.0 - alpha[:, None])


def relax(u, f, steps):
    u = u.copy()
    out = u.copy()
    for _ in range(steps):
        out[1:-1] = 0.5 * (u[2:] + u[:-2]) + 0.1 * f[1:-1]
        u, out = out, u
    return u


def late(x, y):
    return (x[1:] - x[:-1]) * 2.0 + y[1:]


def local(x):
    y = x * 3.0
    return (x[1:] - x[:-1]) * 2.0 + y[1:]


def branch(x, c):
    if c:
        y = x * 3.0
    return (x[1:] - x[:-1]) * 2.0 + y[1:]


def aug(u, f):
    u[1:-1] -= 0.1 * (u[2:] - u[:-2]) + f[1:-1] * u[1:-1]
    return u


def name_aug(a, x, y):
    a += (x[1:] - x[:-1]) * 2.0 + y[1:]
    return a


def mixed(x, a):
    return (x[1:] * x[1:] + a * a) - x[1:] * a
"""

WRITES = ("aug", "name_aug")
FLOATS = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True)


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "views_late", SOURCE)


def _same(
    pair: Pair,
    function: str,
    args: tuple[Any, ...],
    counts: dict[str, Any],
    speculative: bool = False,
) -> None:
    """`function(*args)` answers as NumPy (values, exceptions, warnings) with `counts`
    (`speculative`: the generic function's sites, without the dispatcher)."""
    fn = generic(pair, function) if speculative else getattr(pair.fast, function)
    with counting(pair, function) as c:
        got = call(fn, args, all="ignore")
    want = call(getattr(pair.plain, function), args, all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    assert c == counts, with_reasons(c)


def _fast(pair: Pair, function: str, args: tuple[Any, ...], calls: int = 1) -> None:
    """`function(*args)` is NumPy's answer, every call of the site fast; a broadcast
    result holding a NaN goes back to NumPy (`_strided.h`: its bits follow NumPy's loop
    lengths), so those calls may count as such fallbacks instead. A function writing
    its arguments gets a copy of them each time, laid out as given (`_layouts`), and
    the copies' whole buffers end as NumPy's."""
    writes = function in WRITES
    fresh = [layout_copies(args if writes else ()) for _ in range(2)]
    mine, theirs = (tuple(copies) if writes else args for copies, _ in fresh)
    with counting(pair, function) as c:
        got = call(getattr(pair.fast, function), mine, all="ignore")
    want = call(getattr(pair.plain, function), theirs, all="ignore")
    assert fresh[0][1].buffer_bytes() == fresh[1][1].buffer_bytes()
    assert got.value is not want.value
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    if not np.isnan(want.value).any():
        assert c == {"fast": calls, "fallback": {}}, with_reasons(c)
        return
    assert set(c["fallback"]) <= {"result: nan/zero"}, with_reasons(c)
    assert c["fast"] + sum(c["fallback"].values()) == calls, with_reasons(c)


def test_each_program_is_one_site_passing_names(pair: Pair) -> None:
    (p,) = pair.records("pairwise")
    assert p["unit"] is not None, p["reasons"]
    assert p["args"] == ["x", "y"]
    assert p["leaves"] == ["x[:, None]", "x[None, :]", "y[:, None]", "y[None, :]"]
    assert p["views"] == [
        [0, [[None, None, None], None]],
        [0, [None, [None, None, None]]],
        [1, [[None, None, None], None]],
        [1, [None, [None, None, None]]],
    ]
    (b,) = pair.records("blend")
    assert b["args"] == ["a", "alpha", "b"]
    assert b["leaves"] == ["a", "alpha[:, None]", "b"]  # alpha[:, None] once
    (r,) = pair.records("relax")
    assert r["store"] == "="
    assert r["args"] == ["u", "f"]
    assert r["views"] == [[0, [[2, None, None]]], [0, [[None, -2, None]]], [1, [[1, -1, None]]]]
    assert pair.compiled("local")
    (a,) = pair.records("aug")
    assert (a["store"], a["args"]) == ("item", ["u", "f"])  # the target is the runtime's
    (n,) = pair.records("name_aug")
    assert (n["store"], n["args"]) == ("name", ["x", "y"])
    (m,) = pair.records("mixed")  # one view and one name, each read three times
    assert (m["args"], m["leaves"]) == (["x", "a"], ["x[1:]", "a"])
    assert not pair.records("branch")  # `y` may be unbound: Python's order, no site


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 257])
def test_the_programs_are_numpys_answer(pair: Pair, n: int) -> None:
    rng = np.random.default_rng(n)
    for make in (random_array, special_array):
        _fast(pair, "pairwise", (make(rng, (n,)), make(rng, (n,))))
        _fast(pair, "blend", (make(rng, (n, 5)), make(rng, (n, 5)), make(rng, (n,))))
        if n >= 3:
            _fast(pair, "relax", (make(rng, (n,)), make(rng, (n,)), 3), calls=3)
        if n >= 2:
            _fast(pair, "late", (make(rng, (n,)), make(rng, (n,))))
            _fast(pair, "local", (make(rng, (n, 3)),))
            _fast(pair, "name_aug", (make(rng, (n - 1,)), make(rng, (n,)), make(rng, (n,))))
            _fast(pair, "mixed", (make(rng, (n,)), make(rng, (n - 1,))))
        if n >= 3:
            _fast(pair, "aug", (make(rng, (n,)), make(rng, (n,))))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(hnp.arrays(np.float64, st.tuples(st.just(2), st.integers(1, 30)), elements=FLOATS))
def test_hypothesis_pairwise(pair: Pair, xy: np.ndarray) -> None:
    _fast(pair, "pairwise", (xy[0].copy(), xy[1].copy()))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    hnp.arrays(np.float64, st.tuples(st.integers(1, 9), st.integers(1, 9)), elements=FLOATS),
    st.data(),
)
def test_hypothesis_blend_and_relax(pair: Pair, a: np.ndarray, data: st.DataObject) -> None:
    alpha = data.draw(hnp.arrays(np.float64, a.shape[0], elements=FLOATS))
    _fast(pair, "blend", (a, a[::-1].copy(), alpha))
    if a.size >= 3:
        _fast(pair, "relax", (a.ravel().copy(), a.ravel()[::-1].copy(), 2), calls=2)


def test_views_of_views_and_strided_bases_take_the_fast_path(pair: Pair) -> None:
    base = np.random.default_rng(5).standard_normal((40, 6))
    _fast(pair, "pairwise", (base[:39:3, 1], base[1::3, 4]))
    _fast(pair, "late", (base[:, 2], base[::-1, 3]))
    _fast(pair, "blend", (base[::2], base[1::2], base[::2, 0]))
    # writes through strided views of one buffer (each call its own copy of `base`)
    _fast(pair, "aug", (base[::2, 1], base[1::2, 4]))
    _fast(pair, "name_aug", (base[1::3, 0][:13], base[::3, 5], base[::-3, 2]))


class Loud:
    """Another library's sequence: indexing and `-` record themselves; `-` may raise."""

    def __init__(self, log: list[str], name: str, raises: bool = False) -> None:
        self.log, self.name, self.raises = log, name, raises

    def __getitem__(self, key: object) -> Loud:
        self.log.append(f"{self.name}[{key!r}]")
        return Loud(self.log, f"{self.name}[]", self.raises)

    def __sub__(self, other: object) -> Loud:
        self.log.append("-")
        if self.raises:
            raise ZeroDivisionError("no difference here")
        return self

    def __mul__(self, other: object) -> Loud:
        self.log.append("*")
        return self

    def __add__(self, other: object) -> Loud:
        self.log.append("+")
        return self


@pytest.mark.parametrize("raises", [False, True])
def test_other_objects_see_pythons_order(pair: Pair, raises: bool) -> None:
    """`(x[1:] - x[:-1]) * 2.0 + y[1:]`: `y` is indexed after `-` and `*`, or never."""
    logs = []
    for module in (pair.fast, pair.plain):
        log: list[str] = []
        args = (Loud(log, "x", raises), Loud(log, "y"))
        outcome = call(module.late, args)
        logs.append((log, outcome.error))
    assert logs[0] == logs[1]
    assert logs[0][0][-1] == ("-" if raises else "+")


FALLBACKS: list[tuple[str, str, Any, str]] = [
    ("list", "pairwise", lambda: ([1.0, 2.0], [3.0, 4.0]), "guard: type"),
    ("0-d", "pairwise", lambda: (np.array(1.0), np.array(2.0)), "guard: view"),
    ("2-d late base", "late", lambda: (np.ones(4), np.ones((4, 2))), "guard: shape"),
    ("no broadcast", "late", lambda: (np.ones(5), np.ones(7)), "guard: shape"),
    ("int array", "pairwise", lambda: (np.arange(3.0), np.arange(3)), "guard: dtype"),
    ("subclass", "pairwise", lambda: (np.ones(3), np.ma.masked_array(np.ones(3))), "guard: type"),
    ("list in a store", "relax", lambda: (np.ones(5), [1.0] * 5, 1), "guard: type"),
    ("short store", "relax", lambda: (np.ones(5), np.ones(4), 1), "guard: shape"),
]


@pytest.mark.parametrize(
    ("function", "make", "reason"), [c[1:] for c in FALLBACKS], ids=[c[0] for c in FALLBACKS]
)
def test_anything_else_runs_python_with_its_answer(
    pair: Pair, function: str, make: Any, reason: str
) -> None:
    """The speculative site's guard (the generic function: a signature's specialization
    may take these, `test_observed.py`); through the dispatcher, NumPy's answer too."""
    _same(pair, function, make(), {"fast": 0, "fallback": {reason: 1}}, speculative=True)
    got = call(getattr(pair.fast, function), make(), all="ignore")
    want = call(getattr(pair.plain, function), make(), all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)


def test_a_name_that_may_be_unbound_stays_python(pair: Pair) -> None:
    x = np.linspace(0.0, 1.0, 9)
    for c in (True, False):
        got, want = call(pair.fast.branch, (x, c)), call(pair.plain.branch, (x, c))
        assert outcome_difference(got, want) is None, outcome_difference(got, want)
    assert call(pair.fast.branch, (x, False)).error is not None  # UnboundLocalError


def test_explain_says_which_names_are_passed(pair: Pair) -> None:
    from ppy_core.cli.commands import explain_file

    assert "passes x, y: the runtime takes the views of them itself" in explain_file(str(pair.path))
