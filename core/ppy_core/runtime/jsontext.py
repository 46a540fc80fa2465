"""Reading JSON on the start path without `import json`.

`import json` costs a cached start ~2 ms (four modules, their regular expressions).
`loads` runs the parser `json.loads` itself runs, the C scanner of `_json`, with the
context `json.JSONDecoder` would give it, and accepts exactly what `json.loads`
accepts (a test holds them together); without `_json`, it is `json.loads`. Errors
are ValueError (json's own JSONDecodeError where the scanner raises one).

Bounded, since what it reads (cache and artifact manifests) may have been edited by
anyone: a text over `max_bytes`, or a value nested deeper than `MAX_DEPTH`, is a
ValueError too, never a RecursionError, a MemoryError or a hang.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"
#: the deepest nesting of arrays and objects accepted (ppy's manifests nest < 12)
MAX_DEPTH = 64
#: the largest text accepted by default (ppy's manifests are kilobytes)
MAX_BYTES = 64 << 20
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
_CONTAINERS = (dict, list)  # what the scanner makes of objects and arrays
_scan: Callable[[str, int], tuple[Any, int]] | None = None


class _Context:
    """The attributes `_json.make_scanner` reads, as `json.JSONDecoder()` sets them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


def _scanner() -> Callable[[str, int], tuple[Any, int]]:
    global _scan
    if _scan is None:
        try:
            from _json import make_scanner  # type: ignore[import-not-found]
        except ImportError:  # another Python: the json package's own
            import json

            def scan(text: str, index: int) -> tuple[Any, int]:
                return json.JSONDecoder().raw_decode(text, index)  # type: ignore[no-any-return]

            _scan = scan
        else:
            _scan = make_scanner(_Context())
    return _scan


def loads(text: str | bytes, *, max_bytes: int = MAX_BYTES) -> Any:
    """`json.loads(text)`: the value, or ValueError when `text` is not one JSON value,
    is longer than `max_bytes` or nests deeper than MAX_DEPTH."""
    if len(text) > max_bytes:
        raise ValueError(f"{len(text)} bytes, more than the {max_bytes} accepted")
    if isinstance(text, bytes | bytearray):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8: {exc}") from None
    if text.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scanner()(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    except (RecursionError, MemoryError):  # the C scanner recurses per level
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    if (text.count("[") > MAX_DEPTH or text.count("{") > MAX_DEPTH) and _depth(value) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def depth(value: Any) -> int:
    """How deeply arrays and objects (lists and dicts) nest in `value`, counted up to
    MAX_DEPTH + 1: level by level (iterative, no recursion limit), each level keeping
    only the containers of the one above, so a scalar is looked at once and never
    queued (a manifest of thousands of sites is mostly strings: ~1 ms). A container
    met again (marshal's shared objects) is not walked again: a value sharing its
    parts costs its distinct parts, never their repetitions."""
    level: list[Any] = [value] if type(value) in _CONTAINERS else []
    seen: set[int] = set()
    found = 0
    while level and found <= MAX_DEPTH:
        found += 1
        below: list[Any] = []
        for item in level:
            if id(item) in seen:
                continue
            seen.add(id(item))
            values = item.values() if type(item) is dict else item
            below += [v for v in values if type(v) in _CONTAINERS]
        level = below
    return found


_depth = depth


def read(path: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES) -> Any:
    """The JSON value in the file at `path` (OSError, ValueError), bounded as `loads`."""
    with open(path, "rb") as handle:
        return loads(handle.read(max_bytes + 1), max_bytes=max_bytes)


__all__ = ["MAX_DEPTH", "depth", "loads", "read"]
