"""A tiny textual LLVM IR emitter: fresh names, blocks, counted loops with phis.

We write IR as text and hand it to llvmlite's parser: the kernels are small and
the text is easy to read in a saved build log.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

STRICT_ATTR = "#1"


def f64_literal(value: float) -> str:
    """An exact LLVM literal for a double (hex of its IEEE bits)."""
    return "0x{:016X}".format(struct.unpack("<Q", struct.pack("<d", value))[0])


@dataclass(slots=True)
class Emitter:
    """Accumulates the body lines of one function and its declarations."""

    decls: set[str]
    lines: list[str] = field(default_factory=list)
    entry_lines: list[str] = field(default_factory=list)
    block: str = "entry"
    counter: int = 0

    def fresh(self, hint: str = "t") -> str:
        """A new SSA name."""
        self.counter += 1
        return f"%{hint}{self.counter}"

    def label(self, hint: str) -> str:
        """A new block label (without %)."""
        self.counter += 1
        return f"{hint}{self.counter}"

    def emit(self, text: str) -> None:
        """Append one instruction."""
        self.lines.append("  " + text)

    def assign(self, text: str, hint: str = "t") -> str:
        """Emit ``%name = text`` and return the name."""
        name = self.fresh(hint)
        self.emit(f"{name} = {text}")
        return name

    def alloca(self, ty: str, align: int = 64) -> str:
        """An alloca hoisted to the entry block."""
        name = self.fresh("buf")
        self.entry_lines.append(f"  {name} = alloca {ty}, align {align}")
        return name

    def start_block(self, label: str) -> None:
        """Begin block `label`."""
        self.lines.append(f"{label}:")
        self.block = label

    def declare(self, decl: str) -> None:
        """Record a ``declare`` line."""
        self.decls.add(decl)

    def counted_loop(
        self,
        start: str,
        limit: Callable[[str], str],
        step: int,
        carried: Sequence[tuple[str, str]],
        body: Callable[[str, list[str]], list[str]],
    ) -> tuple[str, list[str]]:
        """``for (i = start; limit(i) is true; i += step)`` with loop-carried values.

        `carried` is ``[(type, init)]``; `body(i, values)` emits the body and
        returns the next values. Returns ``(i_at_exit, values_at_exit)``.
        """
        head, loop, done = self.label("h"), self.label("b"), self.label("x")
        pre = self.block
        self.emit(f"br label %{head}")
        self.start_block(head)
        i = self.fresh("i")
        phi_at = len(self.lines)
        names = [self.fresh("acc") for _ in carried]
        cond = limit(i)
        self.emit(f"br i1 {cond}, label %{loop}, label %{done}")
        self.start_block(loop)
        nxt_vals = body(i, names)
        nxt = self.assign(f"add i64 {i}, {step}", "inext")
        latch = self.block
        self.emit(f"br label %{head}")
        phis = [f"  {i} = phi i64 [ {start}, %{pre} ], [ {nxt}, %{latch} ]"]
        for (ty, init), name, value in zip(carried, names, nxt_vals, strict=True):
            phis.append(f"  {name} = phi {ty} [ {init}, %{pre} ], [ {value}, %{latch} ]")
        self.lines[phi_at:phi_at] = phis
        self.start_block(done)
        return i, names

    def function(self, header: str) -> str:
        """The complete function text."""
        return "\n".join([header + " {", "entry:", *self.entry_lines, *self.lines, "}"])
