"""examples/21_scipy runs three ways (`python`, `ppy`, `ppy run`) with identical output
apart from the `#` lines (timings, machine, whether the fast path ran)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.fused

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "21_scipy" / "scipy_special.ppy"
PPY = shutil.which("ppy", path=str(Path(sys.executable).parent)) or "ppy"
ARGS = ("20000", "0.002")  # elements, seconds per timing: a quick run


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, str(EXAMPLE), *ARGS],
        capture_output=True,
        text=True,
        cwd=EXAMPLE.parent,
        env=dict(os.environ),
        timeout=600,
        check=False,
    )


@pytest.mark.skipif(not EXAMPLE.is_file(), reason="examples/ is not in this checkout")
def test_example_runs_three_ways_with_identical_output() -> None:
    runs = {"python": _run(sys.executable), "ppy": _run(PPY), "ppy run": _run(PPY, "run")}
    for way, done in runs.items():
        assert done.returncode == 0, (way, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, (way, done.stderr)
    kept = {
        way: [line for line in done.stdout.splitlines() if not line.startswith("#")]
        for way, done in runs.items()
    }
    assert kept["python"][-1] == "all results identical to SciPy", runs["python"].stdout
    assert len(kept["python"]) == 6
    assert kept["ppy"] == kept["python"]
    assert kept["ppy run"] == kept["python"]
    assert "# fast path: no" in runs["python"].stdout
    assert "# fast path: yes (4 sites" in runs["ppy"].stdout
    assert "# fast path: yes (4 sites" in runs["ppy run"].stdout
