"""Fixtures of ppy-pandas's tests.

* One throwaway compile cache per test session (``PPY_CACHE_DIR``), so every run
  compiles from scratch and each generated module is compiled once.
* ``project``: a throwaway project folder (its ``pyproject.toml`` names only the
  ``llvm`` backend) where tests write the modules they compile.
* Tests marked ``needs_llvm`` are skipped where llvmlite or a C compiler is missing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ppy_core import testing

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))  # _pdcheck

PYPROJECT = '[project]\nname = "pandas-tests"\n\n[tool.ppy]\nbackends = ["llvm"]\n'
_RESTORE: list[Callable[[], None]] = []


def pytest_configure(config: pytest.Config) -> None:
    _RESTORE.append(testing.private_cache("ppy-pandas-tests-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    while _RESTORE:
        _RESTORE.pop()()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    why = testing.kernels_missing()
    for item in items:
        if why and item.get_closest_marker("needs_llvm") is not None:
            item.add_marker(pytest.mark.skip(reason=why))


@pytest.fixture(scope="session")
def project() -> Path:
    """A project folder for generated modules (inside the session's cache folder)."""
    return testing.project_folder(PYPROJECT)
