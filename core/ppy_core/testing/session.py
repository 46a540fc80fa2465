"""Session set-up a distribution's `conftest.py` shares: a throwaway compile cache for
the test session, a project folder for generated modules, and whether fused kernels
can be built here. Re-exported by `ppy_core.testing` (the package); imports neither pytest nor any
library."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def private_cache(prefix: str) -> Callable[[], None]:
    """Point `PPY_CACHE_DIR` at a fresh folder (so a run compiles from scratch); the
    returned function removes it and restores what was there."""
    saved = os.environ.get("PPY_CACHE_DIR")
    folder = tempfile.mkdtemp(prefix=prefix)
    os.environ["PPY_CACHE_DIR"] = folder

    def restore() -> None:
        shutil.rmtree(folder, ignore_errors=True)
        if saved is None:
            os.environ.pop("PPY_CACHE_DIR", None)
        else:
            os.environ["PPY_CACHE_DIR"] = saved

    return restore


def project_folder(pyproject: str) -> Path:
    """A project folder inside the session's cache, its `pyproject.toml` = `pyproject`."""
    root = Path(tempfile.mkdtemp(prefix="project-", dir=os.environ.get("PPY_CACHE_DIR")))
    (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return root


def kernels_missing() -> str | None:
    """Why ppy-llvm cannot build kernels here (None: it can)."""
    if importlib.util.find_spec("llvmlite") is None or importlib.util.find_spec("ppy_llvm") is None:
        return "llvmlite or ppy-llvm is not installed"
    if not (os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")):
        return "no C compiler to link kernels"
    return None


__all__ = ["private_cache", "project_folder", "kernels_missing"]
