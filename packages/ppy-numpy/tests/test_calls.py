"""Calls the plugin used to leave out of kernels (issue 18, item 6), now fused.

`np.fmax`/`np.fmin`/`np.arctan2`/`np.hypot` (`tensor.binary`), `np.clip` (NumPy 2's
clip ufunc, `tensor.clip`; a literal None bound is np.minimum/np.maximum, as NumPy's
`_clip` does), `np.sign` and float powers (`x ** -1.5`) are computed by calling
NumPy's own inner loop from the kernel, fused only where the backend's proof passed
on this NumPy build and CPU; `np.maximum`/`np.minimum`/`np.abs` are lowered inline
(NaN from the first operand, else x86's max/min). The joins (`np.hstack`,
`np.concatenate`, ...) stay NumPy and their result is a typed leaf; in a
boolean-mask store `a[m] = expr` the store stays NumPy and `expr` fuses.

Each test compares with the same source run as plain Python: values bit for bit,
dtype, shape, layout, exceptions and FP warnings; and asserts the fast path ran.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import (
    SPECIALS,
    Pair,
    call,
    compile_pair,
    counting,
    outcome_difference,
    random_array,
    special_array,
    with_reasons,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

ND = "np.ndarray"

#: name -> (expression over a, b, c (arrays) and s (a float), the loops it calls)
CALLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "maximum_nan": ("np.maximum(a, b) * c - np.minimum(b, s)", ()),
    "max_const": ("np.maximum(a * b, 0.0) + np.minimum(-0.0, c)", ()),
    "fmax": ("np.fmax(a, b) * 2.0 + c", ("fmax",)),
    "fmin": ("np.fmin(a * c, b) - c", ("fmin",)),
    "fmax_scalar": ("np.fmax(a, s) + np.fmin(0.0, b)", ("fmax", "fmin")),
    "clip": ("np.clip(a * b, -1.0, 1.0) + c", ("clip",)),
    "clip_arrays": ("np.clip(a, b, c) * 2.0", ("clip",)),
    "clip_scalar": ("np.clip(a - b, s, 2.5)", ("clip",)),
    "clip_low_none": ("np.clip(a * b, None, c) + 1.0", ()),
    "clip_high_none": ("np.clip(a, b, None) - c", ()),
    "clip_method": ("(a + b).clip(-0.5, c)", ("clip",)),
    "absolute": ("np.abs(a - b) * c + abs(c)", ()),
    "sign": ("np.sign(a - b) * c", ("sign",)),
    "arctan2": ("np.arctan2(a, b) + c", ("arctan2",)),
    "arctan2_const": ("np.arctan2(a * b, 1.0) - np.arctan2(2.0, c)", ("arctan2",)),
    "hypot": ("np.hypot(a, b) * c", ("hypot",)),
    "pow_m15": ("(a * a + b) ** -1.5 * c", ("power",)),
    "pow_25": ("a ** 2.5 + b", ("power",)),
    "pow_arrays": ("np.power(a, b) - c", ("power",)),
    "gravity": ("-(a * c) * (a * a + b * b + 0.01) ** -1.5", ("power",)),
}


def _source() -> str:
    lines = ["import numpy as np", ""]
    for name, (expr, _loops) in CALLS.items():
        lines += ["", f"def {name}(a: {ND}, b: {ND}, c: {ND}, s: float):", f"    return {expr}", ""]
    lines += [
        "",
        f"def joined(a: {ND}, b: {ND}):",
        "    return np.hstack((a, b)) * 2.0 + 1.0",
        "",
        "",
        f"def concatenated(a: {ND}, b: {ND}):",
        "    x = np.concatenate((a, b))",
        "    return x * x - 0.5",
        "",
        "",
        "def masked(a, b):",
        "    out = a.copy()",
        "    out[out > 0] = 0.5 * out[out > 0] + 1.0",
        "    out[b < 0] = np.sqrt(-b[b < 0]) * 2.0 - 1.0",
        "    return out",
        "",
    ]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def calls(project) -> Pair:
    return compile_pair(project, "item6_calls", _source())


def _fuses(proven: dict[str, str], name: str) -> bool:
    return all(proven.get(loop) == "ok" for loop in CALLS[name][1])


def _check(pair: Pair, name: str, args: tuple[Any, ...], fast: bool, **errstate: str) -> str | None:
    """None when the fast build gives NumPy's outcome (and ran the fast path if `fast`)."""
    copies = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in args)
    with counting(pair, name) as counts:
        got = call(getattr(pair.fast, name), args, **errstate)
    want = call(getattr(pair.plain, name), copies, **errstate)
    problem = outcome_difference(got, want)
    if problem is None and fast and counts["fast"] != 1:
        problem = f"fast path did not run: {with_reasons(counts)}"
    return problem


@pytest.mark.parametrize("name", sorted(CALLS))
def test_call_fuses_iff_proven(calls: Pair, proven: dict[str, str], name: str) -> None:
    """Each call compiles into the site's kernel exactly when every NumPy loop it calls
    is proven here (else the reason is the proof's, E2104); then random and special
    inputs of every test shape are NumPy's bits, on the fast path."""
    ok = _fuses(proven, name)
    assert calls.compiled(name) == ok, (CALLS[name], calls.records(name))
    if not ok:
        reasons = " ".join(" ".join(r["reasons"]) for r in calls.records(name))
        assert "E2104" in reasons, reasons
    rng = np.random.default_rng(sum(map(ord, name)))
    shapes = [(n,) for n in (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 127, 256, 257, 1031)]
    for shape in [*shapes, (3, 5), (16, 17), (1, 9)]:
        for make in (random_array, special_array):
            args = (
                make(rng, shape),
                make(rng, shape),
                make(rng, shape),
                float(SPECIALS[shape[0] % len(SPECIALS)]),
            )
            problem = _check(calls, name, args, fast=ok, all="ignore")
            assert problem is None, f"{name} {shape} {make.__name__}: {problem}"


