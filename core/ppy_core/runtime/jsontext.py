"""Reading JSON on the start path without `import json`.

`import json` costs a cached start ~2 ms (four modules, their regular expressions).
`loads` runs the parser `json.loads` itself runs, the C scanner of `_json`, with the
context `json.JSONDecoder` would give it, and accepts exactly what `json.loads`
accepts (a test holds them together); without `_json`, it is `json.loads`. Errors
are ValueError (json's own JSONDecodeError where the scanner raises one).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
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


def loads(text: str | bytes) -> Any:
    """`json.loads(text)`: the value, or ValueError when `text` is not one JSON value."""
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8")
    if text.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scanner()(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def read(path: str | os.PathLike[str]) -> Any:
    """The JSON value in the file at `path` (OSError, ValueError)."""
    with open(path, "rb") as handle:
        return loads(handle.read())


__all__ = ["loads", "read"]
