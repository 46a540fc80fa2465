"""Diagnostic codes of the torch plugin and the aten backend, declared once.

The codes live in DESIGN's ranges. Those the core already declares are reused
(E1010 a pure function writes memory, E2002 a build failed, E2003 a toolchain is
missing, E3002 a lock could not be taken, E3003/E3004 artifact problems); the
torch-specific ones are added to the core's table when the plugin is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from ppy_core.diagnostics import CODES, BackendError, Error

TORCH_CODES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "E1210": "a torch function cannot be an ATen region",  # the fallback reason, as a note
        "E2210": "an ATen region extension failed to load",
    }
)

PURE_WRITES: Final = "E1010"
BUILD_FAILED: Final = "E2002"
TOOLCHAIN_MISSING: Final = "E2003"
OTHER_BUILD: Final = "E3003"
MISSING_PIECE: Final = "E3004"


def register_codes() -> None:
    """Declare the torch codes in the core's table (idempotent)."""
    for code, text in TORCH_CODES.items():
        CODES.setdefault(code, text)


class RegionError(Error):
    """A region was refused for a reason the user must fix (e.g. E1010)."""

    code = PURE_WRITES


class RegionBuildError(BackendError):
    """The aten backend could not build a module's regions (E2002) or has no toolchain (E2003)."""

    code = BUILD_FAILED


class RegionWarning(UserWarning):
    """A region is not used: the Python body runs (the message says why, with a code)."""


__all__ = [
    "TORCH_CODES",
    "register_codes",
    "RegionError",
    "RegionBuildError",
    "RegionWarning",
    "PURE_WRITES",
    "BUILD_FAILED",
    "TOOLCHAIN_MISSING",
    "OTHER_BUILD",
    "MISSING_PIECE",
]
