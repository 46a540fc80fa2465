"""Literal hoisting: kernels that differ only in their literals are one kernel.

A module's functions often differ in a constant only (``a * 1.5 + b``, ``a * 1.75 + b``);
each distinct literal used to make a distinct kernel, ~75 KB of LLVM IR and ~0.1 s of
LLVM each (issue 32: 1,250 such functions took minutes cold). `hoist` replaces each
literal that only inline IEEE operations read by a *slot*: a ``const`` node with
attribute ``slot`` instead of ``value``, loaded once at the kernel's entry from a
table of doubles passed as the body's last argument (``ptr %consts``, `_codegen`).
Kernels equal but for such literals have one body spec, so one key, one LLVM module
and one object; each site gets a wrapper (`wrappers_module`, all of a library's in one
small module) that passes its own table, under the symbol the site's full spec names.

Bits cannot change: on x86 every float64 add/sub/mul/div is a pinned instruction,
compares and selects are constrained or exact, and none of them is folded (strictfp),
so an operand in a register gives what an immediate gave. What the code generator
decides from a literal stays in the body's key: only non-NaN literals are hoisted (the
NaN-order analysis, `_nan_order`, tells NaN constants apart), and a literal read by
anything but an inline elementwise operation (a power's exponent, which picks
``square``/``sqrt``/``reciprocal``; a library loop's operand; a float32, integer or
fastmath kernel, whose literals LLVM may fold) stays in the kernel.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from ppy_core.runtime.abi import SWAPS_SUFFIX

from ._irtext import f64_literal
from ._kernel_map import elision_table
from ._kernels import entry_points, swaps_marker
from ._spec import EXACT_UNARY, KernelSpec, Node
from ._toolchain import WRAPPERS

#: ops that read a hoisted literal as any other float operand: IEEE-exact, lane-wise,
#: emitted inline (`_lower`); a literal any other node reads stays a literal
READERS: Final = frozenset(
    {"add", "sub", "mul", "div", "maximum", "minimum", "compare", "select", "neg", "abs"}
)


@dataclass(frozen=True, slots=True)
class Hoisted:
    """A spec split into the kernel every site shares and the site's literals."""

    body: KernelSpec  # the spec, its hoisted literals ``const`` nodes with a ``slot``
    values: tuple[float, ...]  # slot k's literal


def _reads_as_operand(node: Node) -> bool:
    if node.op == "unary":  # sqrt, floor ...: correctly rounded or exact
        return node.attr("op") in EXACT_UNARY
    return node.op in READERS


def hoist(spec: KernelSpec) -> Hoisted | None:
    """`spec`'s hoistable literals as slots, or None where it has none (see the module
    docstring for which literals are hoistable)."""
    if spec.dtype != "f64" or spec.fastmath:
        return None
    nl = len(spec.leaves)
    kept: set[int] = {spec.result}  # a kernel yielding a literal keeps it
    for node in spec.nodes:
        if not _reads_as_operand(node):
            kept.update(node.args)
    slots: dict[int, int] = {}
    values: list[float] = []
    # one slot per value (its bits: -0.0 is not 0.0): as LLVM keeps one register for
    # equal immediates, the body keeps one for equal literals (a loop short of
    # registers spills), and which literals are equal is part of the body
    by_bits: dict[bytes, int] = {}
    for k, node in enumerate(spec.nodes):
        value = node.attr("value")
        if node.op != "const" or nl + k in kept or not isinstance(value, float):
            continue
        if value != value:  # NaN: `_nan_order` gives it a class of its own
            continue
        bits = struct.pack("<d", value)
        if bits not in by_bits:
            by_bits[bits] = len(values)
            values.append(value)
        slots[nl + k] = by_bits[bits]
    if not values:
        return None
    nodes = tuple(
        Node("const", (), (("slot", slots[nl + k]),)) if nl + k in slots else node
        for k, node in enumerate(spec.nodes)
    )
    body = replace(spec, nodes=nodes, _key=[])
    return Hoisted(body, tuple(values))