_FLOATS = st.one_of(
    st.sampled_from([float(x) for x in SPECIALS]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-4.0, 4.0),
)


@st.composite
def _operands(draw: st.DrawFn) -> tuple[Any, ...]:
    shape = draw(
        st.one_of(
            st.tuples(st.integers(1, 70)),
            st.tuples(st.integers(1, 6), st.integers(1, 12)),
        )
    )
    size = int(np.prod(shape))
    arrays = tuple(
        np.array(draw(st.lists(_FLOATS, min_size=size, max_size=size)), dtype=np.float64).reshape(
            shape
        )
        for _ in range(3)
    )
    return (*arrays, draw(_FLOATS))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=st.sampled_from(sorted(CALLS)), args=_operands())
def test_hypothesis_calls_bitwise(
    calls: Pair, proven: dict[str, str], name: str, args: tuple[Any, ...]
) -> None:
    """Random shapes and values (NaN payloads, ±0, ±inf, subnormals, huge): NumPy's
    value, dtype, shape, layout and warnings, under `ignore` and under NumPy's default
    error state (a reported FP flag hands the call back to NumPy, which warns)."""
    fast = _fuses(proven, name)
    problem = _check(calls, name, args, fast=fast, all="ignore")
    assert problem is None, f"{name} shape {args[0].shape}: {problem}"
    problem = _check(calls, name, args, fast=False)
    assert problem is None, f"{name} shape {args[0].shape}, default errstate: {problem}"


def test_strided_operands_keep_numpys_bits(calls: Pair, proven: dict[str, str]) -> None:
    """Steps, reversals and broadcast rows: NumPy's outcome; contiguous rows without a
    NaN result take the fast path (the documented refusals are counted by reason)."""
    rng = np.random.default_rng(31)
    base = rng.uniform(-3.0, 3.0, (9, 40))
    views = (
        (base[:, ::2], base[:, 1::2], base[:, 2:22]),  # steps: rows gathered
        (base[::-1, :20], base[:, 5:25], base[0, 10:30]),  # reversed rows, a broadcast row
    )
    for name in CALLS:
        fast_runs = 0
        for a, b, c in views:
            with counting(calls, name) as counts:
                got = call(getattr(calls.fast, name), (a, b, c, 0.75), all="ignore")
            want = call(getattr(calls.plain, name), (a, b, c, 0.75), all="ignore")
            assert outcome_difference(got, want) is None, name
            fast_runs += counts["fast"]
            allowed = {"guard: layout", "result: nan/zero"}
            assert set(counts["fallback"]) <= allowed, (name, counts)
        if _fuses(proven, name) and not CALLS[name][1]:
            assert fast_runs == len(views), name  # inline ops: any strides


def test_joins_are_typed_leaves(calls: Pair) -> None:
    """`np.hstack`/`np.concatenate` run as NumPy; their result is a (non-speculative)
    leaf of the site, and float64 results take the fast path; an int result does not
    pass the guard and runs NumPy."""
    for name in ("joined", "concatenated"):
        assert calls.compiled(name)
        assert not any(r.get("speculative") for r in calls.records(name)), calls.records(name)
    rng = np.random.default_rng(2)
    a, b = random_array(rng, (37,)), random_array(rng, (5,))
    for name in ("joined", "concatenated"):
        assert _check(calls, name, (a, b), fast=True, all="ignore") is None
        ints = (np.arange(4), np.arange(3))
        with counting(calls, name) as counts:
            got = call(getattr(calls.fast, name), ints)
        assert outcome_difference(got, call(getattr(calls.plain, name), ints)) is None
        assert counts["fast"] == 0, counts
        assert counts["fallback"] == {"guard: dtype": 1}, counts


def test_mask_assignment_right_side_fuses(calls: Pair) -> None:
    """`out[out > 0] = 0.5 * out[out > 0] + 1.0` is one masked-update store site (core
    `frontend/masked.py`); `out[b < 0] = ...`, whose mask does not read `out`, stays a
    NumPy store of one fused right side (a speculative one: the function is unannotated)."""
    sites = [r for r in calls.records("masked") if r["unit"] is not None]
    texts = {r["text"]: r.get("store") for r in sites}
    assert texts == {
        "out[out > 0] = 0.5 * out[out > 0] + 1.0": "=",
        "np.sqrt(-b[b < 0]) * 2.0 - 1.0": None,
    }, texts
    rng = np.random.default_rng(3)
    for n in (0, 1, 9, 300):
        a, b = random_array(rng, (n,)), random_array(rng, (n,))
        with counting(calls, "masked") as counts:
            got = call(calls.fast.masked, (a, b), all="ignore")
        assert outcome_difference(got, call(calls.plain.masked, (a, b), all="ignore")) is None
        if n and (a > 0).any() and (b < 0).any():
            assert counts["fast"] >= 2, with_reasons(counts)
