"""float32, int64 and int32 maps over strided and broadcast operands (issue 18):
`0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + ...)` over an annotated float32 or int array is
one kernel in the array's dtype, its views typed from the annotation, walked row by
row by the dispatcher as float64 maps are (items of 4 or 8 bytes).

A float32 NaN result is NumPy's (its bits follow NumPy's operand order, as on the
flat path); an integer result never needs a scan (wrapping arithmetic, NumPy's floor
division and modulo, whose division by zero gives 0 and NumPy's warning). A layout
NumPy would give in F order is refused. Every call is compared with NumPy bit for bit,
warnings and exceptions included, and the counters show the fast path ran.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import SPECIALS, Pair, call, compile_pair, counting, outcome_difference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

DTYPES = {"f32": np.float32, "i64": np.int64, "i32": np.int32}


def _source() -> str:
    lines = ["import numpy as np", "import numpy.typing as npt", ""]
    for tag, dtype in DTYPES.items():
        ann = f"npt.NDArray[np.{np.dtype(dtype).name}]"
        scale = "0.2" if tag == "f32" else "3"
        lines += [
            "",
            f"def stencil_{tag}(A: {ann}):",
            f"    return {scale} * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1]"
            " + A[:-2, 1:-1])",
            "",
            "",
            f"def rows_{tag}(a: {ann}, b: {ann}):",
            "    return a * b[:, None] - (a + b[:, None]) * 2",
            "",
            "",
            f"def pair_{tag}(a: {ann}, b: {ann}):",
            "    return (a - b) * (a + b) - a",
        ]
        if tag != "f32":
            lines += [
                "",
                "",
                f"def divmod_{tag}(a: {ann}, b: {ann}):",
                "    return (a * 3) // b + (a - 1) % b",
            ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "strided_dtypes", _source())


def _values(rng: np.random.Generator, tag: str, shape: tuple[int, ...], special: float) -> Any:
    """Arrays of `tag`'s dtype: float32 with specials (NaN, inf, -0.0, subnormals);
    integers over the whole range (products wrap) with zeros mixed in."""
    if tag == "f32":
        x = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)).astype(np.float32)
        mask = rng.random(shape) < special
        with np.errstate(all="ignore"):  # beyond float32: inf; a signalling NaN: quiet
            picks = SPECIALS[rng.integers(0, len(SPECIALS), int(mask.sum()))].astype(np.float32)
        x[mask] = picks
        x[rng.random(shape) < special / 2] = np.float32(1e-45)  # a float32 subnormal
        return x
    info = np.iinfo(DTYPES[tag])
    x = rng.integers(info.min, info.max, shape, dtype=DTYPES[tag], endpoint=True)
    small = rng.random(shape) < 0.5
    x[small] = rng.integers(-5, 6, int(small.sum()))
    return x


def _run(pair: Pair, function: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """Both builds on `args`, the same answer; the counters' increase."""
    with counting(pair, function) as c:
        got = call(getattr(pair.fast, function), args)
    want = call(getattr(pair.plain, function), args)
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    return c


def _fast(pair: Pair, function: str, args: tuple[Any, ...]) -> None:
    """Every site the call reached ran fast (`divmod_*` is two)."""
    c = _run(pair, function, args)
    assert c["fast"] >= 1, c
    assert c["fallback"] == {}, c


@pytest.mark.parametrize("tag", list(DTYPES))
@pytest.mark.parametrize("shape", [(3, 3), (5, 9), (17, 33), (40, 1030)])
def test_stencils_run_fast(pair: Pair, tag: str, shape: tuple[int, int]) -> None:
    """Shifted views of one array: rows walked in place, NumPy's bits (no NaN here)."""
    rng = np.random.default_rng(shape[1])
    _fast(pair, f"stencil_{tag}", (_values(rng, tag, shape, 0.0),))


