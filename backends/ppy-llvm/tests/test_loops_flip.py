"""Typed loops with `np.flip` views (NPBench's durbin, unmodified and unannotated):
`np.dot(np.flip(r[:k]), y[:k])` and `y[:k] += alpha * np.flip(y[:k])`, whose read
of its own target sees the old values (NumPy's temporary). Random loop bodies over
random lengths (empty, one, lengths that differ) and NaN payloads, infinities, -0.0
and subnormals: values, arrays written, warnings and exceptions equal to Python's,
the fast path asserted through `ppy.stats()` (a call the function leaves to Python,
two different NaNs meeting or a broadcast, counted as that fallback)."""

from __future__ import annotations

import random
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from loops_harness import FLOATS, load_both, outcome, random_programs

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

DURBIN = (
    Path(__file__).resolve().parents[3]
    / "benchmarks/corpus/npbench/npbench/benchmarks/polybench/durbin/durbin_numpy.py"
)
RERUN = "a case NumPy answers its own way: two NaNs meeting, or a broadcast"


def counts(module: str, function: str) -> tuple[int, int]:
    """(fast calls, calls rerun as Python) of `function`'s sites and specializations."""
    fast = rerun = 0
    for key, stat in ppy.stats().items():
        if key.startswith(f"{module}:{function}."):
            fast += int(stat["fast"])
            rerun += int(stat["fallback"].get(RERUN, 0))
    return fast, rerun


def _same(pair: tuple[types.ModuleType, ...], module: str, name: str, *args: object) -> str:
    """Compiled and plain agree; "fast" or "rerun": how the compiled call ran."""
    mod, plain = pair
    before = counts(module, name)
    assert outcome(getattr(mod, name), *args) == outcome(getattr(plain, name), *args)
    after = counts(module, name)
    assert sum(after) == sum(before) + 1, (before, after)  # the compiled function ran
    return "fast" if after[0] > before[0] else "rerun"


@pytest.fixture(scope="module")
def durbin(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("durbin"), "durbin_numpy", DURBIN.read_text())


def _initial(n: int) -> np.ndarray:
    return np.fromfunction(lambda i: n + 1 - i, (n,), dtype=np.float64)  # durbin.py's


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 300])
def test_durbin_bit_identical(durbin, n: int) -> None:
    """n = 0: NumPy's IndexError of r[0], raised by the compiled function."""
    assert _same(durbin, "durbin_numpy", "kernel", _initial(n)) == "fast"
    rng = np.random.default_rng(n)
    assert _same(durbin, "durbin_numpy", "kernel", rng.standard_normal(n) * 0.1) == "fast"
    strided = np.repeat(_initial(n), 2)[::2]  # any strides: the general entry
    assert _same(durbin, "durbin_numpy", "kernel", strided) == "fast"


@settings(max_examples=150, deadline=None)
@given(r=hnp.arrays(np.float64, st.integers(0, 12), elements=FLOATS))
def test_durbin_special_values(durbin, r: np.ndarray) -> None:
    how = _same(durbin, "durbin_numpy", "kernel", r)
    if np.isfinite(r).all() and len(r) < 3:
        assert how == "fast"


def test_durbin_is_fast(durbin) -> None:
    import time

    mod, plain = durbin
    r = _initial(400)

    def best(fn: object) -> float:
        times = []
        for _ in range(3):
            t = time.perf_counter()
            fn(r)  # type: ignore[operator]
            times.append(time.perf_counter() - t)
        return min(times)

    mod.kernel(r)  # the specialization compiles on its first call
    assert best(mod.kernel) * 3 < best(plain.kernel)


# -- random loop bodies ----------------------------------------------------------
BOUNDS = ["", "k", "k + 1", "-1", "n", "0", "-k", "1"]
VIEWS = ["r[{lo}:{hi}]", "y[{lo}:{hi}]", "M[0, {lo}:{hi}]", "M[{lo}:{hi}, -1]"]


def _slice(r: random.Random, array: str) -> str:
    return f"{array}[{r.choice(BOUNDS)}:{r.choice(BOUNDS)}]"


