"""Fixtures of ppy-numpy's tests.

* One throwaway compile cache per test session (``PPY_CACHE_DIR``, set before the
  first compile and inherited by subprocesses), so every run compiles from scratch
  and each test module compiles its generated source once.
* ``project``: a throwaway project folder (its ``pyproject.toml`` names only the
  ``llvm`` backend) where the tests write the modules they compile.
* ``PPY_VERIFY=1 pytest packages/ppy-numpy/tests`` runs the whole suite in shadow
  mode: the runtime reads ``PPY_VERIFY`` when a module's sites are bound, which here
  is after the session starts, so every fast-path call is also run as Python and
  compared (a difference raises ``ppy.VerifyError``).
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
    sys.path.append(str(HERE))  # _npharness, _exprtrees (appended: other suites' conftest first)

_SAVED: dict[str, str | None] = {}


def _runtime_missing() -> str | None:
    if importlib.util.find_spec("llvmlite") is None:
        return "llvmlite is not installed"
    if importlib.util.find_spec("ppy_numpy._runtime._dispatch") is None:
        return "the ppy_numpy._runtime._dispatch extension is not built"
    if not (os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")):
        return "no C compiler to link kernels"
    return None


def pytest_configure(config: pytest.Config) -> None:
    _SAVED["PPY_CACHE_DIR"] = os.environ.get("PPY_CACHE_DIR")
    os.environ["PPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="ppy-numpy-tests-")


def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get("PPY_CACHE_DIR")
    if path and "ppy-numpy-tests-" in path:
        shutil.rmtree(path, ignore_errors=True)
    if _SAVED.get("PPY_CACHE_DIR") is None:
        os.environ.pop("PPY_CACHE_DIR", None)
    else:
        os.environ["PPY_CACHE_DIR"] = _SAVED["PPY_CACHE_DIR"]  # type: ignore[assignment]


def pytest_report_header(config: pytest.Config) -> list[str]:
    from _npharness import verify_mode

    mode = "on: every fast call is checked against Python" if verify_mode() else "off"
    return [f"ppy-numpy: PPY_VERIFY {mode}; cache {os.environ.get('PPY_CACHE_DIR')}"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    why = _runtime_missing()
    for item in items:
        if why and item.get_closest_marker("needs_llvm") is not None:
            item.add_marker(pytest.mark.skip(reason=why))


@pytest.fixture(scope="session")
def project() -> Path:
    """A project folder for generated modules (inside the session's cache folder)."""
    from _npharness import PYPROJECT

    root = Path(tempfile.mkdtemp(prefix="project-", dir=os.environ["PPY_CACHE_DIR"]))
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def proven() -> dict[str, str]:
    """The llvm backend's verdict per NumPy loop function on this NumPy build and CPU."""
    from ppy_llvm._proof import proven as _proven

    return _proven("numpy")
