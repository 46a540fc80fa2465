"""Dtypes (issue 18, item 4): float32 end to end, and what stays NumPy.

A site over float32 arrays and Python numbers is one float32 kernel: its result is a
float32 array computed in float32 (NumPy 2's weak-scalar rule: a Python float meeting
a float32 array is cast to float32; literals are rounded to float32 at compile time),
bit for bit NumPy's. What the kernel does not reproduce keeps NumPy, each with a test
below: a NaN in a float32 result (its bits follow NumPy's operand order), float32
transcendentals and reductions (NumPy's float32 loops), a float32 array meeting a
float64 one or an `np.float64` (promotion), strided or broadcast float32 operands,
int and bool arrays. `np.float64` scalars are float64 leaves of float64 sites.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pytest
from _npharness import SPECIALS, Pair, compile_pair, run_both, with_reasons
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

F32 = "npt.NDArray[np.float32]"
F64 = "npt.NDArray[np.float64]"

#: name -> expression over float32 arrays a, b, c and a Python float s
FUSED32: dict[str, str] = {
    "triad": "a * b + c",
    "poly": "2.5 * a + 3.0 * b * c - a / b",
    "weak": "a * s - 0.1",
    "neg_abs": "-np.abs(a - b) + abs(c)",
    "sqrt": "np.sqrt(np.abs(a)) * b",
    "rounding": "np.floor(a) + np.ceil(b) - np.trunc(c)",
    "powers": "a ** 2 + np.abs(b) ** 0.5 - c ** -1",
    "extrema": "np.maximum(a, b) - np.minimum(c, s)",
    "where": "np.where(a > b, a * c, b - 0.3)",
    "where_lit": "np.where(a < s, a, 0.0)",
    "compare": "a * b >= c + s",
    "square": "np.square(a) / np.reciprocal(b)",
}
#: float32 sites that stay NumPy, and the reason the backend or the plugin gives
STAYS32: dict[str, tuple[str, str]] = {
    "sin": ("np.sin(a) * 2.0", "E2048"),  # NumPy's float32 loop
    "power": ("a ** 1.5 + b", "E2048"),
    "sum": ("np.sum(a * b)", ""),  # a float32 reduction: no site fuses it
    "huge": ("a * 1e300 + b", "E2048"),  # the literal overflows float32 (NumPy warns)
}


def _source() -> str:
    lines = ["import numpy as np", "import numpy.typing as npt", ""]
    for name, expr in FUSED32.items():
        lines += ["", f"def {name}(a: {F32}, b: {F32}, c: {F32}, s: float):", f"    return {expr}"]
    for name, (expr, _code) in STAYS32.items():
        lines += ["", f"def {name}(a: {F32}, b: {F32}, c: {F32}, s: float):", f"    return {expr}"]
    lines += [
        "",
        f"def mixed(a: {F32}, b: {F64}):",
        "    return a * b + 1.0",
        "",
        f"def f64_scalar(a: {F64}, x: np.float64):",
        "    return a * x + x",
        "",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def dt(project) -> Pair:
    return compile_pair(project, "item4_dtypes", _source())


SPECIALS32 = np.array(
    [
        *SPECIALS[np.isfinite(SPECIALS) & (np.abs(SPECIALS) < 3e38)],
        np.inf,
        -np.inf,
        1e-45,
        -1e-45,
        1.1754944e-38,
        3.4028235e38,
        -3.4028235e38,
        16777217.0,
    ],
).astype(np.float32)


def _f32(rng: np.random.Generator, shape: Any, special: float = 0.2) -> np.ndarray:
    size = int(np.prod(shape))
    x = (rng.standard_normal(size) * 10.0 ** rng.uniform(-6, 6, size)).astype(np.float32)
    pick = rng.random(size) < special
    x[pick] = SPECIALS32[rng.integers(0, len(SPECIALS32), int(pick.sum()))]
    return x.reshape(shape)


def _may_refuse(want: Any) -> bool:
    """The fast path hands a float32 result holding a NaN (or an empty one) to NumPy."""
    if not isinstance(want.value, np.ndarray) or want.value.size == 0:
        return True
    return want.value.dtype == np.float32 and bool(np.isnan(want.value).any())


@pytest.mark.parametrize("name", sorted(FUSED32))
def test_float32_sites_are_float32_kernels(dt: Pair, name: str) -> None:
    """Every shape, random and special data: float32 results, NumPy's bits; the fast
    path ran unless NumPy must answer (a NaN result)."""
    assert dt.compiled(name), dt.records(name)
    rng = np.random.default_rng(sum(map(ord, name)))
    ran = 0
    for shape in [(1,), (5,), (8,), (9,), (17,), (255,), (1031,), (4, 7), (16, 17)]:
        for special in (0.0, 0.2):
            args = (*(_f32(rng, shape, special) for _ in range(3)), float(rng.uniform(-2, 2)))
            problem, counts, want = run_both(dt, name, args, all="ignore")
            assert problem is None, (name, shape, problem)
            if isinstance(want.value, np.ndarray) and name != "compare":
                assert want.value.dtype == np.float32
            if not _may_refuse(want):
                assert counts["fast"] == 1, (name, shape, with_reasons(counts))
            ran += counts["fast"]
    assert ran > 0


_F32_VALUES = st.one_of(
    st.sampled_from([float(x) for x in SPECIALS32]),
    st.floats(width=32, allow_nan=False),
    st.floats(-3.0, 3.0, width=32),
)


@st.composite
def _f32_operands(draw: st.DrawFn) -> tuple[Any, ...]:
    shape = draw(
        st.one_of(st.tuples(st.integers(1, 80)), st.tuples(st.integers(1, 5), st.integers(1, 9)))
    )
    size = int(np.prod(shape))
    arrays = tuple(
        np.array(draw(st.lists(_F32_VALUES, min_size=size, max_size=size)), np.float32).reshape(
            shape
        )
        for _ in range(3)
    )
    scalar = draw(st.one_of(st.floats(allow_nan=False), st.integers(-(2**53), 2**53)))
    return (*arrays, scalar)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=st.sampled_from(sorted(FUSED32)), args=_f32_operands())
def test_hypothesis_float32_bitwise(dt: Pair, name: str, args: tuple[Any, ...]) -> None:
    """Random float32 data (subnormals, ±0, ±inf, the float32 extremes) and any Python
    float or int as the weak scalar (one beyond float32's range overflows in NumPy's
    cast): NumPy's values, dtype, shape, layout and warnings, in both error states."""
    for errstate in ({"all": "ignore"}, {}):
        problem, counts, want = run_both(dt, name, args, **errstate)
        assert problem is None, (name, args[0].shape, errstate, problem)
        fits = abs(float(args[3])) < 3.4e38
        if errstate and fits and not want.warnings and not _may_refuse(want):
            assert counts["fast"] == 1, (name, with_reasons(counts))


