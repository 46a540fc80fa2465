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

#: effects that end an expression site and keep a function from being a region
BARRIER_EFFECTS: frozenset[str] = frozenset({"WriteMemory", "IO", "Callback"})

#: the spec kinds that travel on an op to a backend, by the name a backend reads
OP_SPEC_KINDS: Mapping[type, str] = {
    IntrinsicSpec: "intrinsic",
    DirectCallSpec: "direct_call",
    DialectOperationSpec: "dialect_operation",
}
LOWERING_ATTRIBUTE = "lowering"  # the op attribute holding an op's spec


def spec_kind(spec: object) -> str:
    """The kind name a backend reads ("intrinsic", ...), or another spec's class name."""
    return OP_SPEC_KINDS.get(type(spec), type(spec).__name__)


def spec_attribute(spec: IntrinsicSpec | DirectCallSpec | DialectOperationSpec) -> dict[str, Any]:
    """The spec as a plain IR attribute value (printable, compared by CSE)."""
    if isinstance(spec, IntrinsicSpec):
        return {"kind": "intrinsic", "name": spec.name}
    if isinstance(spec, DirectCallSpec):
        return {"kind": "direct_call", "target": spec.target}
    return {"kind": "dialect_operation", "op": spec.op, "attributes": dict(spec.attributes)}


def spec_of(attribute: Mapping[str, Any]) -> IntrinsicSpec | DirectCallSpec | DialectOperationSpec:
    """The typed spec of an op's `lowering` attribute (the inverse of spec_attribute)."""
    kind = attribute.get("kind")
    if kind == "intrinsic":
        return IntrinsicSpec(str(attribute["name"]))
    if kind == "direct_call":
        return DirectCallSpec(str(attribute["target"]))
    if kind == "dialect_operation":
        return DialectOperationSpec(str(attribute["op"]), dict(attribute.get("attributes", {})))
    raise ValueError(f"no lowering spec of kind {kind!r}")


__all__ = [
    "BARRIER_EFFECTS",
    "OP_SPEC_KINDS",
    "LOWERING_ATTRIBUTE",
    "spec_kind",
    "spec_attribute",
    "spec_of",
    "IntrinsicSpec",
    "DialectOperationSpec",
    "DirectCallSpec",
    "GraphRegionSpec",
    "FallbackSpec",
    "RejectSpec",
    "LoweringSpec",
]
