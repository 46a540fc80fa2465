"""Every fused operation on its own and in the issue's expressions, through the real
pipeline (one module, one `ppy.load`): bit for bit with NumPy on random and special
inputs at lengths 0-9, 127-129, 255-257 and 2-D, with the fast path taken; and what
must not fuse does not (and still answers as NumPy)."""

from __future__ import annotations

import numpy as np
import pytest
from _npharness import (
    Pair,
    call,
    compile_pair,
    counting,
    difference,
    expect_refusal,
    outcome_difference,
    random_array,
    shapes,
    special_array,
    with_reasons,
)

from ppy_llvm._spec import LOOP_UNARY

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

ND, NPT = "np.ndarray", "npt.NDArray[np.float64]"
ANN = 'Annotated[np.ndarray, ppy.Shape("n"), ppy.DType("float64")]'
F32 = 'Annotated[np.ndarray, ppy.DType("float32")]'

#: name -> (annotation of a, b, c; expression; reduction kind or None)
FUSED: dict[str, tuple[str, str, str | None]] = {
    # the benchmark expressions
    "triad": (ND, "a * b + c", None),
    "poly": (NPT, "2.0 * a + 3.0 * b * c - a / b", None),
    "trig": (ND, "np.sin(a) * 2.0 + np.exp(b)", None),
    "select": (NPT, "np.where(a > b, a * c, b - c)", None),
    "dot": (ND, "np.sum(a * b)", "sum"),
    # operators and their function spellings
    "add": (ND, "a + b", None),
    "sub": (ND, "a - b", None),
    "mul": (ND, "a * b", None),
    "div": (ND, "a / b", None),
    "neg": (ND, "-a", None),
    "negneg": (ND, "-(-a)", None),
    "np_add": (NPT, "np.add(a, b)", None),
    "np_subtract": (NPT, "np.subtract(a, b)", None),
    "np_multiply": (NPT, "np.multiply(a, b)", None),
    "np_divide": (NPT, "np.divide(a, b)", None),
    "np_true_divide": (NPT, "np.true_divide(a, b)", None),
    "np_negative": (ND, "np.negative(a)", None),
    "np_abs": (ND, "np.abs(a)", None),
    "np_absolute": (ND, "np.absolute(a)", None),
    "np_fabs": (ND, "np.fabs(a)", None),
    "maximum": (ND, "np.maximum(a, b)", None),
    "minimum": (ND, "np.minimum(a, b)", None),
    "max_scalar": (ND, "np.maximum(a, s)", None),
    "min_const": (ND, "np.minimum(0.0, a)", None),
    "power": (ND, "np.power(a, b)", None),
    "rpow": (ND, "2 ** a", None),
    "spow": (ND, "s ** a", None),
    # powers NumPy shortcuts (square, sqrt, reciprocal) and real powers
    "pow2": (ND, "a ** 2", None),
    "pow2f": (ND, "a ** 2.0", None),
    "pow05": (ND, "a ** 0.5", None),
    "powm1": (ND, "a ** -1", None),
    "pow3": (ND, "a ** 3", None),
    "powm2": (ND, "a ** -2", None),
    "pow15": (ND, "a ** 1.5", None),
    # scalars: Python float parameter, literals, negative literals, -0.0
    "scal": (ND, "a * s + 1", None),
    "rsub": (ND, "s - a", None),
    "lit": (ND, "2.5 * a / 3", None),
    "neglit": (ND, "a * -2.5 + -3", None),
    "negzero": (ND, "a + -0.0", None),
    "zero": (ND, "a + 0.0", None),
    "scalar_call": (ND, "np.sin(s) * a + np.exp(s)", None),
    # comparisons: inside np.where and as the result (a bool array)
    **{
        f"where_{n}": (NPT, f"np.where(a {op} b, a, c)", None)
        for n, op in (
            ("lt", "<"),
            ("le", "<="),
            ("gt", ">"),
            ("ge", ">="),
            ("eq", "=="),
            ("ne", "!="),
        )
    },
    **{
        f"where_{f}": (ND, f"np.where(np.{f}(a, b), b, s)", None)
        for f in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
    },
    "where_const": (ND, "np.where(a > 0, 1.0, 0.0)", None),
    "where_mixed": (ND, "np.where(a < s, a, 0)", None),
    "cmp_lt": (ND, "a < b", None),
    "cmp_ne": (ND, "a != b * 2", None),
    "cmp_fn": (ND, "np.greater_equal(a, s)", None),
    # reductions at the root, function and method spellings
    "sum": (ND, "np.sum(a)", "sum"),
    "prod": (ND, "np.prod(a)", "prod"),
    "mean": (ND, "np.mean(a)", "mean"),
    "max": (ND, "np.max(a)", "max"),
    "min": (ND, "np.min(a)", "min"),
    "amax": (ND, "np.amax(a - b)", "max"),
    "amin": (ND, "np.amin(a * b)", "min"),
    "m_sum": (NPT, "a.sum()", "sum"),
    "m_prod": (NPT, "(a * 0.5).prod()", "prod"),
    "m_mean": (NPT, "(a + b).mean()", "mean"),
    "m_max": (NPT, "(a * b - c).max()", "max"),
    "m_min": (NPT, "np.abs(a).min()", "min"),
    "sum_sqrt": (ND, "np.sum(np.sqrt(a))", "sum"),
    "mean_exp": (ND, "np.mean(np.exp(a) * 0.5)", "mean"),  # bare: the cost rule (E2109)
    "max_where": (ND, "np.max(np.where(a > b, a, -b))", "max"),
    # unannotated operands of np.* calls (the guard decides at run time)
    "untyped": ("", "np.add(np.multiply(a, b), c)", None),
    # exact unary functions
    **{
        f"u_{f}": (ND, f"np.{f}(a)", None)
        for f in ("sqrt", "floor", "ceil", "trunc", "square", "reciprocal")
    },
}
# NumPy's loop functions (transcendentals): fused only where the backend proved them
LOOPS: dict[str, tuple[str, str, str | None]] = {
    **{f"u_{f}": (ND, f"np.{f}(a)", None) for f in LOOP_UNARY},
    **{f"in_{f}": (ND, f"np.{f}(a * 0.5 + b) - c", None) for f in LOOP_UNARY},
}
#: stays NumPy by design (NumPy decides by run-time values, or other dtypes)
PYTHON: dict[str, tuple[str, str, str | None]] = {
    "pow0": (ND, "a ** 0", None),  # NumPy: ones_like
    "pow1": (ND, "a ** 1", None),  # NumPy: positive (a copy)
    "pow_var": (ND, "a ** s", None),  # NumPy picks square/sqrt/... by the value of s
    "where_int": (ND, "np.where(a > b, 3, 2)", None),  # an int64 array
    "where_mask": (ND, "np.where(c, a, b)", None),  # a mask computed elsewhere
    "bool_arith": (ND, "(a > b) * a", None),  # bool arrays are no float operands
    "bool_sum": (ND, "np.sum(a > b)", None),  # an int count
    "float32": (F32, "np.sin(a) * 2.0", None),  # NumPy's float32 loop (test_dtypes.py)
    "axis": (ND, "np.sum(a * b, axis=0)", None),  # keywords stay NumPy
    "out": (ND, "np.add(a, b, out=c)", None),
}