@pytest.mark.parametrize("name", sorted(STAYS32))
def test_float32_refusals_stay_numpy(dt: Pair, name: str) -> None:
    """float32 loops, powers, reductions and an overflowing literal keep NumPy, with
    the backend's reason; NumPy's answer either way. (`np.sum(a * b)`: the sum stays
    NumPy, its float32 operand `a * b` is a fused site of its own.)"""
    expr, code = STAYS32[name]
    records = [r for r in dt.records(name) if r["text"] == ast.unparse(ast.parse(expr))]
    assert all(r["unit"] is None for r in records), dt.records(name)
    assert bool(records) == bool(code), dt.records(name)  # np.sum of float32: no site
    if code:
        reasons = " ".join(" ".join(r["reasons"]) for r in records)
        assert code in reasons, reasons
    rng = np.random.default_rng(1)
    args = (*(_f32(rng, (40,)) for _ in range(3)), 0.5)
    for errstate in ({"all": "ignore"}, {}):
        problem, counts, _want = run_both(dt, name, args, **errstate)
        assert problem is None, (name, problem)
        assert counts["fast"] <= (name == "sum"), (name, counts)  # sum: only `a * b` fuses


def test_run_time_refusals_are_counted(dt: Pair) -> None:
    """Each guard refusal of a float32 site runs NumPy, counted by its reason: an
    np.float64 / 0-d float64 scalar (strong: float64 result), float64 arrays, an int
    array, a NaN in the result. Strided and broadcast views run fast (row by row)."""
    rng = np.random.default_rng(4)
    a, b, c = (_f32(rng, (6, 8), 0.0) for _ in range(3))
    cases = [
        ("weak", (a, b, c, np.float64(0.5)), "guard: scalar"),
        ("weak", (a, b, c, np.array(0.5)), "guard: scalar"),
        ("weak", (a, b, c, 2**60), "guard: scalar"),
        ("poly", (a.astype(np.float64), b, c, 0.5), "guard: dtype"),
        ("poly", (a, b, np.arange(48).reshape(6, 8), 0.5), "guard: dtype"),
        ("poly", (a[:, ::2], b[:, ::2], c[:, ::2], 0.5), None),  # strided: fast
        ("poly", (a, b[0], c, 0.5), None),  # broadcast: fast
        ("poly", (a, b.T.copy().T, c, 0.5), None),  # equal C-contiguous copies: fast
        ("poly", (a.T, b.T, c.T, 0.5), None),  # all F-contiguous: fast, F order
        ("poly", (a.T, b, c, 0.5), "guard: shape"),  # NumPy raises: it answers
    ]
    for name, args, reason in cases:
        problem, counts, _want = run_both(dt, name, args, all="ignore")
        assert problem is None, (reason, problem)
        assert counts["fast"] == int(reason is None), (reason, counts)
        assert counts["fallback"] == ({reason: 1} if reason else {}), (reason, counts)
    nan = (np.full((6, 8), np.inf, np.float32), np.zeros((6, 8), np.float32), c, 0.5)
    problem, counts, _ = run_both(dt, "triad", nan, all="ignore")
    assert problem is None
    assert counts["fallback"] == {"result: nan/zero": 1}, counts


