"""Per-leaf guesses (issue 27, item 3) and late number leaves that could raise.

* A cold build guesses only the leaves it cannot type: `x.shape[k]`, `len(...)`,
  `x.ndim`, loop counters and names bound once to their int arithmetic are Python
  ints, so `input.shape[1] - K + 1` (NPBench's conv2d) is no site (it refused every
  call), and `a * n + b - a` with `n = x.shape[0]` is a site with an int leaf.
* `dx**2`, `dt / dx**2` read after a tree's first operation (cavity_flow's
  pressure_poisson, nbody's `softening**2`): the specialization (dx typed float)
  runs the site only where `-2**511 < dx < 2**511` (and each divisor of a scalar
  leaf is nonzero), where Python's float pow and division cannot raise; elsewhere
  (inf, NaN, 1e200) the statement is Python's, raising where it raises after the
  warnings it gives. A division of typed floats inside the tree is the kernel's,
  whose zero check hands the call to NumPy's order.
* A Python float where the generic build guessed an array: its guard takes it as a
  scalar beside a real array (NEP 50: a Python float is weak, the kernel's dtype
  stays) except where NumPy would differ, as under a power (`s**2`: `guard: type`,
  nbody's softening). An in-process call of such a signature now gets its
  specialization, which types the float (floats no longer count as taken).
* A parameter never rebound whose default is a number literal (`alpha=1.5`) is
  guessed its default's type in the cold build, not an array.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, difference, generic, outcome_difference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ppy
from ppy_core.runtime.observed import explain

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def conv2d(input, weights):
    K = weights.shape[0]
    H_out = input.shape[1] - K + 1
    W_out = input.shape[2] - K + 1
    return H_out * W_out + len(input) - input.ndim


def scaled(a, b, x):
    n = x.shape[0]
    return a * n + b - a


def poisson(p, b, dx, dy):
    p[1:-1, 1:-1] = ((p[1:-1, 2:] + p[1:-1, 0:-2]) * dy**2 +
                     (p[2:, 1:-1] + p[0:-2, 1:-1]) * dx**2) / (2 * (dx**2 + dy**2)) - \\
        dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1]


def late(u, dt, dx):
    return (u[1:, :] - u[:-1, :]) * (dt / dx**2) + u[:-1, :]


def squares(d, s):
    return d**2 + d**2 + s**2


def axpy(a, b, alpha=1.5, n=2):
    return alpha * a + b * n - a


def bins(rmax, npt, radius):
    out = 0
    for i in range(npt):
        r1 = rmax * i / npt
        out += r1 * 2 + radius
    return out
"""


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "leaf_guesses", SOURCE)


@contextmanager
def fast_calls(pair: Pair, function: str) -> Iterator[dict[str, int]]:
    """Calls of `function`'s sites, generic and specialized alike: `fast` those that
    ran the fast path, `entered` all that reached a site (a kernel's specials handed
    to NumPy, `result: nan/zero`, too: the rewrite's test let the call through)."""

    def total() -> tuple[int, int]:
        prefix = f"{pair.name}:{function}."
        found = [s for k, s in ppy.stats().items() if k.startswith(prefix)]
        fast = sum(int(s["fast"]) for s in found)
        return fast, fast + sum(int(n) for s in found for n in s["fallback"].values())

    out: dict[str, int] = {}
    fast, entered = total()
    yield out
    after = total()
    out["fast"], out["entered"] = after[0] - fast, after[1] - entered


def test_shape_arithmetic_is_no_site(pair: Pair) -> None:
    assert pair.records("conv2d") == []
    x = np.zeros((2, 7, 6, 3))
    assert pair.fast.conv2d(x, np.zeros((3, 3))) == pair.plain.conv2d(x, np.zeros((3, 3)))


