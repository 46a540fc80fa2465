"""The textual form of the IR. `parse(print_ir(op))` rebuilds an equal IR.

Generic operation form:
    %r = tensor.reduce %x {op = "add"} : (tensor<?xf64>) -> f64
with regions in parentheses after the attributes; `func.func` and
`builtin.module` have the short forms shown in their docstrings.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Mapping
from typing import Any, Final

from ppy_core.ir.core import Block, Operation, Region, Value
from ppy_core.ir.types import Type

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FUNC_ATTRS = ("sym_name", "result_types")
_SIGN_BIT: Final = 1 << 63
QUIET_NAN_BITS: Final = 0x7FF8000000000000


class _Names:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.taken: set[str] = set()
        self.counter = 0

    def define(self, value: Value) -> str:
        hint = value.name_hint
        if hint and _IDENT.match(hint) and hint not in self.taken and not hint.isdigit():
            name = hint
        else:
            while str(self.counter) in self.taken:
                self.counter += 1
            name = str(self.counter)
            self.counter += 1
        self.taken.add(name)
        self.names[id(value)] = name
        return "%" + name

    def use(self, value: Value) -> str:
        if id(value) not in self.names:
            return "%<undefined>"
        return "%" + self.names[id(value)]


def print_ir(op: Operation) -> str:
    """The text of `op` and everything nested in it."""
    lines: list[str] = []
    _print_op(op, _Names(), lines, 0)
    return "\n".join(lines) + "\n"


def print_attribute(value: Any) -> str:
    if value is None:
        return "unit"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _print_float(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Type):
        return value.text()
    if isinstance(value, tuple | list):
        return "[" + ", ".join(print_attribute(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return _print_dict(value)
    raise TypeError(f"cannot print attribute value {value!r}")


def _print_float(value: float) -> str:
    """Shortest text that reads back to the same bits: `-0.0`, `inf`, `-nan`, and a
    NaN with another payload as `nan(0x7ff4000000000000)` (its bits without the sign)."""
    if math.isnan(value):
        bits = struct.unpack("<Q", struct.pack("<d", value))[0]
        sign = "-" if bits & _SIGN_BIT else ""
        payload = bits & ~_SIGN_BIT
        return f"{sign}nan" if payload == QUIET_NAN_BITS else f"{sign}nan(0x{payload:016x})"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float.__repr__(value)  # a float subclass (numpy.float64) reprs differently


def _print_dict(attrs: Mapping[str, Any]) -> str:
    items = [
        f"{k if _IDENT.match(k) else json.dumps(k)} = {print_attribute(v)}"
        for k, v in attrs.items()
    ]
    return "{" + ", ".join(items) + "}"


def _types(values: list[Value]) -> str:
    return ", ".join(v.type.text() for v in values)


def _print_op(op: Operation, names: _Names, lines: list[str], depth: int) -> None:
    pad = "  " * depth
    if op.name == "builtin.module":
        head = "builtin.module" + (f" {_print_dict(op.attributes)}" if op.attributes else "")
        lines.append(f"{pad}{head} {{")
        _print_block_ops(op.regions[0].blocks[0], names, lines, depth + 1)
        lines.append(f"{pad}}}")
        return
    if op.name == "func.func":
        _print_func(op, names, lines, depth)
        return
    uses = ", ".join(names.use(v) for v in op.operands)
    defs = ", ".join(names.define(r) for r in op.results)
    text = f"{pad}{defs + ' = ' if defs else ''}{op.name}{' ' + uses if uses else ''}"
    if op.attributes:
        text += " " + _print_dict(op.attributes)
    if op.regions:
        lines.append(text + " (")
        for i, r in enumerate(op.regions):
            _print_region(r, names, lines, depth + 1, last=i == len(op.regions) - 1)
        text = f"{pad})"
    results = [r.type.text() for r in op.results]
    out = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
    lines.append(f"{text} : ({_types(op.operands)}) -> {out}")


def _print_func(op: Operation, names: _Names, lines: list[str], depth: int) -> None:
    pad = "  " * depth
    entry = op.regions[0].blocks[0]
    params = ", ".join(f"{names.define(a)}: {a.type.text()}" for a in entry.args)
    outs = ", ".join(t.text() for t in op.attributes["result_types"])
    rest = {k: v for k, v in op.attributes.items() if k not in _FUNC_ATTRS}
    extra = f" {_print_dict(rest)}" if rest else ""
    sym = op.attributes["sym_name"]
    sym = sym if _IDENT.match(sym) else json.dumps(sym)
    lines.append(f"{pad}func.func @{sym}({params}) -> ({outs}){extra} {{")
    _print_block_ops(entry, names, lines, depth + 1)
    lines.append(f"{pad}}}")


def _print_region(r: Region, names: _Names, lines: list[str], depth: int, last: bool) -> None:
    pad = "  " * depth
    lines.append(f"{pad}{{")
    for i, block in enumerate(r.blocks):
        args = ", ".join(f"{names.define(a)}: {a.type.text()}" for a in block.args)
        lines.append(f"{pad}^bb{i}({args}):")
        _print_block_ops(block, names, lines, depth + 1)
    lines.append(f"{pad}}}" + ("" if last else ","))


def _print_block_ops(block: Block, names: _Names, lines: list[str], depth: int) -> None:
    for op in block.ops:
        _print_op(op, names, lines, depth)


__all__ = ["print_ir", "print_attribute"]
