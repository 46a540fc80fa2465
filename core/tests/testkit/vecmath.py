"""A made-up vector library for the core's tests: lists of floats with arithmetic."""

from __future__ import annotations

import math
from collections.abc import Callable


class Vec:
    __slots__ = ("items",)

    def __init__(self, items: list[float]) -> None:
        self.items = [float(x) for x in items]

    def _zip(self, other: object, fn: Callable[[float, float], float]) -> Vec:
        if isinstance(other, Vec):
            if len(other.items) != len(self.items):
                raise ValueError("length mismatch")
            return Vec([fn(a, b) for a, b in zip(self.items, other.items, strict=True)])
        return Vec([fn(a, float(other)) for a in self.items])  # type: ignore[arg-type]

    def __add__(self, o: object) -> Vec:
        return self._zip(o, lambda a, b: a + b)

    def __radd__(self, o: object) -> Vec:
        return self._zip(o, lambda a, b: b + a)

    def __sub__(self, o: object) -> Vec:
        return self._zip(o, lambda a, b: a - b)

    def __mul__(self, o: object) -> Vec:
        return self._zip(o, lambda a, b: a * b)

    def __rmul__(self, o: object) -> Vec:
        return self._zip(o, lambda a, b: b * a)

    def __truediv__(self, o: object) -> Vec:
        return self._zip(o, lambda a, b: a / b)

    def __neg__(self) -> Vec:
        return Vec([-a for a in self.items])

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Vec) and o.items == self.items

    def __repr__(self) -> str:
        return f"Vec({self.items})"


def sin(v: Vec) -> Vec:
    return Vec([math.sin(a) for a in v.items])


def total(v: Vec) -> float:
    return math.fsum(v.items)
