"""Floating-point errors are NumPy's: under the default `np.errstate` the same
RuntimeWarnings (category and message), under `all='raise'` the same
FloatingPointError, under 'call'/'print'/'log' the same callback/output; flags NumPy
ignores cost nothing (the fast path stands)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, counting, outcome_difference, with_reasons

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def ratio(a: np.ndarray, b: np.ndarray):
    return a / b + 1.0


def logs(a: np.ndarray):
    return np.log(a) * 2.0


def roots(a: np.ndarray):
    return np.sqrt(a) - a


def grow(a: np.ndarray, b: np.ndarray):
    return a * b * 1e300


def shrink(a: np.ndarray):
    return a * 1e-300 * 1e-300


def total(a: np.ndarray, b: np.ndarray):
    return np.sum(a * b)


def chained(a: np.ndarray, b: np.ndarray):
    return np.sqrt(a) / b + np.log(b)
"""

ONES = np.ones(300)
ZEROS_AT = np.where(np.arange(300) % 7 == 0, 0.0, 1.0)

#: (function, args, the flags raised)
CASES: list[tuple[str, tuple[Any, ...]]] = [
    ("ratio", (ONES, ZEROS_AT)),  # divide by zero
    ("ratio", (ZEROS_AT - 1.0 + 1.0 - ONES * (ZEROS_AT == 0), ZEROS_AT)),  # 0/0 and x/0
    ("logs", (ZEROS_AT,)),  # log(0): divide
    ("logs", (ZEROS_AT - 1.0,)),  # log(-1): invalid
    ("roots", (-ONES,)),  # invalid
    ("grow", (ONES * 1e10, ONES * 1e10)),  # overflow
    ("shrink", (ONES,)),  # underflow (NumPy ignores it by default)
    ("total", (ONES * 1e200, ONES * 1e200)),  # overflow in multiply and in the reduce
    ("chained", (ZEROS_AT - 0.5, ZEROS_AT)),  # invalid, divide, divide: three warnings
]
IDS = [f"{f}-{i}" for i, (f, _a) in enumerate(CASES)]


@pytest.fixture(scope="module")
def errs(project) -> Pair:
    return compile_pair(project, "errstate_cases", SOURCE)


@pytest.mark.parametrize(("function", "args"), CASES, ids=IDS)
@pytest.mark.parametrize("mode", ["default", "raise", "ignore", "warn", "divide-only"])
def test_errstate_is_numpys(errs: Pair, function: str, args: Any, mode: str) -> None:
    errstate = {
        "default": {},
        "raise": {"all": "raise"},
        "ignore": {"all": "ignore"},
        "warn": {"all": "warn"},
        "divide-only": {"all": "ignore", "divide": "raise"},
    }[mode]
    with counting(errs, function) as counts:
        got = call(getattr(errs.fast, function), args, **errstate)
    want = call(getattr(errs.plain, function), args, **errstate)
    assert outcome_difference(got, want, warning_order=True) is None, (got, want)
    noisy = bool(want.warnings) or want.error is not None
    if noisy:  # NumPy reported a flag: NumPy ran (the kernel's run is thrown away)
        assert counts["fast"] == 0, with_reasons(counts)
        assert counts["fallback"] == {"fp-flags": 1}, with_reasons(counts)
    else:  # nothing to report: the fast path's answer stands, flags or not
        assert counts["fast"] == 1, with_reasons(counts)


def test_default_warnings_text(errs: Pair) -> None:
    """Spelled out once: NumPy's category and message, nothing else."""
    got = call(errs.fast.ratio, (ONES, ZEROS_AT))
    assert got.warnings == ((RuntimeWarning, "divide by zero encountered in divide"),)
    got = call(errs.fast.roots, (-ONES,))
    assert got.warnings == ((RuntimeWarning, "invalid value encountered in sqrt"),)
    got = call(errs.fast.ratio, (ONES, ZEROS_AT), all="raise")
    assert got.error == (FloatingPointError, "divide by zero encountered in divide")


def test_errcall_modes(errs: Pair, capsys: pytest.CaptureFixture[str]) -> None:
    """'call' invokes the error callback as NumPy does; 'print' and 'log' likewise."""
    calls: list[tuple[str, int]] = []

    class Log:
        def write(self, message: str) -> None:
            calls.append((message, -1))

    for fn in (errs.fast.chained, errs.plain.chained):
        with np.errstate(all="call", call=lambda kind, flag: calls.append((kind, flag))):
            fn(ZEROS_AT - 0.5, ZEROS_AT)
        with np.errstate(all="log", call=Log()):
            fn(ZEROS_AT - 0.5, ZEROS_AT)
        with np.errstate(all="print"):
            fn(ZEROS_AT - 0.5, ZEROS_AT)
        calls.append(("printed", len(capsys.readouterr().out)))
    half = len(calls) // 2
    assert half > 3
    assert calls[:half] == calls[half:]


def test_threaded_flags_are_seen(errs: Pair) -> None:
    """A flag raised in a worker thread (large arrays are split) is reported too."""
    from ppy_numpy._runtime import num_threads, set_num_threads

    n = 2_000_000
    b = np.ones(n)
    b[-3] = 0.0  # in the last thread's chunk
    before = num_threads()
    try:
        set_num_threads(2)
        with counting(errs, "ratio") as counts:
            got = call(errs.fast.ratio, (np.ones(n), b))
    finally:
        set_num_threads(before)
    assert got.warnings == ((RuntimeWarning, "divide by zero encountered in divide"),)
    assert counts["fallback"] == {"fp-flags": 1}


def test_flags_before_the_call_do_not_leak(errs: Pair) -> None:
    """A flag left raised by earlier code is not blamed on the site."""
    with np.errstate(all="ignore"):
        _ = np.ones(3) / 0.0  # leaves FE_DIVBYZERO set in the FPU status
    with counting(errs, "ratio") as counts:
        got = call(errs.fast.ratio, (ONES, ONES + 1.0))
    assert got.warnings == ()
    assert counts["fast"] == 1
