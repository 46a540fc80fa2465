"""`ppy plugin new`: the written distribution installs, is discovered, passes the
contract kit, and stays disabled until a project enables it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ppy_core.cli.app import main
from ppy_core.cli.scaffold import new_distribution
from ppy_core.diagnostics import Error


def _library(root: Path) -> Path:
    """A stand-in library `vecmath` (core's tests install no real one)."""
    (root / "vecmath").mkdir(parents=True)
    (root / "vecmath" / "__init__.py").write_text('__version__ = "1.2.3"\n')
    return root


def _run(argv: list[str], cwd: Path, path: list[Path]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, path))}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("backend", [False, True], ids=["plugin", "backend"])
def test_written_distribution_installs_and_passes_the_contract_kit(
    tmp_path: Path, backend: bool
) -> None:
    root = new_distribution("vecmath", tmp_path, backend=backend)
    site, lib = tmp_path / "site", _library(tmp_path / "lib")
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    done = _run([*pip, "--target", str(site), str(root)], tmp_path, [])
    assert done.returncode == 0, done.stderr
    tests = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root / "tests")],
        tmp_path,
        [site, lib],
    )
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert "8 passed" in tests.stdout

    doctor = [sys.executable, "-m", "ppy_core.cli", "doctor", "--json"]
    rows = json.loads(_run(doctor, tmp_path, [site, lib]).stdout)["entries"]
    (row,) = [r for r in rows if r["name"] == "vecmath"]
    assert row["distribution"] == "ppy-vecmath"
    if backend:
        assert row["enabled"] is True  # every installed backend is; it lowers nothing yet
        return
    assert row["enabled"] is False
    assert "not enabled" in row["status"]

    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.ppy.plugins.vecmath]\nenabled = true\n")
    rows = json.loads(_run(doctor, project, [site, lib]).stdout)["entries"]
    (row,) = [r for r in rows if r["name"] == "vecmath"]
    assert row["enabled"] is True
    assert row["fingerprint"] == "v1:vecmath=1.2.3"


def test_bad_names_and_existing_folders_are_coded_errors(tmp_path: Path) -> None:
    for bad in ("Vec", "1x", "class", "a-b"):
        with pytest.raises(Error) as caught:
            new_distribution(bad, tmp_path)
        assert caught.value.diagnostic.code == "E0040"
    new_distribution("vecmath", tmp_path)
    with pytest.raises(Error) as caught:
        new_distribution("vecmath", tmp_path)
    assert caught.value.diagnostic.code == "E0041"


def test_cli_writes_into_the_output_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plugin", "new", "geo", "--module", "shapely", "-o", str(tmp_path)]) == 0
    written = tmp_path / "ppy-geo"
    assert "wrote" in capsys.readouterr().out
    plugin = (written / "ppy_geo" / "plugin.py").read_text()
    assert 'modules = ("shapely",)' in plugin
    assert "class GeoPlugin(Plugin)" in plugin
    assert main(["plugin", "new", "geo", "-o", str(tmp_path)]) == 2  # exists: E0041, nothing lost
    assert (written / "ppy_geo" / "plugin.py").read_text() == plugin
