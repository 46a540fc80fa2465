"""What the guard refuses runs NumPy: the same answer (value, dtype, shape, container
type, exception), and the refusal is counted under its reason in `ppy.stats()`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, counting, outcome_difference, with_reasons

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def triad(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    return a * b + c


def scaled(a: np.ndarray, s: float):
    return np.sqrt(a * s) - 1.0


def total(a: np.ndarray, b: np.ndarray):
    return np.sum(a * b)


def largest(a: np.ndarray):
    return a.max()


def untyped(x, y):
    return np.add(np.multiply(x, 2.0), y)
"""


class Sub(np.ndarray):
    """A custom ndarray subclass (NumPy keeps the subclass through ufuncs)."""


def _f64(n: int = 12, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n) + 3.0


#: (case, function, args builder, reason the guard gives). Maps over views and broadcast
#: shapes take the fast path (test_strided.py); a reduction runs NumPy's order only
#: over one C buffer, so those inputs are refused here through `total`.
CASES: list[tuple[str, str, Any, str]] = [
    ("float32", "triad", lambda: (_f64().astype(np.float32), _f64(), _f64()), "guard: dtype"),
    ("int64", "triad", lambda: (np.arange(12), _f64(), _f64()), "guard: dtype"),
    ("bool", "triad", lambda: (_f64() > 3, _f64(), _f64()), "guard: dtype"),
    ("complex", "triad", lambda: (_f64() + 1j, _f64(), _f64()), "guard: dtype"),
    ("big-endian", "triad", lambda: (_f64().astype(">f8"), _f64(), _f64()), "guard: dtype"),
    ("view-strided", "total", lambda: (_f64(24)[::2], _f64()), "guard: layout"),
    ("view-reversed", "total", lambda: (_f64()[::-1], _f64()), "guard: layout"),
    (
        "fortran",
        "total",
        lambda: tuple(np.asfortranarray(_f64(12, i).reshape(3, 4)) for i in range(2)),
        "guard: layout",
    ),
    (
        "transposed",
        "total",
        lambda: (_f64().reshape(3, 4).T, _f64().reshape(4, 3)),
        "guard: layout",
    ),
    (
        "misaligned",
        "triad",
        lambda: (np.frombuffer(b"\0" + _f64().tobytes(), np.float64, offset=1), _f64(), _f64()),
        "guard: layout",
    ),
    # a reduction over shapes that broadcast runs fast (test_broadcast_reductions.py),
    # shapes that do not broadcast are NumPy's ValueError
    ("broadcast-mismatch", "total", lambda: (_f64().reshape(3, 4), _f64(3)), "guard: shape"),
    ("mismatch", "triad", lambda: (_f64(5), _f64(6), _f64(5)), "guard: shape"),
    (
        "matrix",
        "triad",
        lambda: (np.matrix(_f64().reshape(3, 4)), _f64().reshape(3, 4), _f64().reshape(3, 4)),
        "guard: type",
    ),
    ("subclass", "triad", lambda: (_f64().view(Sub), _f64(), _f64()), "guard: type"),
    ("list", "triad", lambda: ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]), "guard: type"),
    ("list-and-array", "triad", lambda: ([1.0, 2.0], _f64(2), _f64(2)), "guard: type"),
    ("tuple", "triad", lambda: ((1.0, 2.0), _f64(2), _f64(2)), "guard: type"),
    ("python-floats", "triad", lambda: (1.5, 2.0, 3.0), "guard: type"),
    ("0-d", "triad", lambda: (np.array(2.0), np.array(3.0), np.array(4.0)), "guard: 0-d"),
    ("0-d-and-array", "triad", lambda: (np.array(2.0), _f64(), _f64()), "guard: 0-d"),
    ("empty", "triad", lambda: (np.empty(0), np.empty(0), np.empty(0)), "guard: empty"),
    ("empty-2d", "triad", lambda: (np.empty((0, 3)),) * 3, "guard: empty"),
    ("scalar-float32", "scaled", lambda: (_f64(), np.float32(1.5)), "guard: scalar"),
    ("scalar-huge-int", "scaled", lambda: (_f64(), 2**53 + 1), "guard: scalar"),
    ("scalar-int64-huge", "scaled", lambda: (_f64(), np.int64(2**53 + 1)), "guard: scalar"),
    ("scalar-complex", "scaled", lambda: (_f64(), 1 + 2j), "guard: scalar"),
    ("scalar-array", "scaled", lambda: (_f64(), _f64()), "guard: scalar"),
    ("scalar-bool", "scaled", lambda: (_f64(), True), "guard: scalar"),
    ("reduce-empty", "total", lambda: (np.empty(0), np.empty(0)), "guard: empty"),
    ("reduce-int", "total", lambda: (np.arange(5), np.arange(5)), "guard: dtype"),
    ("reduce-list", "total", lambda: ([1.0, 2.0], [3.0, 4.0]), "guard: type"),
    ("max-empty", "largest", lambda: (np.empty(0),), "guard: empty"),  # NumPy raises
    ("max-nan", "largest", lambda: (np.array([1.0, np.nan, -np.nan]),), "result: nan/zero"),
    ("max-zero", "largest", lambda: (np.array([-0.0, 0.0, -1.0]),), "result: nan/zero"),
    # int32 (int64 arrays meet float64 in a kernel of their own: test_mixed_dtypes.py)
    ("untyped-int", "untyped", lambda: (np.arange(4, dtype=np.int32),) * 2, "guard: dtype"),
    ("untyped-scalars", "untyped", lambda: (2, 3), "guard: type"),
]


