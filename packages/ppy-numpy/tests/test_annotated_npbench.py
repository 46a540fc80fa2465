"""Hand-annotated NPBench code compiles what its observed signatures compile (issue 27:
`benchmarks/corpus/npbench_annotated`, annotations and signatures meet in `Typer`).
Each cause that kept an annotated kernel Python while the unannotated one ran fast,
with the fast path asserted and the answer equal to plain Python's bit for bit.

* A parameter named like a module the annotations use (`azimint_naive(data:
  npt.NDArray[np.float64], ..., npt: int)`): Python evaluates annotations where the
  `def` runs, so `npt` there is `numpy.typing`; the typer read it as the parameter and
  left `data` Unknown (typed loops refused it: "not an int, float or typed array").
* An annotated helper (`match(b1: np.int32, b2: np.int32)`, nussinov): the typed loop
  builds it in place only if its body reads nothing but its parameters; its annotations'
  `np` counted as a global it reads, so the whole loop stayed Python.
* `2 * dx` of an annotated `dx: float` in a stencil over views (cavity_flow,
  channel_flow): a number leaf read early, allowed only for names surely Python floats,
  which were a specialization's float arguments alone; an annotated float is one too
  (`Typer.python_float`), as the typed sites already read it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, outcome_difference

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np
import numpy.typing as npt


def weighted(data: npt.NDArray[np.float64], radius: npt.NDArray[np.float64], npt: int):
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        res[i] = data[i] * radius[i] + 0.5
    return res


def match(b1: np.int32, b2: np.int32):
    if b1 + b2 == 3:
        return 1
    else:
        return 0


def nussinov(N: int, seq: npt.NDArray[np.int32]):
    table = np.zeros((N, N), np.int32)
    for i in range(N - 1, -1, -1):
        for j in range(i + 1, N):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < N:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < N:
                if i < j - 1:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1] + match(seq[i], seq[j]))
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return table


def stencil(b: npt.NDArray[np.float64], u: npt.NDArray[np.float64], dx: float, dt: float):
    b[1:-1, 1:-1] = (u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) * (1 / dt)
"""


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "annotated_npbench", SOURCE)


def _fast(pair: Pair, function: str) -> int:
    prefix = f"{pair.name}:{function}."
    return sum(int(s["fast"]) for k, s in ppy.stats().items() if k.startswith(prefix))


def _run(pair: Pair, function: str, args: tuple[Any, ...], errstate: str = "ignore") -> int:
    """Fast-path calls of one call of `function` on copies of `args`, after asserting
    its return value, exception, warnings (in order) and every array argument equal
    plain Python's bit for bit."""
    mine = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    theirs = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    before = _fast(pair, function)
    got = call(getattr(pair.fast, function), mine, all=errstate)
    fast = _fast(pair, function) - before
    want = call(getattr(pair.plain, function), theirs, all=errstate)
    difference = outcome_difference(got, want, warning_order=True)
    assert difference is None, difference
    for g, w in zip(mine, theirs, strict=True):
        if isinstance(w, np.ndarray):
            assert g.tobytes() == w.tobytes()
    return fast


def test_annotation_names_are_the_modules(pair: Pair) -> None:
    records = [r for r in pair.manifest["function_sites"] if r["function"] == "weighted"]
    assert records
    assert all(r["unit"] is not None for r in records)  # a typed loop
    rng = np.random.default_rng(1)
    data, radius = rng.standard_normal(9), rng.standard_normal(9)
    assert _run(pair, "weighted", (data, radius, 9)) == 1
    assert _run(pair, "weighted", (data, radius, 0)) == 1  # an empty result


def test_annotated_helper_builds_in_place(pair: Pair) -> None:
    records = [r for r in pair.manifest["function_sites"] if r["function"] == "nussinov"]
    assert records
    assert all(r["unit"] is not None for r in records)
    for seed, n in ((0, 12), (1, 1), (2, 30)):
        seq = np.random.default_rng(seed).integers(0, 4, size=n).astype(np.int32)
        assert _run(pair, "nussinov", (n, seq)) == 1


def test_annotated_float_in_a_stencil(pair: Pair) -> None:
    assert pair.compiled("stencil")
    rng = np.random.default_rng(3)
    u, b = rng.standard_normal((6, 7)), np.zeros((6, 7))
    for dx, dt in ((0.25, 0.5), (-3.0, 1e-300), (1e300, 7.0)):
        assert _run(pair, "stencil", (b, u, dx, dt)) == 1
    # dt = 0.0 raises Python's ZeroDivisionError where Python does (the site's test)
    assert _run(pair, "stencil", (b, u, 0.5, 0.0)) == 0
    # arguments the annotations do not describe: whatever runs, Python's answer
    for dx, dt in ((2, 3), (np.float64(0.5), 0.25), (0.5, np.float32(2.0))):
        _run(pair, "stencil", (b, u, dx, dt))
    # NumPy float64 scalars (a float, as NPBench passes gemm's alpha): their leaves
    # warn or raise under np.errstate where Python's statement does, once
    specials = [(np.float64(1e308), 1.0), (0.5, np.float64(0.0)), (np.float64(1e-300),) * 2]
    for errstate in ("warn", "raise", "ignore"):
        for dx, dt in specials:
            _run(pair, "stencil", (b, u, dx, dt), errstate)
