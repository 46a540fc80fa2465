"""Dtypes (issue 18, item 4): int64/int32 arithmetic and bool masks.

int64 and int32 arrays with Python ints under `+ - *`, negation, abs, extrema and
comparisons are one integer kernel that wraps around as NumPy does; division, powers,
floats (float64 results) and literals outside the type stay NumPy, each tested. Masks
computed in a site and combined with `& | ^ ~` / np.logical_* fuse with it.
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

I64, I32 = "npt.NDArray[np.int64]", "npt.NDArray[np.int32]"
#: name -> expression over int arrays a, b, c and a Python int k (int64 and int32)
FUSED_INT: dict[str, str] = {
    "i_triad": "a * b + c",
    "i_poly": "3 * a - b * c + k",
    "i_neg_abs": "-np.abs(a - b) + abs(c)",
    "i_extrema": "np.maximum(a, b) - np.minimum(c, k)",
    "i_compare": "a * b >= c - k",
    "i_square": "a * a * a - 7",
}
#: integer sites that stay NumPy (float results, promotion, literals out of range); of
#: int64, `/` and a float fuse as float64 sites (ints converted: test_mixed_dtypes.py)
STAYS_INT: dict[str, tuple[str, str]] = {
    "i_div": ("a / b + c", ""),  # true division: float64 (of int32, the plugin leaves it)
    "i_pow": ("a ** 2 + b", ""),
    "i_float": ("a * 2.5 + b", ""),  # a float promotes to float64 (as i_div)
    # outside int32 (NumPy raises OverflowError); within int64, where it fuses
    "i_big": ("a * 1099511627776 + b", "E2049"),
}


#: bool masks computed in the site and combined: `&`, `|`, `^`, `~`, np.logical_*
MASKS: dict[str, str] = {
    "m_and": "(a > b) & (c < 0.5)",
    "m_or_not": "(a > b) | ~(c <= s)",
    "m_xor": "(a == b) ^ (a != c)",
    "m_where": "np.where((a > b) & ~(c < s), a * c, b - 1.0)",
    "m_funcs": "np.logical_xor(a > 0, np.logical_not(np.logical_or(b > 0, c < a)))",
    "m_speculative": "np.where((a >= b) & (c > 0), a, c)",
}


def _source() -> str:
    lines = ["import numpy as np", "import numpy.typing as npt", ""]
    for width, ann in (("64", I64), ("32", I32)):
        for name, expr in {**FUSED_INT, **{k: v[0] for k, v in STAYS_INT.items()}}.items():
            lines += ["", f"def {name}{width}(a: {ann}, b: {ann}, c: {ann}, k: int):"]
            lines += [f"    return {expr}"]
    for name, expr in MASKS.items():
        ann = "" if name == "m_speculative" else ": np.ndarray"
        lines += ["", f"def {name}(a{ann}, b{ann}, c{ann}, s: float):", f"    return {expr}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def dt(project) -> Pair:
    return compile_pair(project, "item4_ints_masks", _source())


# -- integers -------------------------------------------------------------------------

INT_EXTREMES = {
    np.int64: (-(2**63), 2**63 - 1, -(2**62), 2**32, -1, 0, 1),
    np.int32: (-(2**31), 2**31 - 1, -(2**30), 65536, -1, 0, 1),
}


@st.composite
def _int_operands(draw: st.DrawFn) -> tuple[Any, ...]:
    dtype = draw(st.sampled_from([np.int64, np.int32]))
    info = np.iinfo(dtype)
    value = st.one_of(
        st.sampled_from(INT_EXTREMES[dtype]), st.integers(int(info.min), int(info.max))
    )
    shape = draw(
        st.one_of(st.tuples(st.integers(1, 70)), st.tuples(st.integers(1, 5), st.integers(1, 9)))
    )
    size = int(np.prod(shape))
    arrays = tuple(
        np.array(draw(st.lists(value, min_size=size, max_size=size)), dtype).reshape(shape)
        for _ in range(3)
    )
    return (*arrays, draw(value))


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=st.sampled_from(sorted(FUSED_INT)), args=_int_operands())
def test_hypothesis_int_wraparound(dt: Pair, name: str, args: tuple[Any, ...]) -> None:
    """int64 and int32 arrays with Python ints, extremes included: NumPy's wrapped
    values, dtype (int64/int32, bool for compares), shape and (no) warnings, on the
    fast path."""
    width = "64" if args[0].dtype == np.int64 else "32"
    problem, counts, want = run_both(dt, name + width, args)
    assert problem is None, (name + width, problem)
    assert counts["fast"] == 1, (name + width, with_reasons(counts))
    assert want.value.dtype == (np.bool_ if name == "i_compare" else args[0].dtype)


@pytest.mark.parametrize("name", sorted(FUSED_INT))
def test_int_sites_compile_for_both_widths(dt: Pair, name: str) -> None:
    for width in ("64", "32"):
        assert dt.compiled(name + width), dt.records(name + width)


@pytest.mark.parametrize("name", sorted(STAYS_INT))
def test_int_refusals_stay_numpy(dt: Pair, name: str) -> None:
    """Division, powers and floats with int arrays have float64 results (NumPy's own
    loops); a literal outside int32 raises in NumPy: each stays NumPy, same answer."""
    expr, code = STAYS_INT[name]
    rng = np.random.default_rng(2)
    for width, dtype in (("64", np.int64), ("32", np.int32)):
        fn = name + width
        if width == "64" and name in ("i_big", "i_div", "i_float"):
            continue  # within int64 these fuse
        root = [r for r in dt.records(fn) if r["text"] == ast.unparse(ast.parse(expr))]
        assert all(r["unit"] is None for r in root), dt.records(fn)
        if code and width == "32":
            assert code in " ".join(" ".join(r["reasons"]) for r in root), root
        args = (*(rng.integers(-100, 100, 40).astype(dtype) for _ in range(3)), 3)
        problem, counts, _ = run_both(dt, fn, args, all="ignore")
        assert problem is None, (fn, problem)
        assert counts["fast"] == 0, (fn, counts)


def test_int_guard_refusals(dt: Pair) -> None:
    """A Python int outside the array's type (NumPy 2 raises OverflowError), a float,
    an np.int64 (not taken), another int width: NumPy answers. Strided views run fast."""
    rng = np.random.default_rng(3)
    a, b, c = (rng.integers(-9, 9, (4, 6)).astype(np.int32) for _ in range(3))
    cases = [
        ("i_poly32", (a, b, c, 2**40), "guard: scalar"),
        ("i_poly32", (a, b, c, 2.5), "guard: scalar"),
        ("i_poly32", (a, b, c, np.int64(3)), "guard: scalar"),
        ("i_poly64", (a, b, c, 3), "guard: dtype"),
    ]
    for name, args, reason in cases:
        problem, counts, _ = run_both(dt, name, args)
        assert problem is None, (name, reason, problem)
        assert counts["fast"] == 0, (name, counts)
        assert counts["fallback"] == {reason: 1}, (name, counts)
    problem, counts, _ = run_both(dt, "i_triad32", (a[:, ::2], b[:, ::-2], c[:, 1::2], 0))
    assert problem is None, problem
    assert counts == {"fast": 1, "fallback": {}}, counts


# -- bool masks -----------------------------------------------------------------------


@st.composite
def _f64_operands(draw: st.DrawFn) -> tuple[Any, ...]:
    shape = draw(
        st.one_of(st.tuples(st.integers(1, 70)), st.tuples(st.integers(1, 5), st.integers(1, 9)))
    )
    size = int(np.prod(shape))
    value = st.one_of(st.sampled_from([float(x) for x in SPECIALS]), st.floats(-2.0, 2.0))
    arrays = tuple(
        np.array(draw(st.lists(value, min_size=size, max_size=size))).reshape(shape)
        for _ in range(3)
    )
    return (*arrays, draw(value))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=st.sampled_from(sorted(MASKS)), args=_f64_operands())
def test_hypothesis_bool_masks(dt: Pair, name: str, args: tuple[Any, ...]) -> None:
    """Masks from comparisons combined with `& | ^ ~` and np.logical_*: one kernel,
    NumPy's bool array (or the where it selects), bit for bit, on the fast path."""
    assert dt.compiled(name), dt.records(name)
    problem, counts, want = run_both(dt, name, args, all="ignore")
    assert problem is None, (name, problem)
    strided_nan = name == "m_where" and np.isnan(want.value).any()
    if not strided_nan:
        assert counts["fast"] == 1, (name, with_reasons(counts))


