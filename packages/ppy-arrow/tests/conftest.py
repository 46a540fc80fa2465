"""Fixtures of ppy-arrow's tests.

* One throwaway compile cache per test session (``PPY_CACHE_DIR``), so every run
  compiles from scratch and each generated module is compiled once.
* ``project``: a throwaway project folder (its ``pyproject.toml`` names only the
  ``llvm`` backend) where tests write the modules they compile.
* Tests marked ``needs_llvm`` are skipped where llvmlite or a C compiler is missing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))  # _trees, _arrowcheck

_SAVED: dict[str, str | None] = {}
PYPROJECT = '[project]\nname = "arrow-tests"\n\n[tool.ppy]\nbackends = ["llvm"]\n'


def _missing() -> str | None:
    if importlib.util.find_spec("llvmlite") is None or importlib.util.find_spec("ppy_llvm") is None:
        return "llvmlite or ppy-llvm is not installed"
    if not (os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")):
        return "no C compiler to link kernels"
    return None


def pytest_configure(config: pytest.Config) -> None:
    _SAVED["PPY_CACHE_DIR"] = os.environ.get("PPY_CACHE_DIR")
    os.environ["PPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="ppy-arrow-tests-")


def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get("PPY_CACHE_DIR")
    if path and "ppy-arrow-tests-" in path:
        shutil.rmtree(path, ignore_errors=True)
    if _SAVED.get("PPY_CACHE_DIR") is None:
        os.environ.pop("PPY_CACHE_DIR", None)
    else:
        os.environ["PPY_CACHE_DIR"] = _SAVED["PPY_CACHE_DIR"]  # type: ignore[assignment]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    why = _missing()
    for item in items:
        if why and item.get_closest_marker("needs_llvm") is not None:
            item.add_marker(pytest.mark.skip(reason=why))


@pytest.fixture(scope="session")
def project() -> Path:
    """A project folder for generated modules (inside the session's cache folder)."""
    root = Path(tempfile.mkdtemp(prefix="project-", dir=os.environ["PPY_CACHE_DIR"]))
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return root