def _source(table: dict[str, tuple[str, str, str | None]]) -> str:
    lines = [
        "import numpy as np",
        "import numpy.typing as npt",
        "from typing import Annotated",
        "import ppy",
        "",
    ]
    for name, (ann, expr, _kind) in table.items():
        t = f": {ann}" if ann else ""
        lines += ["", f"def {name}(a{t}, b{t}, c{t}, s: float):", f"    return {expr}", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def ops(project) -> Pair:
    return compile_pair(project, "ops_family", _source({**FUSED, **LOOPS, **PYTHON}))


def _sweep(pair: Pair, name: str, kind: str | None, fast: bool) -> list[str]:
    """Every shape, random and special data: same outcome as NumPy; the fast path ran
    (if `fast`) unless the guard must refuse."""
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    failures = []
    for shape in shapes():
        for make in (random_array, special_array):
            args = (make(rng, shape), make(rng, shape), make(rng, shape), float(make(rng, (1,))[0]))
            with counting(pair, name) as counts:
                got = call(getattr(pair.fast, name), args, all="ignore")
            want = call(getattr(pair.plain, name), args, all="ignore")
            problem = outcome_difference(got, want)
            must = fast and not expect_refusal(want.value, kind, args[0].size)
            if not problem and must and counts["fast"] != 1:
                problem = f"fast path did not run: {with_reasons(counts)}"
            if problem:
                failures.append(f"{name} shape={shape} {make.__name__}: {problem}")
    return failures


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_op_bitwise(ops: Pair, name: str) -> None:
    assert ops.compiled(name), ops.records(name)
    failures = _sweep(ops, name, FUSED[name][2], fast=True)
    assert not failures, "\n".join(failures[:10])


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_loop_functions_fuse_iff_proven(ops: Pair, proven: dict[str, str], name: str) -> None:
    """A transcendental fuses only where the backend's proof passed on this NumPy build
    and CPU; otherwise the site stays NumPy, with the proof's reason."""
    function = name.split("_", 1)[1]
    ok = proven.get(function) == "ok"
    assert ops.compiled(name) == ok, (proven.get(function), ops.records(name))
    if not ok:
        reasons = " ".join(" ".join(r["reasons"]) for r in ops.records(name))
        assert "E2104" in reasons, reasons
    failures = _sweep(ops, name, None, fast=ok)
    assert not failures, "\n".join(failures[:10])


@pytest.mark.parametrize("name", sorted(PYTHON))
def test_what_must_not_fuse_stays_numpy(ops: Pair, name: str) -> None:
    rng = np.random.default_rng(5)
    a, b = random_array(rng, (40,)), random_array(rng, (40,))
    c = (a < b) if name == "where_mask" else random_array(rng, (40,))
    args = (a, b, c, 0.5)
    if name == "float32":
        args = (rng.standard_normal(40).astype(np.float32), b, c, 0.5)
    # the whole expression is no kernel (a compare inside may be one)
    root = [r for r in ops.records(name) if r["text"] == PYTHON[name][1]]
    assert all(r["unit"] is None for r in root), root
    got = call(
        getattr(ops.fast, name),
        tuple(x.copy() if hasattr(x, "copy") else x for x in args),
        all="ignore",
    )
    want = call(getattr(ops.plain, name), args, all="ignore")
    assert outcome_difference(got, want) is None


def test_annotated_refinement_fuses(ops: Pair, project) -> None:
    """`Annotated[np.ndarray, ppy.Shape("n"), ppy.DType("float64")]` is a float64 array."""
    pair = compile_pair(project, "ops_annotated", _source({"ann": (ANN, "a * b + c", None)}))
    assert pair.records("ann"), "the annotated site did not compile"
    assert not _sweep(pair, "ann", None, fast=True)


def test_large_and_threaded_bitwise(ops: Pair) -> None:
    """1e6+3 elements (threads split the loop; reductions split NumPy's pairwise tree at
    its top levels): identical bits with 1, 2 and 3 threads."""
    from ppy_numpy._runtime import num_threads, set_num_threads

    rng = np.random.default_rng(9)
    args = (*(random_array(rng, (1_000_003,), special=0.001) for _ in range(3)), 0.25)
    before = num_threads()
    try:
        for threads in (1, 2, 3):
            set_num_threads(threads)
            for name in ("triad", "poly", "trig", "select", "dot", "mean", "m_max", "sum_sqrt"):
                with counting(ops, name) as counts:
                    got = call(getattr(ops.fast, name), args, all="ignore")
                want = call(getattr(ops.plain, name), args, all="ignore")
                assert outcome_difference(got, want) is None, (name, threads)
                if not expect_refusal(want.value, FUSED[name][2], args[0].size, threads > 1):
                    assert counts["fast"] == 1, (name, threads, with_reasons(counts))
    finally:
        set_num_threads(before)


def test_scalar_leaves_of_every_kind(ops: Pair) -> None:
    """A float64 scalar operand may be a Python float, a Python int (|v| <= 2**53), a
    numpy.float64 or a 0-d float64 array: each is NumPy's answer, on the fast path."""
    rng = np.random.default_rng(4)
    a, b, c = (random_array(rng, (130,)) for _ in range(3))
    for s in (1.5, -0.0, float("nan"), 3, -(2**53), np.float64(2.25), np.array(0.5)):
        with counting(ops, "scal") as counts:
            got = call(ops.fast.scal, (a, b, c, s), all="ignore")
        want = call(ops.plain.scal, (a, b, c, s), all="ignore")
        assert outcome_difference(got, want) is None, s
        assert counts["fast"] == 1, (s, with_reasons(counts))


def test_reduction_results_are_numpy_float64(ops: Pair) -> None:
    rng = np.random.default_rng(8)
    a, b, c = (rng.standard_normal((37, 29)) for _ in range(3))
    for name in ("sum", "prod", "mean", "max", "min", "dot", "m_sum", "m_mean"):
        out = getattr(ops.fast, name)(a, b, c, 1.0)
        assert type(out) is np.float64, name
        assert difference(out, getattr(ops.plain, name)(a, b, c, 1.0)) is None, name


def test_elementwise_results_keep_shape_and_order(ops: Pair) -> None:
    rng = np.random.default_rng(12)
    for shape in ((7, 9), (2, 3, 4), (1, 130)):
        a, b, c = (rng.standard_normal(shape) for _ in range(3))
        out = ops.fast.poly(a, b, c, 1.0)
        assert out.shape == shape
        assert out.flags.c_contiguous
        assert out.dtype == np.float64
        assert difference(out, ops.plain.poly(a, b, c, 1.0)) is None
        cmp = ops.fast.cmp_lt(a, b, c, 1.0)
        assert cmp.dtype == np.bool_
        assert cmp.shape == shape


def test_streaming_stores_keep_every_bit(ops: Pair) -> None:
    """Large outputs are written with streaming stores (an aligned middle between two
    overlapping vector stores, then NumPy's scalar tail): NaN signs and payloads of
    both operands, at lengths around the streaming thresholds (by the kernel's arrays:
    2 to 4 with the output) and thread split."""
    from ppy_llvm._kernel_map import nt_min
    from ppy_numpy._runtime import num_threads, set_num_threads

    rng = np.random.default_rng(10)
    nans = np.array([np.nan, -np.nan, 1.0, -0.0, np.inf])
    before = num_threads()
    t2, t3, t4 = nt_min(2), nt_min(3), nt_min(4)
    try:
        for threads, n in (
            (1, t4),
            (1, t4 + 7),
            (1, t3 + 9),
            (1, t2 + 9),
            (2, 2 * t2 + 3),
            (2, 3 * t4 + 13),
        ):
            set_num_threads(threads)
            a, b, c = (nans[rng.integers(0, len(nans), n)] for _ in range(3))
            for name in ("add", "mul", "triad", "poly", "neg", "select", "np_abs"):
                with counting(ops, name) as counts:
                    got = call(getattr(ops.fast, name), (a, b, c, np.nan), all="ignore")
                want = call(getattr(ops.plain, name), (a, b, c, np.nan), all="ignore")
                assert outcome_difference(got, want) is None, (name, threads, n)
                assert counts["fast"] == 1
    finally:
        set_num_threads(before)


def test_nan_sums_are_numpys_bits(ops: Pair, proven: dict[str, str]) -> None:
    """A NaN sum/mean/prod keeps the fast path where the backend proved its serial
    order gives NumPy's NaN (signs and payloads of several NaNs); a max/min NaN, and a
    NaN of a run split over threads, is recomputed by NumPy."""
    from ppy_llvm._proof import nan_verdicts
    from ppy_numpy._runtime import num_threads, set_num_threads

    verdict = nan_verdicts("numpy")
    rng = np.random.default_rng(21)
    payloads = np.array(
        [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF800000000ABCD, 0xFFF80000DEAD0000],
        dtype=np.uint64,
    ).view(np.float64)
    cases = {
        "sum": "sum",
        "mean": "sum",
        "dot": "sum",
        "prod": "prod",
        "m_prod": "prod",
        "max": None,
        "m_min": None,
    }
    before = num_threads()
    try:
        set_num_threads(1)
        for n in (1, 7, 8, 9, 16, 100, 129, 257, 1000, 4099, 100_003):
            a, b = rng.standard_normal(n), rng.standard_normal(n)
            a[rng.integers(0, n, 4)] = payloads[rng.integers(0, 4, 4)]
            for name, proof in cases.items():
                with counting(ops, name) as counts:
                    got = call(getattr(ops.fast, name), (a, b, b, 1.0), all="ignore")
                want = call(getattr(ops.plain, name), (a, b, b, 1.0), all="ignore")
                assert outcome_difference(got, want) is None, (name, n)
                stands = proof is not None and verdict.get(proof) == "ok"
                assert counts["fast"] == int(stands), (name, n, with_reasons(counts))
        set_num_threads(2)
        a = rng.standard_normal(1_000_003)
        a[::1000] = np.nan
        with counting(ops, "sum") as counts:
            got = call(ops.fast.sum, (a, a, a, 1.0))
        assert outcome_difference(got, call(ops.plain.sum, (a, a, a, 1.0))) is None
        assert counts["fallback"] == {"result: nan/zero": 1}
    finally:
        set_num_threads(before)


FASTMATH = """\
import numpy as np
import ppy


@ppy.fastmath
def fused_fast(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    return np.sum(a * b + c * 0.5)


def fused_exact(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    return np.sum(a * b + c * 0.5)
"""


def test_fastmath_relaxes_only_where_asked(project) -> None:
    """`@ppy.fastmath` lets LLVM contract and reassociate (finite inputs: close to
    NumPy, not bit-equal in general); the same expression without it is exact."""
    pair = compile_pair(project, "ops_fastmath", FASTMATH)
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(10_007) for _ in range(3))
    for name in ("fused_fast", "fused_exact"):
        with counting(pair, name) as counts:
            got = getattr(pair.fast, name)(a, b, c)
        assert counts["fast"] == 1, with_reasons(counts)
        want = getattr(pair.plain, name)(a, b, c)
        assert np.isclose(got, want, rtol=1e-12, atol=1e-9)
        if name == "fused_exact":
            assert difference(got, want) is None
