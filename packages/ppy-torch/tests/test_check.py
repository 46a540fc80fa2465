"""What `ppy check` learns from the torch plugin: a curated function called with more
positional arguments than it takes (E1006); methods that spread a shape are not counted;
the surface around the operations (`surface`) typed, so strict mode knows it."""

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


def test_checking_never_imports_torch(tmp_path: Path) -> None:
    """The checker keys a file by the plugin's typing fingerprint (its version and
    torch's installed files, `keys.typing_fingerprint`), not by the build fingerprint
    that imports torch: checking, even with an empty cache, never imports torch,
    which is where mypy's seconds go."""
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
    assert outputs == [["1", "False"], ["0", "False"]]


def test_the_surface_around_the_operations_is_typed_under_strict(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ppy]\nstrict = true\n")
    path = tmp_path / "mod.py"
    path.write_text(
        textwrap.dedent(
            """
            import torch

            def main(x: torch.Tensor) -> None:
                torch.manual_seed(0)
                torch.set_num_threads(1)
                devices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
                for device in devices:
                    w = torch.randn(8, 32, device=device)
                    if w.is_cuda:
                        torch.cuda.synchronize()
                c = x.size(2)
                print(torch.__version__, c // 2, 2 * c, x.view(c, c // 2).shape)
                tracked = torch.randn(4, 8, requires_grad=True)
                tracked.sum().backward()
                print(tracked.grad is not None, tracked.requires_grad)

            def grad_of(x: torch.Tensor) -> torch.Tensor:
                return x.grad
            """
        )
    )
    report = check_paths([str(path)])
    # `.grad` is a Tensor or None (None until a backward pass reaches it)
    assert [(f.location.line, f.code) for f in report.findings if f.location] == [(19, "E1005")]
    assert "tensor | None" in report.findings[0].message.replace("torch array of f64", "tensor")
    path.write_text(
        path.read_text() + "\n\ndef total(x: torch.Tensor) -> None:\n    print(x.grad.sum())\n"
    )
    found = check_paths([str(path)]).findings
    assert [(f.location.line, f.code) for f in found if f.location] == [
        (19, "E1005"),
        (23, "E1001"),
    ]
    assert "None has no member `sum`" in found[1].message


CACHED_IN_A_FRESH_PROCESS = """
import sys
from ppy_core.compiler.check import check_paths
report = check_paths([sys.argv[1]])
print(report.errors, report.cached, "ppy_torch.plugin" in sys.modules)
"""


def test_a_cached_result_is_found_without_loading_the_plugin(tmp_path: Path) -> None:
    """The quick key (`check.quick`) covers what the plugin's answers depend on, so an
    unchanged file's findings are read back without importing the plugin's modules."""
    import os
    import subprocess
    import sys

    path = tmp_path / "mod.py"
    path.write_text("import torch\n\ndef f(x: torch.Tensor) -> None:\n    torch.relu(x, x, x)\n")
    env = {**os.environ, "PPY_CACHE_DIR": str(tmp_path / "cache")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", CACHED_IN_A_FRESH_PROCESS, str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=True,
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs == [["1", "0", "True"], ["1", "1", "False"]]