def _program(r: random.Random, k: int) -> str:
    """`f{k}(r, M, n)`: a loop whose body takes dots of flipped views and updates the
    array it makes (`y`) by flipped views, of random (maybe differing) lengths."""
    u = r.choice(VIEWS).format(lo=r.choice(BOUNDS), hi=r.choice(BOUNDS))
    v = r.choice(VIEWS).format(lo=r.choice(BOUNDS), hi=r.choice(BOUNDS))
    dot = r.choice(["np.dot(np.flip({u}), {v})", "np.flip({u}) @ {v}", "{v} @ np.flip({u})"])
    target = _slice(r, "y")
    source = r.choice([target, _slice(r, "y"), _slice(r, "r")])
    scale = r.choice(["s * np.flip({w})", "np.flip({w}) * s", "np.flip({w})", "0.5 * np.flip({w})"])
    accumulate = r.choice(["s = s * 0.5 + {call}", "s += {call}"])  # `+=`: a scalar's update
    body = [
        accumulate.format(call=dot.format(u=u, v=v)),
        f"{target} {r.choice('+-*/')}= {scale.format(w=source)}",
        "y[k] = s" if r.random() < 0.5 else "s -= y[k]",
    ]
    r.shuffle(body)
    lines = [
        f"def f{k}(r, M, n):",
        "    y = np.zeros_like(r)",  # every element defined: the answer shows them all
        "    y[0] = r[0]",
        "    s = 1.0",
        "    for k in range(1, n):",
        *("        " + line for line in body),
        "    return y",
    ]
    return "\n".join(lines)


COUNT = 14


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return random_programs(tmp_path_factory, "loops_flip", 20261201, COUNT, _program)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k=st.integers(0, COUNT - 1),
    r=hnp.arrays(np.float64, st.integers(1, 7), elements=FLOATS),
    M=hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 7)), elements=FLOATS),
    n=st.integers(0, 8),
)
def test_random_bodies_match_python(bodies, k: int, r, M, n: int) -> None:
    _same(bodies, "loops_flip", f"f{k}", r, M, n)


def test_random_bodies_mostly_fast(bodies) -> None:
    """On ordinary values and lengths that agree, no call is left to Python."""
    rng = np.random.default_rng(5)
    for k in range(COUNT):
        r, M = rng.standard_normal(6), rng.standard_normal((3, 6))
        _same(bodies, "loops_flip", f"f{k}", r, M, 1)  # the loop runs nothing: fast
    fast = sum(counts("loops_flip", f"f{k}")[0] for k in range(COUNT))
    assert fast >= COUNT


SPECULATED = """
import numpy as np


def twice(r, n):
    y = np.zeros_like(r)
    s = 0.0
    for k in range(1, n):
        s += np.dot(np.flip(r[:k]), r[:k])
        y[:k] += 0.5 * np.flip(r[:k])
    return y
"""


def test_a_loop_that_updates_by_flip_is_not_speculated(tmp_path: Path) -> None:
    """An accumulator ending inf reruns a speculating loop tested: a loop that writes
    memory (here by np.flip) must not speculate, or its writes would be made twice."""
    pair = load_both(tmp_path, "flip_speculated", SPECULATED)
    r = np.array([1e300, 1e300, 2.0, 3.0])  # s overflows: the tested copy would rerun
    assert _same(pair, "flip_speculated", "twice", r, 4) == "fast"


REFUSED = """
import numpy as np


def writes_its_parameter(r, x):
    y = np.zeros_like(r)
    for k in range(1, r.shape[0]):
        y[:k] += 0.5 * np.flip(y[:k])
        x[k] = 1.0
    return y
"""


def test_an_update_by_flip_beside_a_parameter_write_stays_python(tmp_path: Path) -> None:
    """Its rare cases rerun the call as Python: not where a parameter was written."""
    mod, plain = load_both(tmp_path, "flip_refused", REFUSED)
    r, x = np.arange(5.0), np.zeros(5)
    assert outcome(mod.writes_its_parameter, r, x) == outcome(plain.writes_its_parameter, r, x)
    assert counts("flip_refused", "writes_its_parameter")[0] == 0
