"""Workspace-wide pytest setup: markers skip themselves when what they need is missing.

`needs_cc` needs a C compiler, `needs_llvm` llvmlite, `gpu` an NVIDIA driver and GPU.
`slow` is not skipped here: `-m "not slow"` is the quick loop.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
from pathlib import Path

import pytest

# `pytester` (real pytest runs in tests, e.g. of ppy's pytest plugin): declared here,
# since pytest refuses `pytest_plugins` in a conftest.py below the root
pytest_plugins = ["pytester"]


@functools.cache
def _missing(marker: str) -> str | None:
    """Why tests marked `marker` cannot run here, or None."""
    if marker == "needs_cc":
        found = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        return None if found else "no C compiler (cc/gcc) found"
    if marker == "needs_llvm":
        return None if importlib.util.find_spec("llvmlite") else "llvmlite is not installed"
    if marker == "gpu":
        has_driver = Path("/proc/driver/nvidia/version").exists() or shutil.which("nvidia-smi")
        return None if has_driver else "no NVIDIA GPU/driver found"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for marker in ("needs_cc", "needs_llvm", "gpu"):
            if item.get_closest_marker(marker) is not None:
                reason = _missing(marker)
                if reason is not None:
                    item.add_marker(pytest.mark.skip(reason=reason))