@pytest.mark.parametrize("tag", list(DTYPES))
def test_broadcasts_steps_and_reversals_run_fast(pair: Pair, tag: str) -> None:
    """A column broadcast along the rows, stepped and reversed rows (gathered), a
    transposed pair whose C-ordered result NumPy also gives."""
    rng = np.random.default_rng(7)
    a, b = _values(rng, tag, (12, 21), 0.0), _values(rng, tag, (12,), 0.0)
    _fast(pair, f"rows_{tag}", (a, b))
    _fast(pair, f"rows_{tag}", (a[:, ::-2], b[::-1]))
    _fast(pair, f"pair_{tag}", (a[::2, 1:], a[1::2, :-1]))
    _fast(pair, f"pair_{tag}", (a[:, ::3], a[:, 2::3]))


@pytest.mark.parametrize("tag", ["f32", "i64", "i32"])
def test_fortran_results_are_numpys(pair: Pair, tag: str) -> None:
    """Transposed operands, whose result NumPy lays out in F order: refused (layout)."""
    a = _values(np.random.default_rng(3), tag, (6, 10), 0.0)
    c = _run(pair, f"pair_{tag}", (a.T, a.T[::-1]))
    assert (c["fast"], c["fallback"]) == (0, {"guard: layout": 1}), c


def test_float32_nan_results_are_numpys(pair: Pair) -> None:
    """A float32 NaN in a strided result goes to NumPy (its payload follows NumPy's
    operand order); infinities and signed zeros stay on the fast path."""
    a = _values(np.random.default_rng(1), "f32", (9, 16), 0.0)
    a[4, 5] = np.float32(np.nan)
    c = _run(pair, "stencil_f32", (a,))
    assert (c["fast"], c["fallback"]) == (0, {"result: nan/zero": 1}), c
    a[4, 5], a[2, 3], a[6, 7] = np.float32(-0.0), np.float32(np.inf), np.float32(1e-45)
    _fast(pair, "stencil_f32", (a,))


@pytest.mark.parametrize("tag", ["i64", "i32"])
def test_integer_division_by_zero_warns_as_numpy(pair: Pair, tag: str) -> None:
    """NumPy's `//` and `%` by zero give 0 and one RuntimeWarning; through a stepped
    view the kernel gives the same, and the same warning."""
    rng = np.random.default_rng(2)
    a, b = _values(rng, tag, (8, 24), 0.0), _values(rng, tag, (8, 48), 0.0)
    b[3, 6] = 0
    _run(pair, f"divmod_{tag}", (a, b[:, ::2]))
    b[b == 0] = 1
    _fast(pair, f"divmod_{tag}", (a, b[:, 1::2]))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    tag=st.sampled_from(list(DTYPES)),
    rows=st.integers(3, 9),
    cols=st.integers(3, 40),
    step=st.sampled_from([1, 1, 2, -1, -3]),
    seed=st.integers(0, 2**32 - 1),
    special=st.sampled_from([0.0, 0.0, 0.05, 0.3]),
)
def test_strided_dtypes_equal_numpy(
    pair: Pair, tag: str, rows: int, cols: int, step: int, seed: int, special: float
) -> None:
    """Random shapes, steps and values: NumPy's answer on every call; the fast path
    wherever no float32 NaN came out (the only refusals these calls may meet: the NaN,
    or the invalid flag NumPy reports where one is made)."""
    rng = np.random.default_rng(seed)
    a = _values(rng, tag, (rows, cols * abs(step)), special)[:, ::step]
    b = _values(rng, tag, (rows,), special)
    for function, args in ((f"stencil_{tag}", (a,)), (f"rows_{tag}", (a, b))):
        c = _run(pair, function, args)
        assert c["fast"] + sum(c["fallback"].values()) == 1, c
        if tag != "f32" or special == 0.0:  # no float32 NaN
            assert c["fast"] == 1, c
        else:  # a NaN result, or the flag NumPy reports making it (inf - inf): NumPy's
            assert set(c["fallback"]) <= {"result: nan/zero", "fp-flags"}, c
