"""Unannotated NumPy code: `def f(a, b, c): return 2.0*a + 3.0*b*c - a/b` in a module
that imports NumPy is one fused site whose leaves are assumed float64 arrays. Arrays
take the fast path, bit for bit NumPy's answer; floats, ints, lists, other arrays and
tensors take the Python path (counted), with Python's exact answer and effects."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import (
    SPECIALS,
    Pair,
    call,
    compile_pair,
    counting,
    difference,
    outcome_difference,
    random_array,
    shapes,
    special_array,
    with_reasons,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def f(a, b, c):
    return 2.0*a + 3.0*b*c - a/b


def waves(x, y):
    return np.sin(x) * 2.0 + y * y


def helper(n):
    return np.linspace(-1.0, 1.0, n)


def from_call(n):
    x = helper(n)
    return x * x - 0.5 * x


def ordered(a, log):
    return a * 2.0 + log(a)
"""


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "spec_unannotated", SOURCE)


def _check_fast(pair: Pair, args: tuple[Any, ...], function: str = "f") -> None:
    """Under errstate(ignore) (no FP flag can send it back): the fast path ran once and
    its answer is NumPy's, bit for bit; an empty input is refused (counted)."""
    with counting(pair, function) as c:
        got = call(getattr(pair.fast, function), args, all="ignore")
    want = call(getattr(pair.plain, function), args, all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    if args[0].size == 0:
        assert c == {"fast": 0, "fallback": {"guard: empty": 1}}, with_reasons(c)
    else:
        assert c == {"fast": 1, "fallback": {}}, with_reasons(c)


def test_the_unannotated_function_is_one_speculative_site(pair: Pair) -> None:
    (record,) = pair.records("f")
    assert record["unit"] is not None, record["reasons"]
    assert record["assumed"] == ["a", "b", "c"]
    assert record["library"] == "numpy"
    (other,) = pair.records("from_call")
    assert other["assumed"] == ["x"]
    assert other["unit"] is not None


@pytest.mark.parametrize("shape", list(shapes()), ids=str)
def test_arrays_take_the_fast_path_bit_for_bit(pair: Pair, shape: Any) -> None:
    rng = np.random.default_rng(sum(shape) + 7)
    _check_fast(pair, tuple(random_array(rng, shape) for _ in range(3)))
    _check_fast(pair, tuple(special_array(rng, shape) for _ in range(3)))
    _check_fast(pair, (random_array(rng, shape), random_array(rng, shape)), "waves")


def test_specials_one_by_one(pair: Pair) -> None:
    """Every pair of special values (NaN payloads, -0.0, inf, subnormals, huge)."""
    a = np.repeat(SPECIALS, len(SPECIALS))
    b = np.tile(SPECIALS, len(SPECIALS))
    _check_fast(pair, (a, b, b[::-1].copy()))


def test_large_arrays_split_over_threads_are_bit_equal(pair: Pair) -> None:
    rng = np.random.default_rng(3)
    _check_fast(pair, tuple(random_array(rng, (1_000_003,)) for _ in range(3)))


def test_locals_from_unknown_calls_are_assumed(pair: Pair) -> None:
    with counting(pair, "from_call") as c:
        got = pair.fast.from_call(1001)
    assert difference(got, pair.plain.from_call(1001)) is None
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.just(3), st.integers(1, 40)),
        elements=st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
    )
)
def test_hypothesis_arrays(pair: Pair, abc: np.ndarray) -> None:
    _check_fast(pair, (abc[0].copy(), abc[1].copy(), abc[2].copy()))


