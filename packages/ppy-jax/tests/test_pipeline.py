"""Through `ppy`: under build-execution = "allow" a jitted function is exported at build
time and its artifact runs (counted in ppy.stats(), printing what `python` prints);
under "deny" each exportable function is one E0030 warning and stays jitted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jax_project import write_project

PPY = [sys.executable, "-m", "ppy_core.cli"]


def run(folder: Path, *command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PPY_CACHE_DIR": str(folder / ".cache"), "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        list(command), cwd=folder, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done


def test_allow_exports_and_runs_the_artifact(tmp_path: Path) -> None:
    folder = write_project(tmp_path / "allow", "allow")
    built = run(folder, *PPY, "run", "main.py")
    checks = [line for line in built.stdout.splitlines() if "same bits as jit" in line]
    assert len(checks) == 6
    assert all("same bits as jit: True" in line for line in checks), checks
    kinds = next(line for line in built.stdout.splitlines() if line.startswith("kinds"))
    # forward and fixed exported; branchy's export raised; unannotated is not described
    assert kinds == "kinds ExportedFunction ExportedFunction PjitFunction PjitFunction"
    stats = next(line for line in built.stdout.splitlines() if line.startswith("stats"))
    assert re.search(r"'jaxproj_model:forward\.\d+': \{'fast': 3, 'fallback': \{\}\}", stats)
    assert re.search(r"'jaxproj_model:plain\.\d+': \{'fast': 3, 'fallback': \{\}\}", stats)
    assert "[E0031]" in built.stderr  # branchy, reported, the build went on
    assert "InconclusiveDimensionOperation" in built.stderr
    assert "Traceback" not in built.stderr


@pytest.mark.parametrize("execution", ["deny"])
def test_deny_warns_once_per_function_and_keeps_jit(tmp_path: Path, execution: str) -> None:
    folder = write_project(tmp_path / execution, execution)
    built = run(folder, *PPY, "build", "jaxproj_model.py")
    warnings = [line for line in built.stderr.splitlines() if "[E0030]" in line]
    named = sorted(re.search(r"jax export of jaxproj_model\.(\w+)", w)[1] for w in warnings)
    assert named == ["branchy", "fixed", "forward", "pair", "plain"]
    assert all('build-execution is "deny"' in w for w in warnings)
    assert all("stays an ordinary jitted call" in w for w in warnings)
