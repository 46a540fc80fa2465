"""A third-party plugin from its own wheel: ppy-autograd, in a fresh venv holding only
`ppy` and the plugin's own dependencies (ppy-numpy's runtime adapter, ppy-llvm, autograd).

One venv serves every test here (built once per run: wheels of this tree, by path,
so none can come from an index). The tests show that the plugin is discovered and off
by default, that a project's pyproject.toml turns it on, that the demo then compiles
end to end with the fast path taken and the same output as Python, that its own tests
(the core's contract kit among them) pass there, and that when it is not enabled it is
never imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "plugins" / "ppy-autograd"
DEMO = PLUGIN / "demo"
WHEELS = (ROOT / "core", ROOT / "packages" / "ppy-numpy", ROOT / "backends" / "ppy-llvm", PLUGIN)

pytestmark = pytest.mark.slow


def _run(argv: list[str | Path], cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PPY_CACHE_DIR"] = str(cwd / ".ppy-cache")
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("third-party")
    dist = base / "dist"
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    for source in WHEELS:
        _ok(_run([*build, "-w", dist, source], base))
    _ok(_run([sys.executable, "-m", "venv", base / "venv"], base))
    python = base / "venv" / "bin" / "python"
    wheels = sorted(dist.glob("*.whl"))
    plugin = next(w for w in wheels if w.name.startswith("ppy_autograd-"))
    extras = [w for w in wheels if w != plugin]
    install = [python, "-m", "pip", "install", "-q", "--find-links", dist]
    _ok(_run([*install, *extras, f"{plugin}[fast,test]"], base))
    return base


def _project(base: Path, name: str, enabled: bool) -> Path:
    project = base / name
    if not project.exists():
        shutil.copytree(DEMO, project)
        if not enabled:
            (project / "pyproject.toml").unlink()
    return project


def _doctor(base: Path, project: Path) -> dict[str, object]:
    report = json.loads(_ok(_run([base / "venv" / "bin" / "ppy", "doctor", "--json"], project)))
    (row,) = [r for r in report["entries"] if r["name"] == "autograd"]
    return row


def test_installed_alone_discovered_and_off_until_enabled(venv: Path) -> None:
    pip = _ok(_run([venv / "venv" / "bin" / "python", "-m", "pip", "list", "--format=json"], venv))
    names = {p["name"].lower() for p in json.loads(pip)}
    assert {"ppy", "ppy-autograd", "ppy-numpy", "ppy-llvm", "autograd"} <= names
    assert not names & {"torch", "jax", "pyarrow", "pandas", "scipy", "ppy-torch", "ppy-web"}

    off = _doctor(venv, _project(venv, "off", enabled=False))
    assert off["enabled"] is False
    assert "enabled = true" in str(off["status"])
    on = _doctor(venv, _project(venv, "on", enabled=True))
    assert on["enabled"] is True
    assert on["distribution"] == "ppy-autograd"
    assert str(on["fingerprint"]).startswith("v1:autograd=")


def test_enabled_it_compiles_end_to_end_with_the_fast_path(venv: Path) -> None:
    project, bin_dir = _project(venv, "on", enabled=True), venv / "venv" / "bin"
    runs = {
        "python": _run([bin_dir / "python", "softplus.ppy"], project),
        "ppy": _run([bin_dir / "ppy", "softplus.ppy"], project),
        "ppy run": _run([bin_dir / "ppy", "run", "softplus.ppy"], project),
    }
    kept = {
        way: [line for line in _ok(done).splitlines() if not line.startswith("#")]
        for way, done in runs.items()
    }
    assert len(kept["python"]) == 3
    assert kept["ppy"] == kept["python"]
    assert kept["ppy run"] == kept["python"]
    assert "# fast path: no" in runs["python"].stdout
    assert "# fast path: yes" in runs["ppy"].stdout
    assert "# fast path: yes" in runs["ppy run"].stdout
    explain = _ok(_run([bin_dir / "ppy", "explain", "softplus.ppy"], project))
    assert "plugins: autograd" in explain
    assert "compiled by llvm" in explain


def test_its_own_tests_pass_in_the_fresh_venv(venv: Path) -> None:
    python = venv / "venv" / "bin" / "python"
    tests = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", PLUGIN / "tests"], venv)
    assert "passed" in _ok(tests)
    assert "failed" not in tests.stdout


NEVER_IMPORTED = """
import sys
from ppy_core.cli.app import main
for verb in (["explain", "softplus.ppy"], ["doctor"], ["softplus.ppy"]):
    main(verb)
print("IMPORTED" if any(m.startswith("ppy_autograd") for m in sys.modules) else "NEVER")
"""


def test_not_enabled_it_is_never_imported(venv: Path) -> None:
    project = _project(venv, "off", enabled=False)
    out = _ok(_run([venv / "venv" / "bin" / "python", "-c", NEVER_IMPORTED], project))
    assert out.rstrip().endswith("NEVER"), out
    assert "# fast path: no" in out  # without its plugin, autograd.numpy stays Python
