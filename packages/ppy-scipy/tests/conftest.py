"""Fixtures of ppy-scipy's tests: one throwaway compile cache per session
(``PPY_CACHE_DIR``, inherited by subprocesses) and a project folder whose
``pyproject.toml`` names only the llvm backend; `fused` tests skip without a
kernel toolchain (llvmlite, the numpy adapter's extension, a C compiler)."""

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
    sys.path.append(str(HERE))  # _fused

_SAVED: dict[str, str | None] = {}
PYPROJECT = '[project]\nname = "scipy-tests"\n\n[tool.ppy]\nbackends = ["llvm"]\n'


def _toolchain_missing() -> str | None:
    for dist in ("ppy_numpy", "ppy_llvm"):  # the numpy adapter runs what llvm compiles
        if importlib.util.find_spec(dist) is None:
            return f"{dist} is not installed"
    if importlib.util.find_spec("llvmlite") is None:
        return "llvmlite is not installed"
    if importlib.util.find_spec("ppy_numpy._runtime._dispatch") is None:
        return "the ppy_numpy._runtime._dispatch extension is not built"
    if not (os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")):
        return "no C compiler to link kernels"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fused: needs the llvm backend and a C compiler")
    _SAVED["PPY_CACHE_DIR"] = os.environ.get("PPY_CACHE_DIR")
    os.environ["PPY_CACHE_DIR"] = tempfile.mkdtemp(prefix="ppy-scipy-tests-")


def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get("PPY_CACHE_DIR")
    if path and "ppy-scipy-tests-" in path:
        shutil.rmtree(path, ignore_errors=True)
    if _SAVED.get("PPY_CACHE_DIR") is None:
        os.environ.pop("PPY_CACHE_DIR", None)
    else:
        os.environ["PPY_CACHE_DIR"] = _SAVED["PPY_CACHE_DIR"]  # type: ignore[assignment]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    why = _toolchain_missing()
    for item in items:
        if why and item.get_closest_marker("fused") is not None:
            item.add_marker(pytest.mark.skip(reason=why))


@pytest.fixture(scope="session")
def project() -> Path:
    """A project folder for generated modules (inside the session's cache folder)."""
    root = Path(tempfile.mkdtemp(prefix="project-", dir=os.environ["PPY_CACHE_DIR"]))
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return root
