"""examples/21_scipy runs three ways (`python`, `ppy`, `ppy run`) with identical output
apart from the `#` lines (timings, machine, whether the fast path ran)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppy_core import testing

pytestmark = pytest.mark.fused

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "21_scipy/scipy_special.ppy"
ARGS = ("20000", "0.002")  # elements, seconds per timing: a quick run


@pytest.mark.skipif(not EXAMPLE.is_file(), reason="examples/ is not in this checkout")
def test_example_runs_three_ways_with_identical_output() -> None:
    ways = testing.three_ways(EXAMPLE, ARGS)
    assert ways.kept["python"][-1] == "all results identical to SciPy", ways.stdout["python"]
    assert len(ways.kept["python"]) == 7
    assert ways.fast_sites("python").startswith("# fast path: no")
    assert ways.fast_sites("ppy").startswith("# fast path: yes (5 sites")
    assert ways.fast_sites("ppy run").startswith("# fast path: yes (5 sites")