def test_bool_mask_refusals(dt: Pair) -> None:
    """A mask passed in (a bool array leaf) or an int operand of `&` stays NumPy."""
    rng = np.random.default_rng(8)
    a, b, c = (rng.standard_normal(30) for _ in range(3))
    problem, counts, _ = run_both(dt, "m_speculative", (a > 0, b, c, 0.5), speculative=True)
    assert problem is None
    assert counts["fast"] == 0, counts
    assert counts["fallback"] == {"guard: dtype": 1}, counts
    problem, _counts, _ = run_both(dt, "m_speculative", (a > 0, b, c, 0.5))  # a signature's own
    assert problem is None


def test_int_threads_keep_values(dt: Pair) -> None:
    """1e6+3 int64 elements split over 1, 2 and 3 threads: NumPy's wrapped values."""
    from ppy_numpy._runtime import num_threads, set_num_threads

    rng = np.random.default_rng(12)
    args = (*(rng.integers(-(2**62), 2**62, 1_000_003) for _ in range(3)), -5)
    before = num_threads()
    try:
        for threads in (1, 2, 3):
            set_num_threads(threads)
            for name in ("i_poly64", "i_compare64"):
                problem, counts, _ = run_both(dt, name, args)
                assert problem is None, (name, threads, problem)
                assert counts["fast"] == 1, (name, threads, with_reasons(counts))
    finally:
        set_num_threads(before)