@pytest.fixture(scope="module")
def guards(project) -> Pair:
    return compile_pair(project, "guard_cases", SOURCE)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize(("case", "function", "make", "reason"), CASES, ids=[c[0] for c in CASES])
def test_refused_input_falls_back_with_numpys_answer(
    guards: Pair, case: str, function: str, make: Any, reason: str
) -> None:
    assert guards.compiled(function)
    args = make()
    with counting(guards, function) as counts:
        got = call(getattr(guards.fast, function), args, all="ignore")
    want = call(getattr(guards.plain, function), make(), all="ignore")
    assert outcome_difference(got, want) is None, (got, want)
    assert counts["fast"] == 0, with_reasons(counts)
    assert counts["fallback"] == {reason: 1}, with_reasons(counts)
    if want.error is None and isinstance(want.value, np.ndarray):
        assert type(got.value) is type(want.value)


def test_the_same_inputs_pass_the_guard_when_plain(guards: Pair) -> None:
    """The counterpart of the cases above: exact float64 C-contiguous arrays of one
    shape (aliases, read-only arrays and views that are contiguous included) run fast."""
    base = _f64(24)
    readonly = _f64(12, 5)
    readonly.flags.writeable = False
    for args in (
        (_f64(), _f64(), _f64()),
        (base[:12], base[12:], base[:12]),
        (readonly, readonly, readonly),
        (base.reshape(4, 6),) * 3,
    ):
        with counting(guards, "triad") as counts:
            got = call(guards.fast.triad, args)
        want = call(guards.plain.triad, args)
        assert outcome_difference(got, want) is None
        assert counts["fast"] == 1, with_reasons(counts)


def test_a_mutated_argument_is_not_seen_stale(guards: Pair) -> None:
    """Nothing is cached between calls: the kernel reads the arrays of this call."""
    a, b, c = _f64(), _f64(12, 1), _f64(12, 2)
    first = guards.fast.triad(a, b, c)
    a[:] = 1.0
    assert np.array_equal(guards.fast.triad(a, b, c), b + c)
    assert not np.array_equal(first, b + c)


def test_keyword_call_falls_back(guards: Pair) -> None:
    """The site is an expression inside the function: how the function is called does
    not matter, but the site sees its operands."""
    a, b, c = _f64(), _f64(12, 1), _f64(12, 2)
    with counting(guards, "triad") as counts:
        out = guards.fast.triad(c=c, b=b, a=a)
    assert np.array_equal(out, a * b + c)
    assert counts["fast"] == 1
