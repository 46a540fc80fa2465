"""A dialect as a plugin may register one, with a write op (like ppy-torch's
`aten.copy_`), for the passes' tests: the core's own dialects have no write."""

from __future__ import annotations

from typing import ClassVar

from ppy_core.ir import Dialect, DialectRegistry, Operation, Type, core_registry, operand, result


class WriteOp(Operation):
    """%w = demo.write %dest, %src : (tensor<...>, tensor<...>) -> tensor<...>"""

    name: ClassVar[str] = "demo.write"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory", "WriteMemory"})
    dest = operand(Type)
    src = operand(Type)
    out = result(Type)


def demo_registry() -> DialectRegistry:
    """The core's dialects plus `demo`."""
    registry = core_registry()
    registry.register(Dialect("demo", [WriteOp]))
    return registry
