"""Contract of ppy-jax: entry points, names, claims, fingerprints, lazy imports."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from ppy_core.backends import Backend
from ppy_core.discovery import FIRST_PARTY, FIRST_PARTY_BACKENDS, discover, normalize
from ppy_core.plugins import Plugin

DIST = Path(__file__).resolve().parents[1]
CORE = DIST.parents[1] / "core"
PACKAGE = "ppy_jax"
# (group, entry point name, fingerprint pattern)
ENTRIES: list[tuple[str, str, str]] = [
    (
        "plugins",
        "jax",
        "v1:jax=\\d+\\.\\d+\\.\\d+\\S*:jaxlib=\\S+:platform=\\w+:flax=\\S+:optax=\\S+",
    ),
    (
        "backends",
        "stablehlo",
        "v1:jax=\\d+\\.\\d+\\.\\d+\\S*:jaxlib=\\S+:cc=(\\d+-\\d+|none):platform=\\w+",
    ),
]
# importing the package and creating its plugins/backends must import none of these
LIBRARIES: tuple[str, ...] = ("jax", "jaxlib", "flax", "optax", "numpy")


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((DIST / "pyproject.toml").read_text(encoding="utf-8"))


def _create(group: str, name: str) -> Any:
    value = _pyproject()["project"]["entry-points"][f"ppy.{group}"][name]
    module, _, attr = value.partition(":")
    return getattr(importlib.import_module(module), attr)()


def _python(code: str) -> str:
    """Run `code` in a fresh interpreter that finds this distribution and core."""
    path = os.pathsep.join([str(DIST), str(CORE), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_entry_points_are_exactly_these() -> None:
    declared = {
        (group.removeprefix("ppy."), name)
        for group, table in _pyproject()["project"]["entry-points"].items()
        for name in table
    }
    assert declared == {(group, name) for group, name, _ in ENTRIES}


@pytest.mark.parametrize(("group", "name", "pattern"), ENTRIES)
def test_entry_point_creates_what_it_names(group: str, name: str, pattern: str) -> None:
    thing = _create(group, name)
    assert thing.name == name
    assert thing.interface == 2
    if group == "plugins":
        assert isinstance(thing, Plugin)
        assert thing.modules == FIRST_PARTY[name].modules
        assert normalize(_pyproject()["project"]["name"]) == FIRST_PARTY[name].distribution
    else:
        assert isinstance(thing, Backend)
        assert normalize(_pyproject()["project"]["name"]) == FIRST_PARTY_BACKENDS[name].distribution


def test_importing_the_package_imports_no_library() -> None:
    creators = [v for t in _pyproject()["project"]["entry-points"].values() for v in t.values()]
    code = (
        "import importlib, json, sys\n"
        f"for value in {creators!r}:\n"
        "    module, _, attr = value.partition(':')\n"
        "    thing = getattr(importlib.import_module(module), attr)()\n"
        "    thing.name, getattr(thing, 'modules', ())\n"
        f"print(json.dumps(sorted(m for m in {LIBRARIES!r} if m in sys.modules)))\n"
    )
    assert json.loads(_python(code)) == []


@pytest.mark.parametrize(("group", "name", "pattern"), ENTRIES)
def test_fingerprint_names_the_build_found(group: str, name: str, pattern: str) -> None:
    pytest.importorskip("jax")
    fingerprint = _create(group, name).fingerprint()
    assert re.fullmatch(pattern, fingerprint), fingerprint
    assert _create(group, name).fingerprint() == fingerprint
    code = (
        "import importlib\n"
        f"module, _, attr = {_pyproject()['project']['entry-points'][f'ppy.{group}'][name]!r}"
        ".partition(':')\n"
        "print(getattr(importlib.import_module(module), attr)().fingerprint())\n"
    )
    assert _python(code).strip() == fingerprint, "the fingerprint differs between processes"


@pytest.mark.parametrize(("group", "name", "pattern"), ENTRIES)
def test_detected_is_text(group: str, name: str, pattern: str) -> None:
    detected = _create(group, name).detected()
    assert detected
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in detected.items())


@pytest.mark.parametrize(("group", "name", "pattern"), ENTRIES)
def test_installed_metadata_is_discovered_as_first_party(
    group: str, name: str, pattern: str
) -> None:
    found = discover(refresh=True)
    entry = (found.plugins if group == "plugins" else found.backends).get(name)
    if entry is None:
        pytest.skip(f"{DIST.name} is not installed in this environment")
    assert entry.first_party
    assert normalize(entry.distribution) == normalize(_pyproject()["project"]["name"])
    assert entry.value == _pyproject()["project"]["entry-points"][f"ppy.{group}"][name]


@pytest.mark.parametrize(("group", "name", "pattern"), ENTRIES)
def test_fingerprint_without_the_library_says_none(group: str, name: str, pattern: str) -> None:
    blocked = "".join(f"sys.modules[{m!r}] = None\n" for m in ("jax",))
    code = (
        f"import importlib, sys\n{blocked}"
        f"module, _, attr = {_pyproject()['project']['entry-points'][f'ppy.{group}'][name]!r}"
        ".partition(':')\n"
        "print(getattr(importlib.import_module(module), attr)().fingerprint())\n"
    )
    fingerprint = _python(code).strip()
    assert re.fullmatch(r"v1:\w+=none", fingerprint), fingerprint


def test_stablehlo_lowers_nothing_yet_and_says_so() -> None:
    from ppy_core.diagnostics import BackendError

    backend = _create("backends", "stablehlo")
    assert "does not lower yet" in (backend.can_lower(None) or "")  # type: ignore[arg-type]
    with pytest.raises(BackendError) as raised:
        backend.lower(None, None)  # type: ignore[arg-type]
    assert raised.value.code == "E2001"
