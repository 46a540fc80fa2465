"""Why a lookup missed: the per-source index and the wording of its answer.

Each store records, per `source_id`, the key it stored and the key's
components (`core`, `source`, `options`, `plugin:<name>`, `backend:<name>`,
`file:<path>`, ...) in `index/<sha256(source_id)>.json`. A later miss compares
the new components with the recorded ones.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ppy_core.cache.files import write_json_atomic


def index_path(index_dir: Path, source_id: str) -> Path:
    """Where the record for `source_id` lives."""
    digest = hashlib.sha256(source_id.encode("utf-8", "surrogatepass")).hexdigest()
    return index_dir / f"{digest[:40]}.json"


def record(index_dir: Path, source_id: str, key: str, components: Mapping[str, str]) -> None:
    """Remember that `source_id` was last stored under `key` with `components`."""
    data = {"source_id": source_id, "key": key, "components": dict(components)}
    with contextlib.suppress(OSError):
        write_json_atomic(index_path(index_dir, source_id), data)


def recorded(index_dir: Path, source_id: str) -> dict[str, Any] | None:
    """The record for `source_id`, or None if there is none (or it is unreadable)."""
    from ppy_core.runtime import jsontext  # bounded: the index may have been edited

    try:
        data = jsontext.read(index_path(index_dir, source_id), max_bytes=1 << 20)
    except (OSError, ValueError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("source_id") != source_id
        or not isinstance(data.get("components"), dict)
    ):
        return None
    return data


def _short(value: str) -> str:
    return value if len(value) <= 16 else value[:12] + "..."


def _changed(name: str, old: str, new: str) -> str:
    kind, _, rest = name.partition(":")
    if kind == "source" and not rest:
        return "source changed"
    if kind == "options" and not rest:
        return "options changed"
    if kind == "core" and not rest:
        return f"core version changed: {old} -> {new}"
    if kind == "file" and rest:
        return f"imported file {rest} changed"
    if kind in ("plugin", "backend") and rest:
        return f"{kind} {rest} fingerprint changed: {_short(old)} -> {_short(new)}"
    return f"{name} changed: {_short(old)} -> {_short(new)}"


def _appeared(name: str) -> str:
    kind, _, rest = name.partition(":")
    if kind == "file" and rest:
        return f"file {rest} is now imported"
    if kind in ("plugin", "backend") and rest:
        return f"{kind} {rest} is now used"
    return f"{name} is new"


def _vanished(name: str) -> str:
    kind, _, rest = name.partition(":")
    if kind == "file" and rest:
        return f"file {rest} is no longer imported"
    if kind in ("plugin", "backend") and rest:
        return f"{kind} {rest} is no longer used"
    return f"{name} is gone"


def differences(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """One phrase per component that differs, `source`/`options`/`core` first."""
    first = ("core", "source", "options")
    rank = {name: i for i, name in enumerate(first)}
    names = sorted(set(old) | set(new), key=lambda n: (rank.get(n, len(first)), n))
    phrases = []
    for name in names:
        if name not in old:
            phrases.append(_appeared(name))
        elif name not in new:
            phrases.append(_vanished(name))
        elif str(old[name]) != str(new[name]):
            phrases.append(_changed(name, str(old[name]), str(new[name])))
    return phrases


def explain(
    previous: Mapping[str, Any] | None, key: str, components: Mapping[str, str], entry_present: bool
) -> str:
    """The sentence `Cache.explain_miss` returns."""
    if previous is None:
        return "no entry for this file yet"
    if previous.get("key") == key:
        if entry_present:
            return "no miss: the entry for this key is present"
        return "the entry for this key was evicted, cleared or discarded as corrupt"
    phrases = differences(previous["components"], components)
    if not phrases:
        return "the key changed but none of its recorded components did"
    return "; ".join(phrases)
