"""Shared fixtures: the toolchain check and one extension for all test regions."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))


def _toolchain_missing() -> str | None:
    from ppy_torch import toolchain_ready

    return toolchain_ready()


def _llvm_missing() -> str | None:
    import importlib.util

    for name in ("ppy_llvm", "llvmlite"):
        if importlib.util.find_spec(name) is None:
            return f"{name} is not installed"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    checks = {"needs_cc": _toolchain_missing, "needs_llvm": _llvm_missing}
    for marker, check in checks.items():
        missing = check() if any(marker in item.keywords for item in items) else None
        if missing:
            skip = pytest.mark.skip(reason=f"{marker}: {missing}")
            for item in items:
                if marker in item.keywords:
                    item.add_marker(skip)


@pytest.fixture(scope="session")
def compiled() -> dict[str, Any]:
    """Every function of tests/regions.py as a region, built once (a cached build after)."""
    import regions

    from ppy_torch import compile_functions

    built = compile_functions(regions.REGIONS)
    return {fn.__name__: region for fn, region in zip(regions.REGIONS, built, strict=True)}
