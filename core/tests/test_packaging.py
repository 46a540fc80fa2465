"""The users' `pip install ppy ppy-web`: wheels built from this tree, installed alone.

Builds the sdist and wheel of `ppy` and of one plugin distribution (ppy-web: small
libraries), then, in a fresh venv with nothing else: installs the `ppy` wheel and
runs `ppy doctor` (core alone), then adds the plugin's wheel and runs it again.
The wheels are given by path (and `--find-links`), so they cannot come from an
index; their libraries (pluggy, pydantic, uvicorn) come through pip's own config.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "packages" / "ppy-web"

pytestmark = pytest.mark.slow


def _run(*argv: str | Path, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, cwd=cwd, check=False, timeout=900
    )
    assert done.returncode == 0, f"{argv}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _build(source: Path, out: Path) -> tuple[Path, Path]:
    _run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", out, source)
    name = source.name.replace("-", "_") if source.name != "core" else "ppy"
    wheels = sorted(out.glob(f"{name}-*.whl"))
    sdists = sorted(out.glob(f"{name}-*.tar.gz"))
    assert len(wheels) == 1, wheels
    assert len(sdists) == 1, sdists
    return wheels[0], sdists[0]


@pytest.mark.skipif(importlib.util.find_spec("build") is None, reason="needs `build`")
@pytest.mark.skipif(not PLUGIN.is_dir(), reason="needs the ppy-web source tree")
def test_wheels_of_core_and_one_plugin_install_alone(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    core_wheel, _ = _build(ROOT / "core", dist)
    plugin_wheel, _ = _build(PLUGIN, dist)
    _run(sys.executable, "-m", "venv", tmp_path / "venv")
    bin_dir = tmp_path / "venv" / "bin"
    pip = (bin_dir / "python", "-m", "pip", "install", "--quiet", "--find-links", dist)

    _run(*pip, core_wheel)
    alone = json.loads(_run(bin_dir / "ppy", "doctor", "--json", "--strict", cwd=tmp_path))
    assert alone["entries"] == []
    assert alone["problems"] == []
    _run(
        bin_dir / "python",
        "-c",
        "import ppy, ppy_core.interface.discovery, ppy_core.cache.keys",
        cwd=tmp_path,
    )

    _run(*pip, plugin_wheel)
    report = json.loads(_run(bin_dir / "ppy", "doctor", "--json", "--strict", cwd=tmp_path))
    rows = {row["name"]: row for row in report["entries"]}
    assert set(rows) == {"pydantic", "uvicorn"}
    assert re.fullmatch(r"v1:pydantic=\d+\.\d+\.\d+\S*:core=\S+", rows["pydantic"]["fingerprint"])
    assert rows["uvicorn"]["fingerprint"].startswith("v1:uvicorn=")
    assert all(row["distribution"] == "ppy-web" for row in rows.values())
    installed = _run(bin_dir / "python", "-m", "pip", "list", "--format=json")
    names = {p["name"].lower() for p in json.loads(installed)}
    assert not names & {"numpy", "torch", "jax", "pyarrow", "pandas", "scipy", "ppy-numpy"}


DISTRIBUTIONS = sorted(
    p.parent.name
    for p in [*ROOT.glob("packages/*/pyproject.toml"), *ROOT.glob("backends/*/pyproject.toml")]
)


@pytest.mark.skipif(importlib.util.find_spec("build") is None, reason="needs `build`")
@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_every_distribution_builds_an_sdist_and_a_wheel(name: str, tmp_path: Path) -> None:
    """Each plugin and backend distribution builds both (without isolation: its build
    requirements are already in this environment; `make dist` builds them isolated)."""
    source = next(p.parent for p in ROOT.glob(f"*/{name}/pyproject.toml"))
    _run(
        sys.executable,
        "-m",
        "build",
        "--no-isolation",
        "--sdist",
        "--wheel",
        "--outdir",
        tmp_path,
        source,
    )
    stem = name.replace("-", "_")
    assert len(list(tmp_path.glob(f"{stem}-*.whl"))) == 1
    assert len(list(tmp_path.glob(f"{stem}-*.tar.gz"))) == 1