def test_mixed_widths_stay_numpy(dt: Pair) -> None:
    """float32 with float64 arrays promotes to float64: no kernel, NumPy's answer."""
    assert not dt.records("mixed"), dt.records("mixed")
    rng = np.random.default_rng(5)
    args = (_f32(rng, (33,)), rng.standard_normal(33))
    problem, _counts, want = run_both(dt, "mixed", args)
    assert problem is None
    assert want.value.dtype == np.float64


def test_float64_scalars_are_leaves(dt: Pair) -> None:
    """`x: np.float64` is a float64 scalar leaf: NumPy's float64 bits, fast path."""
    assert dt.compiled("f64_scalar"), dt.records("f64_scalar")
    rng = np.random.default_rng(6)
    a = rng.standard_normal(300)
    for x in (np.float64(1.5), np.float64(-0.0), np.float64(np.nan), np.float64(1e308)):
        problem, counts, _ = run_both(dt, "f64_scalar", (a, x), all="ignore")
        assert problem is None, (x, problem)
        assert counts["fast"] == 1, (x, with_reasons(counts))


def test_float32_threads_keep_bits(dt: Pair) -> None:
    """1e6+3 float32 elements split over 1, 2 and 3 threads: NumPy's bits each time."""
    from ppy_numpy._runtime import num_threads, set_num_threads

    rng = np.random.default_rng(11)
    args = (*(_f32(rng, (1_000_003,), 0.0) for _ in range(3)), 0.7)
    before = num_threads()
    try:
        for threads in (1, 2, 3):
            set_num_threads(threads)
            for name in ("poly", "where", "compare"):
                problem, counts, _ = run_both(dt, name, args, all="ignore")
                assert problem is None, (name, threads, problem)
                assert counts["fast"] == 1, (name, threads, with_reasons(counts))
    finally:
        set_num_threads(before)