#: sites per module of wrappers: a library's wrappers are split in up to 16 modules,
#: by their symbol's first hex digit, so the builder's workers share them and an
#: edit recompiles a sixteenth of them (LLVM takes ~0.3 ms a wrapper unoptimised)
SITES_PER_MODULE: Final = 64

#: a site whose kernel is another's: its spec, its symbol, the body's symbol, and the
#: literals the body takes (None: a body that takes none, the same code as the site's)
Site = tuple[KernelSpec, str, str, "tuple[float, ...] | None"]


def wrappers_modules(sites: Sequence[Site]) -> list[str]:
    """The LLVM modules of `sites`' wrappers (`wrappers_module`), in up to 16 groups
    by symbol, fewer where the sites are few."""
    groups = 1
    while groups < 16 and len(sites) > groups * SITES_PER_MODULE:
        groups *= 2
    parts: dict[int, list[Site]] = {}
    for site in sites:
        parts.setdefault(int(site[1].removeprefix("ppy_k_")[0], 16) % groups, []).append(site)
    return [wrappers_module(parts[k]) for k in sorted(parts)]


def wrappers_module(sites: Sequence[Site]) -> str:
    """One LLVM module of sites' entries: for each (spec, symbol, body symbol,
    literals), each entry of `spec` (`_kernels.entry_points`) under `symbol` calls the
    body's (with the site's table of literals, where it takes one), and the elision
    table marker where `spec` has one. Sorted by symbol: its text (its object's key)
    depends on the set of sites only."""
    decls: dict[str, str] = {}
    parts: list[str] = []
    for spec, sym, body_sym, values in sorted(sites, key=lambda s: s[1]):
        table = extra = ""
        if values is not None:
            table, extra = f"@{sym}.c", ", ptr"
            words = ", ".join(f"double {f64_literal(v)}" for v in values)
            parts.append(
                f"{table} = private unnamed_addr constant [{len(values)} x double] [{words}], "
                "align 8"
            )
        for suffix, ret, params in entry_points(spec):
            types = ", ".join(p.split()[0] for p in params.split(", "))
            decls[body_sym + suffix] = f"declare hidden {ret} @{body_sym}{suffix}({types}{extra})"
            passed = _passed(params) + (f", ptr {table}" if table else "")
            call = f"tail call {ret} @{body_sym}{suffix}({passed}) #1"
            body = f"  {call}\n  ret void" if ret == "void" else f"  %r = {call}\n  ret {ret} %r"
            parts.append(f"define {ret} @{sym}{suffix}({params}) #0 {{\n{body}\n}}")
        swaps = elision_table(spec)
        if swaps:
            parts.append(swaps_marker(sym + SWAPS_SUFFIX, swaps))
    groups = ["attributes #0 = { strictfp nounwind }", "attributes #1 = { strictfp }"]
    return WRAPPERS + "\n".join([*sorted(decls.values()), *parts, *groups, ""])


def _passed(params: str) -> str:
    """A function's parameters as the arguments of a call passing them on."""
    return params.replace("noalias ", "")


def hidden(text: str) -> str:
    """A body's module with its functions hidden: called by its sites' wrappers in the
    same library directly, not through the PLT, and never looked up by name."""
    return re.sub(r"^define (?!internal)", "define hidden ", text, flags=re.MULTILINE)


def aliases(spec: KernelSpec, sym: str, others: Sequence[str]) -> str:
    """Lines naming `sym`'s entries (`_kernels.entry_points`, its elision table marker
    where it has one) under each of `others` too: kernels of one code, one function."""
    entries = [(suffix, ret, params) for suffix, ret, params in entry_points(spec)]
    if elision_table(spec):
        entries.append((SWAPS_SUFFIX, "i32", "ptr %out"))
    lines = []
    for other in others:
        for suffix, ret, params in entries:
            types = ", ".join(p.split()[0] for p in params.split(", "))
            lines.append(f"@{other}{suffix} = alias {ret} ({types}), ptr @{sym}{suffix}")
    return "\n".join(lines) + "\n"
