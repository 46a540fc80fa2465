"""The llvm backend's cost rule (`ppy_llvm._cost`), both ways, through the NumPy plugin:
a reduction over nothing but a NumPy loop call (`np.log(x).sum()`) stays Python with
E2109 and NumPy's answer; one with arithmetic fused around the loop
(`np.sum(np.exp(x) * 2.0)`) compiles and runs fast with NumPy's bits; with the rule off
(`PPY_COST_RULE=0`) the first compiles too, so the rule is what kept it Python. A
float32 map of one arithmetic operation (`a / b`) stays Python too; two operations,
and `np.maximum(x, 0)` alone, compile."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _npharness import Pair, compile_pair

import ppy

SOURCE = """\
import numpy as np
import numpy.typing as npt


def log_sum(x: npt.NDArray[np.float64]):
    return np.log(x).sum()


def max_tanh(x: npt.NDArray[np.float64]):
    return np.max(np.tanh(x))


def exp_sum(x: npt.NDArray[np.float64]):
    return np.sum(np.exp(x) * 2.0)
"""


def _fast(pair: Pair, name: str, x: np.ndarray) -> tuple[int, bool]:
    """(fast-path calls of one call of `name`, whether its answer is NumPy's bits)."""
    ppy.reset_stats()
    got = getattr(pair.fast, name)(x)
    fast, _ = pair.counts(name)
    want = getattr(pair.plain, name)(x)
    return fast, np.asarray(got).tobytes() == np.asarray(want).tobytes()


def _reasons(pair: Pair, name: str) -> str:
    return " ".join(" ".join(r["reasons"]) for r in pair.records(name))


@pytest.fixture
def x() -> np.ndarray:
    return np.random.default_rng(7).uniform(0.5, 2.0, 20_000)


def test_rule_keeps_loop_only_reductions_python(
    project: Path, x: np.ndarray, proven: dict[str, str]
) -> None:
    if any(proven.get(f) != "ok" for f in ("log", "tanh", "exp")):
        pytest.skip(f"the loops are not proven on this build: {proven}")
    pair = compile_pair(project, "cost_rule_on", SOURCE)
    for name in ("log_sum", "max_tanh"):
        assert not pair.compiled(name), pair.records(name)
        assert "E2109" in _reasons(pair, name), _reasons(pair, name)
        assert _fast(pair, name, x) == (0, True)
    assert pair.compiled("exp_sum"), pair.records("exp_sum")
    assert _fast(pair, "exp_sum", x) == (1, True)


def test_rule_off_compiles_them(
    project: Path, x: np.ndarray, proven: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if any(proven.get(f) != "ok" for f in ("log", "tanh")):
        pytest.skip(f"the loops are not proven on this build: {proven}")
    monkeypatch.setenv("PPY_COST_RULE", "0")
    pair = compile_pair(project, "cost_rule_off", SOURCE)
    for name in ("log_sum", "max_tanh"):
        assert pair.compiled(name), pair.records(name)
        assert _fast(pair, name, x) == (1, True)


F32_SOURCE = """\
import numpy as np
import numpy.typing as npt


def divide(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]):
    return a / b


def scaled(a: npt.NDArray[np.float32]):
    return a * 0.5


def two(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]):
    return (a - b) * 0.5


def relu(a: npt.NDArray[np.float32]):
    return np.maximum(a, 0)
"""


def test_one_float32_arithmetic_op_stays_numpys(project: Path) -> None:
    pair = compile_pair(project, "cost_rule_f32", F32_SOURCE)
    rng = np.random.default_rng(3)
    a, b = (rng.uniform(-2.0, 2.0, 4_096).astype(np.float32) for _ in range(2))
    for name in ("divide", "scaled"):
        assert not pair.compiled(name), pair.records(name)
        assert "E2109" in _reasons(pair, name), _reasons(pair, name)
    for name, args, fast in (
        ("divide", (a, b), 0),
        ("scaled", (a,), 0),
        ("two", (a, b), 1),
        ("relu", (a,), 1),
    ):
        ppy.reset_stats()
        got = getattr(pair.fast, name)(*args)
        assert pair.counts(name)[0] == fast, name
        want = getattr(pair.plain, name)(*args)
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes()
