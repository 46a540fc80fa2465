"""The kernel ABI's build-side records: a kernel's signature, a compiled kernel, a
proof case (see `ppy_core.runtime.abi` for the contract they describe).

Dataclasses, so a backend can `dataclasses.replace` them; `abi` re-exports them
lazily, so a cached start (which reads a unit with `abi.KernelUnit`) never pays for
`dataclasses` or `json`. Imports no compiler code and no library.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ppy_core.runtime.abi import ABI_VERSION, check_signature

#: a proof's reference expression: a leaf index (int), a constant (float), or
#: (op, *operands) with op "add"/"mul" (the library's elementwise operators),
#: "sum"/"prod" (its reductions), or the name of one of the kernel's loops
Expression = int | float | tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class KernelSignature:
    """What an adapter needs to call a kernel: result kind, leaf kinds, library loops.

    `nan_ok`: a NaN result of a serial reduction has the library's own NaN bits (a
    proof showed it on this build), so it may stand; otherwise the library recomputes."""

    kind: str
    leaves: str
    loops: tuple[tuple[str, str], ...] = ()
    nan_ok: bool = False

    def __post_init__(self) -> None:
        check_signature(self.kind, self.leaves, self.loops)

    def to_dict(self) -> dict[str, Any]:
        """Manifest form (JSON-serializable)."""
        return {
            "kind": self.kind,
            "leaves": self.leaves,
            "loops": [list(loop) for loop in self.loops],
            "nan_ok": self.nan_ok,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KernelSignature:
        """Inverse of `to_dict`; ValueError (KeyError, TypeError) when malformed."""
        return cls(
            str(data["kind"]),
            str(data["leaves"]),
            tuple((str(name), str(sig)) for name, sig in data.get("loops", ())),
            bool(data.get("nan_ok", False)),
        )

    def to_json(self) -> str:
        """`to_dict` as canonical JSON text."""
        import json

        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> KernelSignature:
        """Inverse of `to_json`."""
        import json

        return cls.from_dict(json.loads(text))


@dataclass(frozen=True, slots=True)
class CompiledKernel:
    """One kernel in a shared library: path, symbol, signature, its backend's fingerprint."""

    path: str
    symbol: str
    signature: KernelSignature
    fingerprint: str

    def unit_data(self) -> dict[str, Any]:
        """What a manifest records for the kernel (its file goes in the unit's files)."""
        return {
            "abi": ABI_VERSION,
            "symbol": self.symbol,
            "signature": self.signature.to_dict(),
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_unit(cls, data: Mapping[str, Any], path: str | Path) -> CompiledKernel:
        """Inverse of `unit_data`, the library at `path`; ValueError when malformed."""
        if data.get("abi") != ABI_VERSION:
            raise ValueError(f"kernel ABI {data.get('abi')!r}, this runtime reads {ABI_VERSION}")
        return cls(
            str(path),
            str(data["symbol"]),
            KernelSignature.from_dict(data["signature"]),
            str(data.get("fingerprint", "")),
        )


@dataclass(frozen=True, slots=True)
class ProofCase:
    """One experiment of a proof: `kernel` must give the bits of `expression` computed
    by the library itself. `inputs` says what to feed it: "wide" (magnitudes over the
    exponent range, special values, many lengths and offsets), "nan" (NaN-laden
    data: whether a reduction's NaN result has the library's bits) or "dense" (some
    millions of values over a one-input function's whole domain and its edges, bits
    and FP flags: for a backend's own implementation of a library function). Cases
    sharing a `name` share one verdict."""

    name: str
    expression: Expression
    kernel: CompiledKernel
    inputs: str = "wide"


__all__ = ["CompiledKernel", "Expression", "KernelSignature", "ProofCase"]
