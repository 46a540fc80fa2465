"""Elements of typed arrays are no array leaves (issue 28, NPBench go_fast).

In a specialization `a` is typed by the call's signature, so `a[i, i]` indexing each
of its axes by an int (a loop counter, `i + 1`, a literal, a name bound once to such an
element) is a NumPy scalar on every call. A site that took it for an array would
refuse every call at its guard until it retired, and each refusal and retired check
cost (go_fast 1.11x NumPy). Such trees are cut at that leaf: the nodes above it stay
Python. A view (`a[i]` of a rank-2 array) is still an array leaf. Likewise int
arithmetic of loop counters and ints (`K - i`) is an int, and arithmetic over a
complex literal (`-2j * np.pi * x`) is complex: never a float64 array.

Every call is compared with the same source run by NumPy (bits, warnings) and the fast
path is counted through `ppy.stats()`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, generic, outcome_difference, random_array

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def go_fast(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def corners(a):
    e = a[0, -1]
    t = np.sqrt(e)
    for i in range(a.shape[0] - 1):
        t += np.exp(a[i + 1, 0]) * 2.0 - a[0, i]
    return a + t


def powers(R, K, x):
    t = 0
    for i in range(K):
        t += R ** (K - i - 1)
    return x * 2.0 + x  # t is computed (the loop runs), not returned


def twiddles(n, x):
    out = []
    for i in range(n):
        out.append(np.exp(-2j * np.pi * x / (i + 1)))
    return np.array(out)


def row_views(a):
    rows = []
    for i in range(a.shape[0]):
        rows.append(np.tanh(a[i]))
    return np.array(rows)
"""


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "element_leaves", SOURCE)


def _counts(pair: Pair, function: str) -> tuple[int, dict[str, int]]:
    """Fast calls and fallbacks summed over every site of `function`, the generic
    function's and its specializations' (`name:function.N`, `name:function.N@spec`)."""
    import ppy

    total, falls = 0, {}
    for key, data in ppy.stats().items():
        if key.startswith(f"{pair.name}:{function}."):
            total += int(data.get("fast", 0))
            for reason, n in data.get("fallback", {}).items():
                falls[reason] = falls.get(reason, 0) + int(n)
    return total, falls


def _both(
    pair: Pair, function: str, args: tuple[Any, ...], *, speculative: bool = False
) -> dict[str, Any]:
    """The specializing dispatcher (`speculative`: the generic function) and NumPy on
    `args`: NumPy's outcome bit for bit; the fast build's counters' increase."""
    fn = generic(pair, function) if speculative else getattr(pair.fast, function)
    fast0, falls0 = _counts(pair, function)
    got = call(fn, args, all="warn")
    fast1, falls1 = _counts(pair, function)
    want = call(getattr(pair.plain, function), args, all="warn")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    falls = {r: n - falls0.get(r, 0) for r, n in falls1.items() if n != falls0.get(r, 0)}
    return {"fast": fast1 - fast0, "fallback": falls}


def test_go_fast_diagonal_is_no_site(pair: Pair) -> None:
    """go_fast: the loop's `np.tanh(a[i, i])` is Python's (no guard refused per
    element), `a + trace` takes the fast path once a call (no specials: a NaN trace
    is a number leaf the guard hands to NumPy)."""
    rng = np.random.default_rng(0)
    for n in (1, 7, 200):
        for _ in range(3):
            a = random_array(rng, (n, n), special=0.0)
            c = _both(pair, "go_fast", (a,))
            assert c == {"fast": 1, "fallback": {}}, (n, c)


def test_offsets_literals_and_bound_names(pair: Pair) -> None:
    """`a[0, -1]` through a name bound once, `a[i + 1, 0]` and `a[0, i]` in a tree of
    three operations: no site over them (a negative element warns as NumPy does);
    `a + t` runs fast once a call. (Were the specialization's only sites those the
    generic function has, the generic function would answer: `observed._gains`.)"""
    rng = np.random.default_rng(1)
    for n in (2, 9, 64):
        a = rng.random((n, n))  # a finite t (exp of 1e8 is inf: a number leaf NumPy's)
        c = _both(pair, "corners", (a,))
        assert c == {"fast": 1, "fallback": {}}, (n, c)
        a = random_array(rng, (n, n), special=0.2)
        c = _both(pair, "corners", (a,))  # negative elements, specials: NaN t
        assert c["fast"] + sum(c["fallback"].values()) == 1, (n, c)
        assert set(c["fallback"]) <= {"guard: type"}, (n, c)


def test_row_views_stay_array_leaves(pair: Pair) -> None:
    """`a[i]` of a rank-2 array is a row, an array: its site still runs fast."""
    rng = np.random.default_rng(3)
    for n in (1, 6, 50):
        a = random_array(rng, (n, 33), special=0.2)
        c = _both(pair, "row_views", (a,))
        assert c == {"fast": n, "fallback": {}}, (n, c)


def test_int_arithmetic_of_counters_is_no_array(pair: Pair) -> None:
    """stockham_fft's `R ** (K - i - 1)` with `R`, `K` ints (typed so by the call's
    signature) and `i` a counter: ints, no site whose guard took `K - i` for an array
    and refused every pass; `x * 2.0 + x` runs fast once a call."""
    rng = np.random.default_rng(4)
    for K in (0, 1, 5):
        x = rng.standard_normal(17)  # no FP flag: x * 2.0 + x stays fast
        c = _both(pair, "powers", (3, K, x))
        assert c == {"fast": 1, "fallback": {}}, (K, c)


def test_complex_arithmetic_is_no_real_array(pair: Pair) -> None:
    """stockham_fft's `np.exp(-2j * np.pi * x / (i + 1))`: the leaf is complex whatever
    `x` is: no site refusing every pass, in the generic function (which answers for
    the specialization too: it compiles nothing)."""
    rng = np.random.default_rng(5)
    for n in (1, 4):
        x = random_array(rng, (9,), special=0.2)
        for speculative in (True, False):
            c = _both(pair, "twiddles", (n, x), speculative=speculative)
            assert c == {"fast": 0, "fallback": {}}, (n, speculative, c)
    assert not pair.records("twiddles")
