"""Never slower: a site whose guard fails on 64 calls in a row is retired (its calls go
straight to Python, counted as "guard: retired"), one call in 1024 probes the guard
again, and a site whose guard mostly passes keeps its fast path. Every answer is
Python's, retired or not (`_dispatch.c`, RETIRE_AFTER / PROBE_EVERY)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, counting, outcome_difference

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

RETIRE_AFTER, PROBE_EVERY = 64, 1024

SOURCE = """\
import numpy as np


def triad(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    return a * b + c


def fill(t: np.ndarray, a: np.ndarray, b: np.ndarray):
    t[...] = a * b + 1.5
"""


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    project = tmp_path_factory.mktemp("retire")
    (project / "pyproject.toml").write_text('[tool.ppy]\nbackends = ["llvm"]\n')
    p = compile_pair(project, "retire_mod", SOURCE)
    assert p.compiled("triad"), p.diagnostics
    assert p.compiled("fill"), p.diagnostics
    return p


def _same(pair: Pair, function: str, args: tuple[Any, ...]) -> None:
    got = call(getattr(pair.fast, function), args)
    want = call(getattr(pair.plain, function), args)
    assert outcome_difference(got, want) is None, outcome_difference(got, want)


def _arrays(n: int = 16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)


def _fresh_site(pair: Pair, function: str) -> None:
    """Counters and retirement state afresh (`reset_stats` zeroes both)."""
    import ppy

    ppy.reset_stats()
    assert pair.counts(function) == (0, {})


def test_a_site_that_keeps_failing_is_retired_and_stays_exact(pair: Pair) -> None:
    _fresh_site(pair, "triad")
    with counting(pair, "triad") as c:
        for k in range(200):  # Python floats: the guard wants arrays
            _same(pair, "triad", (1.5 + k, -2.0, 0.25))
    # 64 guard failures, then every call answered by Python without trying the guard
    assert c == {"fast": 0, "fallback": {"guard: type": RETIRE_AFTER, "guard: retired": 136}}


def test_a_retired_site_probes_again_and_regains_its_fast_path(pair: Pair) -> None:
    _fresh_site(pair, "triad")
    for _ in range(RETIRE_AFTER):
        _same(pair, "triad", (1.0, 2.0, 3.0))
    with counting(pair, "triad") as c:
        for _ in range(PROBE_EVERY):  # arrays now: Python answers until the probe
            _same(pair, "triad", _arrays())
    assert c == {"fast": 1, "fallback": {"guard: retired": PROBE_EVERY - 1}}
    with counting(pair, "triad") as c:
        for _ in range(10):  # live again: every call fast
            _same(pair, "triad", _arrays())
    assert c == {"fast": 10, "fallback": {}}


def test_a_failed_probe_waits_another_period(pair: Pair) -> None:
    _fresh_site(pair, "triad")
    with counting(pair, "triad") as c:
        for _ in range(RETIRE_AFTER + 2 * PROBE_EVERY):
            _same(pair, "triad", (1.0, 2.0, 3.0))
    # two probes, each failing its guard once more
    failed, retired = RETIRE_AFTER + 2, 2 * PROBE_EVERY - 2
    assert c == {"fast": 0, "fallback": {"guard: type": failed, "guard: retired": retired}}


@pytest.mark.parametrize("period", [2, RETIRE_AFTER])
def test_a_site_that_mostly_passes_keeps_its_fast_path(pair: Pair, period: int) -> None:
    """Failing on period - 1 calls in every `period` (63 in 64 at worst) never retires it."""
    _fresh_site(pair, "triad")
    rounds = 20
    with counting(pair, "triad") as c:
        for _ in range(rounds):
            for _ in range(period - 1):
                _same(pair, "triad", (1.0, 2.0, 3.0))
            _same(pair, "triad", _arrays())
    assert c == {"fast": rounds, "fallback": {"guard: type": rounds * (period - 1)}}


def test_a_store_site_retires_too(pair: Pair) -> None:
    _fresh_site(pair, "fill")
    with counting(pair, "fill") as c:
        for _ in range(RETIRE_AFTER + 10):  # a list target: Python's item assignment
            b = np.arange(4.0)
            _same(pair, "fill", ([0.0] * 4, b, b))  # the same TypeError
    assert c == {"fast": 0, "fallback": {"guard: target": RETIRE_AFTER, "guard: retired": 10}}
    t, b = np.zeros(8), np.arange(8.0)
    want = t.copy()
    pair.plain.fill(want, b, b)
    with counting(pair, "fill") as c:
        pair.fast.fill(t, b, b)
    assert c == {"fast": 0, "fallback": {"guard: retired": 1}}  # retired: Python wrote it
    assert t.tobytes() == want.tobytes()
