"""A module manifest's run view: what a start reads of it, in `marshal`'s format.

A module's `manifest.json` holds, beside what the runtime binds, what `ppy explain`
and the tests read: each site's IR before and after the passes, the reasons it
stayed Python, the module's remarks. For a module of a thousand functions that is
megabytes of JSON (~20 ms to parse on every start, issue 32 item 6). The build
writes beside it `manifest.run`: the same manifest without those parts, each
site's unit shared with the sites naming the same kernel (marshal writes a shared
object once and reads it back once), and the sha256 of the `manifest.json` it was
made from.

A start reads the run view only when both files passed their checks and the view
names the sha256 recorded for this very `manifest.json` (`integrity.recorded`):
an edited manifest, rehashed where its hashes are recorded, is read as JSON, so
its checks (`artifact.check_module`) see the edit. The view is bounded as every
metadata reader is: its size, its depth (shared objects are walked once), the
types the runtime reads; anything else and the start reads `manifest.json`.

Runtime-safe and light: `marshal` and `os`; `json`/`hashlib` only when writing.
"""

from __future__ import annotations

import marshal
import os

from ppy_core.runtime import integrity, jsontext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

NAME = "manifest.run"
FORMAT = 1
#: what only `ppy explain` and the tests read: left out of the view
SITE_ONLY_EXPLAINED = frozenset({"ir", "ir_final", "reasons", "leaves"})
MODULE_ONLY_EXPLAINED = frozenset({"remarks", "diagnostics"})
#: the largest view read (a thousand sites make ~0.5 MB)
MAX_BYTES = 64 << 20


def view(manifest: dict[str, Any]) -> dict[str, Any]:
    """`manifest` without what only explaining reads; equal units are one object."""
    import json

    units: dict[str, Any] = {}

    def shared(record: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in record.items() if k not in SITE_ONLY_EXPLAINED}
        unit = out.get("unit")
        if isinstance(unit, dict):
            out["unit"] = units.setdefault(json.dumps(unit, sort_keys=True), unit)
        return out

    out = {k: v for k, v in manifest.items() if k not in MODULE_ONLY_EXPLAINED}
    for kind in ("expr_sites", "function_sites"):
        if isinstance(out.get(kind), list):
            out[kind] = [shared(r) if isinstance(r, dict) else r for r in out[kind]]
    return out


def write(folder: Path, manifest: dict[str, Any], raw: bytes) -> None:
    """Write the view of `manifest` (whose JSON is `raw`, as written) into `folder`."""
    import hashlib
    import tempfile

    data = {"format": FORMAT, "source": hashlib.sha256(raw).hexdigest(), "view": view(manifest)}
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".manifest-run-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(marshal.dumps(data))
    os.replace(tmp, folder / NAME)


def read(directory: Path) -> dict[str, Any] | None:
    """The run view of `directory`'s manifest, when it may stand for it (see the module
    docstring); None: read `manifest.json`."""
    from ppy_core.runtime.artifact import check_module

    source = integrity.recorded(directory / "manifest.json")
    if source is None or integrity.changed(directory, [NAME, "manifest.json"]) is not None:
        return None
    try:
        with open(directory / NAME, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            return None
        data = marshal.loads(raw)
    except (OSError, ValueError, EOFError, TypeError, RecursionError, MemoryError):
        return None
    if not (
        type(data) is dict
        and data.get("format") == FORMAT
        and data.get("source") == source
        and type(data.get("view")) is dict
    ):
        return None
    found = data["view"]
    if jsontext.depth(found) > jsontext.MAX_DEPTH or check_module(found):
        return None
    return found  # type: ignore[no-any-return]


__all__ = ["NAME", "read", "view", "write"]