class Recorder:
    """A stand-in for another library's tensor: its operators record their order."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def _op(self, op: str, other: object) -> Recorder:
        label = f"({self.name}{op}{getattr(other, 'name', other)})"
        self.log.append(label)
        return Recorder(self.log, label)

    def __mul__(self, o: object) -> Recorder:
        return self._op("*", o)

    def __rmul__(self, o: object) -> Recorder:
        return Recorder(self.log, str(o))._op("*", self)

    def __add__(self, o: object) -> Recorder:
        return self._op("+", o)

    def __sub__(self, o: object) -> Recorder:
        return self._op("-", o)

    def __truediv__(self, o: object) -> Recorder:
        return self._op("/", o)


def _python_path(pair: Pair, function: str, make: Any, reason: str) -> None:
    """The speculative site itself (the generic function, under the specializing
    dispatcher: `test_observed.py` covers what a signature's specialization takes):
    `function(*make())` answers as under Python and counts one fallback. Through the
    dispatcher the answer is Python's too."""
    dispatcher = getattr(pair.fast, function)
    generic = getattr(dispatcher, "__wrapped__", dispatcher)
    with counting(pair, function) as c:
        got = call(generic, make())
    want = call(getattr(pair.plain, function), make())
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    assert c == {"fast": 0, "fallback": {reason: 1}}, with_reasons(c)
    got = call(dispatcher, make())
    assert outcome_difference(got, want) is None, outcome_difference(got, want)


PYTHON_CASES: list[tuple[str, Any, str]] = [
    ("floats", lambda: (1.5, -2.25, 3.0), "guard: type"),
    ("ints", lambda: (1, 2, 3), "guard: type"),
    ("huge ints", lambda: (10**30, 3, 7), "guard: type"),
    ("zero division", lambda: (1.0, 0.0, 2.0), "guard: type"),
    ("specials", lambda: (math.nan, -0.0, math.inf), "guard: type"),
    ("numpy scalars", lambda: (np.float64(1.5), np.float64(2.0), np.float64(-1.0)), "guard: type"),
    ("lists", lambda: ([1.0], [2.0], [3.0]), "guard: type"),
    ("strings", lambda: ("a", "b", "c"), "guard: type"),
    # a finite float beside an array is broadcast (test_strided.py); an int or NaN is not
    ("mixed array and int", lambda: (np.ones(4), 2, np.ones(4)), "guard: type"),
    ("mixed array and nan", lambda: (np.ones(4), math.nan, np.ones(4)), "guard: type"),
    ("int array", lambda: (np.arange(4), np.ones(4), np.ones(4)), "guard: dtype"),
    ("float32", lambda: (np.ones(4, np.float32),) * 3, "guard: dtype"),
    ("0-d", lambda: (np.array(2.0), np.array(3.0), np.array(4.0)), "guard: 0-d"),
    # views and broadcast shapes take the fast path (test_strided.py); these do not:
    (
        "misaligned",
        lambda: (np.frombuffer(b"\0" + bytes(32), np.float64, offset=1), np.ones(4), np.ones(4)),
        "guard: layout",
    ),
    ("mismatch", lambda: (np.ones((3, 4)), np.ones(3), np.ones((3, 1))), "guard: shape"),
]


@pytest.mark.parametrize(
    ("make", "reason"), [c[1:] for c in PYTHON_CASES], ids=[c[0] for c in PYTHON_CASES]
)
def test_anything_else_takes_the_python_path(pair: Pair, make: Any, reason: str) -> None:
    _python_path(pair, "f", make, reason)


def test_other_tensors_keep_their_operators_and_order(pair: Pair) -> None:
    def make() -> tuple[Any, ...]:
        log: list[str] = []
        return Recorder(log, "a"), Recorder(log, "b"), Recorder(log, "c")

    fast_args, plain_args = make(), make()
    with counting(pair, "f") as c:
        got = pair.fast.f(*fast_args)
    want = pair.plain.f(*plain_args)
    assert got.name == want.name
    assert fast_args[0].log == plain_args[0].log  # the same operators, in Python's order
    assert c == {"fast": 0, "fallback": {"guard: type": 1}}


def test_torch_tensors_take_the_python_path(pair: Pair) -> None:
    torch = pytest.importorskip("torch")
    x = torch.linspace(0.5, 2.0, 7, dtype=torch.float64)
    with counting(pair, "f") as c:
        got = pair.fast.f(x, x + 1.0, x * 3.0)
    want = pair.plain.f(x, x + 1.0, x * 3.0)
    assert type(got) is type(want)
    assert torch.equal(got, want)
    assert c == {"fast": 0, "fallback": {"guard: type": 1}}


def test_a_call_after_an_operation_stays_in_pythons_order(pair: Pair) -> None:
    """`a * 2.0 + log(a)`: Python multiplies before it calls `log`; no site reorders it."""
    assert pair.records("ordered") == []
    seen: list[str] = []

    def log(x: Any) -> float:
        seen.append("log")
        return 1.0

    class Loud(Recorder):
        def __mul__(self, o: object) -> Recorder:
            seen.append("mul")
            return super().__mul__(o)

    pair.fast.ordered(Loud([], "a"), log)
    assert seen == ["mul", "log"]


def test_explain_marks_the_site_speculative(pair: Pair) -> None:
    from ppy_core.cli.commands import explain_file

    text = explain_file(str(pair.path))
    header = next(line for line in text.splitlines() if "2.0 * a + 3.0 * b * c - a / b" in line)
    assert "compiled by llvm [speculative]" in header
    assert "speculative: assumes a, b, c are numpy arrays" in text


def test_a_module_without_an_array_library_gets_no_speculative_site(project: Path) -> None:
    scalar = compile_pair(
        project,
        "spec_scalar",
        SOURCE.split("\n\n\ndef waves")[0].replace("import numpy as np", "import math"),
    )
    assert scalar.manifest["expr_sites"] == []
    assert scalar.manifest["plugins"] == []
    assert scalar.fast.f(1.5, 2.0, 4.0) == scalar.plain.f(1.5, 2.0, 4.0)
