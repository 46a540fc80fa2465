"""What `ppy check` learns from the torch plugin: a curated function called with more
positional arguments than it takes (E1006); methods that spread a shape are not counted."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ppy_core.compiler.check import check_paths


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def test_too_many_positional_arguments(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(
        textwrap.dedent(
            """
            import torch

            def f(x: torch.Tensor) -> torch.Tensor:
                y = torch.relu(x, x, x) + torch.add(x, x) + x.view(2, 3, 4).sum()
                return torch.sigmoid(torch.tanh(y))
            """
        )
    )
    report = check_paths([str(path)])
    assert [(f.location.line, f.code) for f in report.findings if f.location] == [(5, "E1006")]
    assert "torch.relu() takes at most 1 positional argument, 3 given" in report.findings[0].message


CHECK_IN_A_FRESH_PROCESS = """
import sys
from ppy_core.compiler.check import check_paths
report = check_paths([sys.argv[1]])
print(report.errors, "torch" in sys.modules)
"""


def test_checking_imports_torch_only_to_fingerprint_it_once(tmp_path: Path) -> None:
    """The checker keys a file by the plugin's fingerprint, read from a record while
    torch's files are unchanged: after the first time, checking (even a changed file)
    never imports torch, which is where mypy's seconds go."""
    import os
    import subprocess
    import sys

    path = tmp_path / "mod.py"
    env = {**os.environ, "PPY_CACHE_DIR": str(tmp_path / "cache")}
    outputs = []
    for body in ("torch.relu(x, x, x)", "torch.relu(x)"):
        path.write_text(f"import torch\n\ndef f(x: torch.Tensor) -> None:\n    {body}\n")
        done = subprocess.run(
            [sys.executable, "-c", CHECK_IN_A_FRESH_PROCESS, str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=True,
        )
        outputs.append(done.stdout.split())
    assert outputs == [["1", "True"], ["0", "False"]]
