"""The guard of typed loops that build module helpers in place (`loops_inline`).

A typed loop that calls `match(b1, b2)`, a function of its module, runs `match`'s
body compiled in place; Python would call whatever the module's global `match` is at
that moment. So each call checks the global is still the function defined there (by
name and line, in this module's namespace, through a specializing dispatcher's
`__wrapped__`), remembering the object it checked: a rebound helper runs Python.
"""

from __future__ import annotations

from typing import Any


class Helpers:
    """The (name, line) helpers a site built in place, checked in `namespace`."""

    __slots__ = ("names", "namespace", "seen")

    def __init__(self, helpers: list[tuple[str, int]], namespace: dict[str, Any]) -> None:
        self.names = [(str(n), int(line)) for n, line in helpers]
        self.namespace = namespace
        self.seen: dict[str, Any] = {}  # name -> the object found to be its definition

    def hold(self) -> bool:
        """Whether every helper's global is still its module's definition."""
        for name, line in self.names:
            found = self.namespace.get(name)
            if found is not None and found is self.seen.get(name):
                continue
            if not _defined_here(found, name, line, self.namespace):
                return False
            self.seen[name] = found
        return True


def _defined_here(obj: Any, name: str, line: int, namespace: dict[str, Any]) -> bool:
    for _ in range(4):  # a specializing dispatcher wraps the module's function
        code = getattr(obj, "__code__", None)
        if (
            code is not None
            and code.co_name == name
            and code.co_firstlineno == line
            and getattr(obj, "__globals__", None) is namespace
        ):
            return True
        obj = getattr(obj, "__wrapped__", None)
        if obj is None:
            return False
    return False


__all__ = ["Helpers"]
