"""Runtime part of `pyloop`: guard (exact Vec operands of one length), run, count."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import vecmath


class Site:
    def __init__(
        self,
        kernel: Callable[..., Any],
        kinds: list[str],
        reduce: bool,
        fallback: Callable[..., Any],
    ) -> None:
        self.kernel, self.kinds, self.reduce, self.fallback = kernel, kinds, reduce, fallback
        self.fast = 0
        self.fallbacks: dict[str, int] = {}

    def __call__(self, *args: Any) -> Any:
        reason = self.guard(args)
        if reason:
            self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
            return self.fallback(*args)
        self.fast += 1
        n = next(len(a.items) for a, k in zip(args, self.kinds, strict=True) if k == "vec")
        values = [
            a.items if k == "vec" else float(a) for a, k in zip(args, self.kinds, strict=True)
        ]
        out = self.kernel(n, *values)
        return out if self.reduce else vecmath.Vec(out)

    def guard(self, args: tuple[Any, ...]) -> str:
        lengths = set()
        for a, kind in zip(args, self.kinds, strict=True):
            if kind == "vec":
                if type(a) is not vecmath.Vec:
                    return "guard: not a Vec"
                lengths.add(len(a.items))
            elif type(a) not in (float, int):
                return "guard: not a number"
        return "guard: lengths differ" if len(lengths) != 1 else ""

    def ppy_stats(self) -> dict[str, Any]:
        return {"fast": self.fast, "fallback": dict(self.fallbacks)}

    def ppy_reset(self) -> None:
        self.fast, self.fallbacks = 0, {}


def load(
    data: dict[str, Any], directory: Path, fallback: Callable[..., Any], record: dict[str, Any]
) -> Site:
    namespace: dict[str, Any] = {}
    source = (directory / data["file"]).read_text()
    exec(compile(source, str(directory / data["file"]), "exec"), namespace)
    return Site(namespace["kernel"], data["kinds"], data["reduce"], fallback)
