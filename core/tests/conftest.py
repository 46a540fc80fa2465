"""Fixtures of core's tests: throwaway plugin distributions with real entry-point metadata.

`fake_dists(tmp_path)` writes `*.dist-info` folders (METADATA + entry_points.txt)
and their packages into a folder; `python_in(folder, code)` runs code in a fresh
interpreter with that folder on PYTHONPATH (and as the working directory), so
`importlib.metadata` finds the distributions as it finds installed ones, and
`sys.modules` tells what was imported; `ppy_in(site, project, *args)` runs the `ppy`
command the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

CORE = Path(__file__).resolve().parents[1]

PLUGIN_SOURCE = """\
from ppy_core.interface.plugin import Plugin

class {cls}(Plugin):
    name = {name!r}
    modules = {modules!r}
    interface = {interface!r}

    def fingerprint(self):
        return "v1:{name}=1.0"

    def detected(self):
        return {{"{name}": "1.0 (fake)"}}

def create_plugin():
    return {cls}()
"""

BACKEND_SOURCE = """\
from ppy_core.interface.backend import Backend

class FakeBackend(Backend):
    name = {name!r}

    def fingerprint(self):
        return "v1:{name}"

def create_backend():
    return FakeBackend()
"""


def write_dist(
    root: Path,
    dist: str,
    entry_points: Mapping[str, Mapping[str, str]],
    files: Mapping[str, str],
    version: str = "1.0",
) -> None:
    """A distribution `dist` in `root`: its dist-info and its files (path -> source)."""
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = []
    for group, entries in entry_points.items():
        lines.append(f"[{group}]")
        lines.extend(f"{name} = {value}" for name, value in entries.items())
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")


def plugin_dist(
    root: Path,
    dist: str,
    name: str,
    modules: tuple[str, ...],
    *,
    interface: int = 2,
    package: str | None = None,
) -> str:
    """A plugin distribution; returns its import package's name."""
    package = package or f"{name}_plugin"
    source = PLUGIN_SOURCE.format(
        cls=f"{name.capitalize()}Plugin", name=name, modules=modules, interface=interface
    )
    write_dist(
        root,
        dist,
        {"ppy.plugins": {name: f"{package}:create_plugin"}},
        {f"{package}/__init__.py": source},
    )
    return package


@pytest.fixture
def fake_dists(tmp_path: Path) -> Path:
    """A folder of throwaway distributions covering every discovery case."""
    root = tmp_path / "site"
    plugin_dist(root, "foo-ppy", "foo", ("foolib",))
    plugin_dist(root, "old-ppy", "old", ("oldlib",), interface=1)
    plugin_dist(root, "rival-a", "rivala", ("sharedlib", "alib"))
    plugin_dist(root, "rival-b", "rivalb", ("sharedlib",))
    # first-party by its distribution's name; a package name that is not the real one
    plugin_dist(root, "ppy-numpy", "numpy", ("numpy",), package="fake_ppy_numpy")
    write_dist(
        root,
        "broken-ppy",
        {"ppy.plugins": {"broken": "broken_plugin:create_plugin"}},
        {"broken_plugin/__init__.py": "raise RuntimeError('this plugin is broken')\n"},
    )
    write_dist(
        root,
        "fast-backend",
        {"ppy.backends": {"fast": "fast_backend:create_backend"}},
        {"fast_backend/__init__.py": BACKEND_SOURCE.format(name="fast")},
    )
    return root


def pyproject(folder: Path, text: str) -> Path:
    """Write `folder/pyproject.toml` with `text` (dedented); return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def run_python(folder: Path, code: str, *args: str, cwd: Path | None = None) -> Any:
    """Run `code` with `folder` first on the path; it prints JSON, which is returned."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(folder), str(CORE), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or folder,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_ppy(site: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`ppy ARGS` in a fresh interpreter, in `project`, with the distributions of `site`
    on the path and the cache inside `project` (returned whatever the exit status)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(CORE), os.environ.get("PYTHONPATH", "")]),
        "PPY_CACHE_DIR": str(project / ".ppy-cache"),
    }
    env.pop("PPY_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "ppy_core.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        check=False,
    )


@pytest.fixture
def ppy_in() -> Callable[..., subprocess.CompletedProcess[str]]:
    """`ppy_in(site, project, *args)`: see run_ppy."""
    return run_ppy


@pytest.fixture
def python_in() -> Callable[..., Any]:
    """`python_in(folder, code, *args)`: see run_python."""
    return run_python


@pytest.fixture
def make_pyproject() -> Callable[[Path, str], Path]:
    """`make_pyproject(folder, text)`: see pyproject."""
    return pyproject


@pytest.fixture
def dist_writers() -> tuple[Callable[..., None], Callable[..., str]]:
    """(write_dist, plugin_dist), for tests that lay out their own distributions."""
    return write_dist, plugin_dist
