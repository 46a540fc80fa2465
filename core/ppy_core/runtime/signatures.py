"""Signatures: what a call says of its arguments, and the records of those seen.

A signature describes each argument as a hashable, JSON-able tuple: Python's
scalars and None by the core (``("int",)``, ``("float",)``), a library's objects by
that library's runtime adapter (`RuntimeAdapter.describer`: a NumPy array as
``("array", "numpy", "numpy.ndarray", "f64", 2, "C", True)``), anything else by its
exact class (``("object", "module.Class")``, typed Unknown). `typing_part` is what the
compiler types from; `spec_id` keys a specialization in the cache and in artifacts.
Records (`record`, `recorded`) keep, per module, the signatures its functions were
called with, for the next build (`runtime.observed` uses all of this).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

LIMIT = 8  # specializations a function keeps (and signatures recorded for it)
RECORDS = "observed"  # the cache root's folder of recorded signatures
_MAX_RECORD_BYTES = 1 << 20


_SCALARS: dict[type, tuple[str, ...]] = {
    int: ("int",),
    float: ("float",),
    bool: ("bool",),
    complex: ("complex",),
    type(None): ("None",),
}
_DESCRIBERS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
#: classes whose every object is described alike (scalars, objects typed by class):
#: a signature of only those is known from the arguments' classes alone
BY_CLASS: set[type] = set()


class _Missing:
    """An attribute a method reads that the instance's `__dict__` does not hold."""


MISSING = _Missing()
_SCALARS[_Missing] = ("missing",)
BY_CLASS.update(_SCALARS)


def describe(value: Any) -> tuple[Any, ...]:
    """What a signature says of one argument (a hashable, JSON-able tuple)."""
    cls = type(value)
    found = _SCALARS.get(cls)
    if found is not None:
        return found
    describer = _DESCRIBERS.get(cls)
    if describer is None:
        describer = _DESCRIBERS[cls] = _describer_for(cls)
    return describer(value)


def _describer_for(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """The adapter of the class's library describes its objects; any other object is
    its exact class (typed Unknown: the generic function answers for it)."""
    # a user's subclass of a library's class (an nn.Module) is its library's to describe
    libraries = dict.fromkeys(
        (getattr(c, "__module__", "") or "").partition(".")[0] for c in cls.__mro__[:-1]
    )
    for library in libraries:
        if not library or library == "builtins":  # a list, a str: no library's (and no
            continue  # metadata scan, `adapter.registry`, on a cached start to learn it)
        from ppy_core.runtime import adapter

        try:
            found = adapter.adapter(library).describer(cls) if adapter.registered(library) else None
        except LookupError:
            found = None
        if isinstance(found, tuple):  # every object of the class is described alike
            BY_CLASS.add(cls)
            return lambda _value, token=found: token
        if found is not None:
            return found
    token = ("object", f"{getattr(cls, '__module__', '?')}.{cls.__qualname__}")
    BY_CLASS.add(cls)
    return lambda _value: token


def typing_part(signature: tuple[tuple[Any, ...], ...]) -> tuple[tuple[Any, ...], ...]:
    """What the compiler types from (an array's library, class, element kind and
    rank): signatures that differ only in layout or writeability share one
    specialization, whose sites guard those per call as any site does."""
    return tuple(d[:5] if d[0] == "array" else d for d in signature)


def typed(signature: tuple[tuple[Any, ...], ...]) -> bool:
    """Whether a signature says anything the compiler can type (not only objects)."""
    return any(d[0] not in ("object", "complex", "missing") for d in signature)


def spec_id(module_key: str, qualname: str, signature: tuple[tuple[Any, ...], ...]) -> str:
    """The cache key (and artifact folder name) of one specialization."""
    import hashlib
    import json

    text = json.dumps([module_key, qualname, signature], separators=(",", ":"))
    return "s" + hashlib.sha256(text.encode()).hexdigest()[:40]


def signature_text(signature: tuple[tuple[Any, ...], ...]) -> str:
    """A signature as `ppy explain` shows it: `f64[2-D, C], float, None`."""
    parts = []
    for d in signature:
        if d[0] == "array":
            layout = f", {d[5]}{'' if d[6] else ', read-only'}" if len(d) >= 7 else ""
            parts.append(f"{d[1]} {d[3]}[{d[4]}-D{layout}]")
        elif d[0] == "object":
            parts.append(str(d[1]))
        else:
            parts.append(" ".join(str(x) for x in d))
    return ", ".join(parts)


# -- records of signatures seen without a compiler ----------------------------------


def records_path(source: str) -> Path:
    import hashlib

    from ppy_core.cache.records import project_root

    digest = hashlib.sha256(os.path.realpath(source).encode()).hexdigest()[:24]
    return project_root(source) / RECORDS / f"{digest}.json"


def recorded(source: str) -> dict[str, list[tuple[tuple[Any, ...], ...]]]:
    """qualname -> the signatures recorded for the module at `source` (bounded read;
    anything malformed reads as nothing recorded)."""
    path = records_path(source)
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_RECORD_BYTES + 1)
    except OSError:
        return {}
    if len(data) > _MAX_RECORD_BYTES:
        return {}
    from ppy_core.runtime import jsontext

    try:
        raw = jsontext.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return {}
    out: dict[str, list[tuple[tuple[Any, ...], ...]]] = {}
    if not isinstance(raw, dict) or not isinstance(raw.get("functions"), dict):
        return {}
    for name, signatures in raw["functions"].items():
        if isinstance(name, str) and isinstance(signatures, list):
            good = [_signature(s) for s in signatures[:LIMIT]]
            out[name] = [s for s in good if s is not None]
    return out


def _signature(raw: Any) -> tuple[tuple[Any, ...], ...] | None:
    if not isinstance(raw, list) or len(raw) > 64:
        return None
    items = []
    for d in raw:
        if not isinstance(d, list) or not d or len(d) > 16:
            return None
        if not all(isinstance(x, str | int | bool) for x in d):
            return None
        items.append(tuple(d))
    return tuple(items)


def record(source: str, qualname: str, signature: tuple[tuple[Any, ...], ...]) -> None:
    """Add a signature to the module's records (under the records' lock); a record
    that cannot be written costs nothing but the next build's specialization."""
    import json

    from ppy_core.cache.lock import build_lock
    from ppy_core.cache.trust import private_dir

    if signature in recorded(source).get(qualname, ()):
        return  # the usual case after the first run: no lock, no write
    path = records_path(source)
    try:
        private_dir(path.parent)
        with build_lock(path.with_suffix(".lock"), wait=10.0):
            functions = recorded(source)
            known = functions.setdefault(qualname, [])
            if signature in known or len(known) >= LIMIT:
                return
            known.append(signature)
            text = json.dumps({"module": source, "functions": functions})
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(text)
            os.replace(tmp, path)
    except Exception:
        return


__all__ = [
    "BY_CLASS",
    "LIMIT",
    "MISSING",
    "describe",
    "record",
    "recorded",
    "records_path",
    "signature_text",
    "spec_id",
    "typed",
    "typing_part",
]
