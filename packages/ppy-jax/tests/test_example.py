"""examples/29_flax trains three ways (`python`, `ppy`, `ppy run`) with identical losses
(the `#` lines differ: time to the first step, which path ran); under ppy the train
step is the exported function, running the executable stored at build time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "29_flax" / "train.py"
PPY = shutil.which("ppy", path=str(Path(sys.executable).parent)) or "ppy"
STEPS = "101"  # losses at steps 0, 50, 100: a quick run


def _run(tmp: Path, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, str(EXAMPLE), STEPS],
        capture_output=True,
        text=True,
        cwd=EXAMPLE.parent,
        env={**os.environ, "PPY_CACHE_DIR": str(tmp / "cache")},
        timeout=600,
        check=False,
    )


@pytest.mark.skipif(not EXAMPLE.is_file(), reason="examples/ is not in this checkout")
def test_example_trains_three_ways_with_identical_losses(tmp_path: Path) -> None:
    runs = {
        "python": _run(tmp_path, sys.executable),
        "ppy": _run(tmp_path, PPY),
        "ppy run": _run(tmp_path, PPY, "run"),
    }
    for way, done in runs.items():
        assert done.returncode == 0, (way, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, (way, done.stderr)
    kept = {
        way: [line for line in done.stdout.splitlines() if not line.startswith("#")]
        for way, done in runs.items()
    }
    assert len(kept["python"]) == 3
    assert all(line.startswith("step ") for line in kept["python"])
    assert kept["ppy"] == kept["python"]
    assert kept["ppy run"] == kept["python"]
    assert "# train step runs as: PjitFunction" in runs["python"].stdout
    for way in ("ppy", "ppy run"):
        out = runs[way].stdout
        assert "runs as: ExportedFunction (the compiled executable stored at build time)" in out
        assert "'fast': 101, 'fallback': {}" in out
