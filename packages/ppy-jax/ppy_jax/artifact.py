"""The bytes of one exported JAX function: the portable export, and maybe an executable.

    b"PPYJAX1\\n" + u32 header length + JSON header + exported + executable

The header names the function, the backend fingerprint the executable was
compiled under, and the two blobs' lengths. The portable export (`jax.export`'s
serialization) runs on any jaxlib whose calling conventions include its own; the
executable only under the exact fingerprint it was built for. Imports no JAX.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Final

MAGIC: Final = b"PPYJAX1\n"


class ArtifactFormatError(ValueError):
    """The bytes are not a ppy-jax artifact (truncated, another format, another version)."""


@dataclass(frozen=True, slots=True)
class Artifact:
    """One exported function: `exported` (portable), `executable` (b"": none stored)."""

    function: str
    fingerprint: str
    exported: bytes
    executable: bytes = b""

    def pack(self) -> bytes:
        header = json.dumps(
            {
                "function": self.function,
                "fingerprint": self.fingerprint,
                "exported": len(self.exported),
                "executable": len(self.executable),
            }
        ).encode("utf-8")
        return MAGIC + struct.pack("<I", len(header)) + header + self.exported + self.executable

    @classmethod
    def unpack(cls, data: bytes) -> Artifact:
        if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
            raise ArtifactFormatError("not a ppy-jax artifact (no PPYJAX1 header)")
        start = len(MAGIC) + 4
        (size,) = struct.unpack("<I", data[len(MAGIC) : start])
        try:
            header = json.loads(data[start : start + size].decode("utf-8"))
            n_exported, n_executable = int(header["exported"]), int(header["executable"])
            body = start + size
            if len(data) != body + n_exported + n_executable:
                raise ArtifactFormatError("the artifact is truncated or has trailing bytes")
            return cls(
                function=str(header["function"]),
                fingerprint=str(header["fingerprint"]),
                exported=data[body : body + n_exported],
                executable=data[body + n_exported :],
            )
        except (KeyError, TypeError, ValueError, UnicodeDecodeError) as exc:
            if isinstance(exc, ArtifactFormatError):
                raise
            raise ArtifactFormatError(f"the artifact's header is invalid ({exc})") from None


__all__ = ["MAGIC", "Artifact", "ArtifactFormatError"]