def test_a_tree_with_a_loop_counter_is_no_site(pair: Pair) -> None:
    """`rmax * i / npt` (NPBench's azimint_naive): scalar code in a loop; typing `i`
    an int would make its number leaves guessed arrays a guard refuses each time."""
    assert all("rmax * i" not in r["text"] for r in pair.records("bins"))
    assert pair.fast.bins(2.0, 5, 0.5) == pair.plain.bins(2.0, 5, 0.5)


def test_an_int_leaf_keeps_its_type_beside_guessed_arrays(pair: Pair) -> None:
    (record,) = pair.records("scaled")
    assert record["unit"] is not None
    assert record["assumed"] == ["a", "b"]  # n = x.shape[0] is an int, not guessed
    a, b = np.linspace(-3.0, 5.0, 40), np.full(40, 0.1)
    with fast_calls(pair, "scaled") as c:
        got = call(generic(pair, "scaled"), (a, b, np.zeros((7, 2))))
    want = call(pair.plain.scaled, (a, b, np.zeros((7, 2))))
    assert outcome_difference(got, want) is None
    assert c["fast"] == 1


_SCALARS = st.sampled_from(
    [0.5, -2.0, 1e-3, 3.0, 0.0, -0.0, 5e-324, 2.0**511, 6e153, 1e200, np.inf, -np.inf, np.nan]
)


def _safe(*values: float) -> bool:
    return all(abs(v) < 2.0**511 for v in values)


