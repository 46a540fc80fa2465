"""What a plugin answers about lowering: typed specs a backend reads, never code."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class IntrinsicSpec:
    """Lower the call to a backend intrinsic named `name` (e.g. "fabs")."""

    name: str


@dataclass(frozen=True, slots=True)
class DialectOperationSpec:
    """Lower the call to the IR operation `op` (e.g. "linalg.dot") with attributes."""

    op: str
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DirectCallSpec:
    """Keep the call, but call `target` (a qualified name) directly, never fused."""

    target: str


@dataclass(frozen=True, slots=True)
class GraphRegionSpec:
    """Hand a whole function to `backend`; `graph` is the plugin's typed description
    of it (plain data the backend reads), `effects` what running it may do."""

    backend: str
    graph: Any
    effects: frozenset[str] = frozenset({"Pure"})


@dataclass(frozen=True, slots=True)
class FallbackSpec:
    """Stay Python; `reason` is what `ppy explain` shows."""

    reason: str


@dataclass(frozen=True, slots=True)
class RejectSpec:
    """The construct is wrong, not merely unsupported: report a coded error."""

    code: str
    message: str
    hint: str = ""


LoweringSpec = (
    IntrinsicSpec
    | DialectOperationSpec
    | DirectCallSpec
    | GraphRegionSpec
    | FallbackSpec
    | RejectSpec
)

__all__ = [
    "IntrinsicSpec",
    "DialectOperationSpec",
    "DirectCallSpec",
    "GraphRegionSpec",
    "FallbackSpec",
    "RejectSpec",
    "LoweringSpec",
]