def _ordinary(a: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(a)))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    dx=_SCALARS,
    dy=_SCALARS,
    dtype=st.sampled_from([np.float64, np.float32]),
    special=st.booleans(),
    err=st.sampled_from(["ignore", "warn", "raise"]),
    seed=st.integers(0, 2**16),
)
def test_late_powers_run_fast_only_where_they_cannot_raise(
    pair: Pair, dx: float, dy: float, dtype: Any, special: bool, err: str, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal((6, 9)).astype(dtype)
    if special:
        p0[2, 3], p0[3, 4] = np.inf, -np.inf
    b = rng.standard_normal((6, 9)).astype(dtype)
    fast_p, plain_p = p0.copy(), p0.copy()
    with fast_calls(pair, "poisson") as c:
        got = call(pair.fast.poisson, (fast_p, b, dx, dy), all=err)
    want = call(pair.plain.poisson, (plain_p, b, dx, dy), all=err)
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    assert difference(fast_p, plain_p) is None, difference(fast_p, plain_p)
    if dtype is np.float32:
        return  # beside float32 arrays the specialization keeps the tree NumPy's
    # else Python's statement ran: it raised or could have (a division by 0.0 is the
    # kernel's: it gives the call to NumPy, `result: nan/zero`, which raises in order)
    assert c["entered"] == int(_safe(dx, dy))
    ordinary = 1e-100 < abs(dx) < 1e100 and 1e-100 < abs(dy) < 1e100
    if ordinary and not special and err != "raise":
        assert c["fast"] == 1


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(dt=_SCALARS, dx=_SCALARS, err=st.sampled_from(["ignore", "warn"]))
def test_a_late_division_of_a_power_is_pythons_where_it_raises(
    pair: Pair, dt: float, dx: float, err: str
) -> None:
    """`dt / dx**2` after `u[1:] - u[:-1]` (whose inf - inf warns first): past 2**511
    Python raises OverflowError after the warning, so the site is not entered; at
    dx == 0.0 (or 5e-324, whose square is 0.0) the division is the kernel's, which
    hands the call to NumPy (`result: nan/zero`): ZeroDivisionError in order."""
    u = np.arange(12.0).reshape(3, 4)
    u[1, 2] = u[2, 2] = np.inf
    with fast_calls(pair, "late") as c:
        got = call(pair.fast.late, (u, dt, dx), all=err)
    want = call(pair.plain.late, (u, dt, dx), all=err)
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    assert c["entered"] == int(_safe(dx)), (dt, dx, want.error)


def test_a_float_beside_guessed_arrays_gets_its_specialization(pair: Pair) -> None:
    d = np.linspace(-1.0, 1.0, 30).reshape(5, 6)
    with fast_calls(pair, "squares") as c:
        refused = call(generic(pair, "squares"), (d, 0.1))
    assert c["fast"] == 0  # the generic site guessed `s` an array: its guard refuses
    for s in (0.1, 1e200, np.inf):
        with fast_calls(pair, "squares") as c:
            got = call(pair.fast.squares, (d, s))
        want = call(pair.plain.squares, (d, s))
        assert outcome_difference(got, want) is None, outcome_difference(got, want)
        assert c["entered"] == int(_safe(s)), s
        assert c["fast"] == int(_safe(s)), s
    assert outcome_difference(refused, call(pair.plain.squares, (d, 0.1))) is None
    (line,) = explain(pair.fast.squares)
    assert ": specialized" in line, line


def test_the_rewrite_tests_only_floats_and_literals(pair: Pair) -> None:
    """The bound and divisor tests read the specialization's float parameters and
    literals, nothing a user object could answer (they run before any leaf)."""
    from ppy_core.compiler.frontend.speculate import power_bound, safe_tests

    leaf = ast.parse("dt / (2 * (dx**2 + dy**2))", mode="eval").body
    tests = [ast.unparse(t) for t in safe_tests(leaf)]
    bound = power_bound(2)
    assert tests == [
        f"{-bound} < dx < {bound}",
        f"{-bound} < dy < {bound}",
        "2 * (dx ** 2 + dy ** 2) != 0",
    ]
    assert bound == 2.0**511
    assert np.isfinite(np.nextafter(bound, 0.0) ** 2)


_LEAF_VALUES = st.sampled_from(
    ["f64", "f32", "i64", "bool", 2.5, -0.0, np.inf, 3, 2**60, np.float64(0.5), np.float32(2.0)]
)


def _value(kind: Any, rng: np.random.Generator) -> Any:
    if not isinstance(kind, str):
        return kind
    values = rng.standard_normal(12) * 4
    return values.astype({"f64": np.float64, "f32": np.float32, "i64": np.int64}.get(kind, bool))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kinds=st.tuples(_LEAF_VALUES, _LEAF_VALUES, _LEAF_VALUES, _LEAF_VALUES),
    err=st.sampled_from(["ignore", "warn", "raise"]),
    seed=st.integers(0, 2**16),
)
def test_cold_guesses_per_leaf_mixed_with_typed_scalars(
    pair: Pair, kinds: tuple[Any, ...], err: str, seed: int
) -> None:
    """The generic (cold-build) site of `alpha * a + b * n - a`: alpha and n typed by
    their defaults (float, int), a and b guessed arrays. Any mix of arrays of several
    dtypes, Python and NumPy scalars gives Python's answer, warnings and exception;
    the fast path runs where the guesses held."""
    rng = np.random.default_rng(seed)
    a, b, alpha, n = (_value(k, rng) for k in kinds)
    with fast_calls(pair, "axpy") as c:
        got = call(generic(pair, "axpy"), (a, b, alpha, n), all=err)
    want = call(pair.plain.axpy, (a, b, alpha, n), all=err)
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    typed = type(alpha) is float and type(n) is int and n < 2**53
    if kinds[:2] == ("f64", "f64") and typed and np.isfinite(alpha) and err != "raise":
        assert c["fast"] == 1, kinds
    if type(alpha) is np.ndarray:
        assert c["fast"] == 0  # typed by its default: an array there is refused


def test_a_default_types_the_leaf_in_the_cold_build(pair: Pair) -> None:
    (record,) = pair.records("axpy")
    assert record["assumed"] == ["a", "b"]
    a, b = np.linspace(0.0, 1.0, 9), np.linspace(2.0, 3.0, 9)
    with fast_calls(pair, "axpy") as c:
        got = call(generic(pair, "axpy"), (a, b))
    assert outcome_difference(got, call(pair.plain.axpy, (a, b))) is None
    assert c["fast"] == 1
