"""KernelSpecs -> one shared library of kernels (the compile-time side)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from ppy_core.runtime.abi import CompiledKernel, KernelSignature

from ._exp import INLINE_EXP
from ._hoist import Site, aliases, hidden, hoist, wrappers_modules
from ._host import fingerprint
from ._kernels import emit_kernel, module_text
from ._lower import Lowering, default_lowerings
from ._spec import KernelSpec, loop_name
from ._toolchain import build_linked

#: the name a kernel's module is written with before its text is compared with the
#: others' (`compile_specs`): in no other symbol, so renaming it renames only its own
BODY = "ppy_kernel_body"
#: one kernel of a group of one code: its symbol, spec, body spec's key, literals
Member = tuple[str, KernelSpec, str, "tuple[float, ...] | None"]


def symbol_of(spec: KernelSpec) -> str:
    """The kernel's symbol: a prefix of the spec's sha256."""
    return f"ppy_k_{spec.key()[:20]}"


def weak_leaves(spec: KernelSpec) -> frozenset[int]:
    """Array leaves for which a finite Python float may stand in (``w``).

    An operation whose operands are all floats is evaluated by Python (or by NumPy on
    one element), not as the kernel does it. For a power or a library loop that can
    differ without an FP flag (``x ** 0.5`` is C's ``pow``, NumPy's is ``sqrt``; a loop
    called on one element may take another code path than on a block), so each one
    keeps at least one leaf below it an array (``a``): the first, smallest powers
    first. Every other difference (ZeroDivisionError, OverflowError, a complex power)
    comes with an FP flag, on which the adapter runs Python instead. The inline exp
    (`_exp`) stands in for NumPy's exp loop and keeps the loop's rule."""
    nl = len(spec.leaves)
    below: list[frozenset[int]] = [frozenset({k}) for k in range(nl)]
    risky: list[frozenset[int]] = []
    for node in spec.nodes:
        under = frozenset().union(*(below[a] for a in node.args))
        below.append(under)
        if node.op == "pow" or loop_name(node, spec) or node.attr("op") == INLINE_EXP:
            risky.append(frozenset(k for k in under if spec.leaves[k] == "array"))
    strong: set[int] = set()
    for under in sorted(risky, key=len):
        if under and not under & strong:
            strong.add(min(under))
    return frozenset(k for k in range(nl) if spec.leaves[k] == "array" and k not in strong)


def signature_of(spec: KernelSpec) -> KernelSignature:
    """The dispatcher's view of a kernel (``w``: an array leaf a float may fill)."""
    if spec.dtype != "f64":  # float32 arrays 'f' / Python numbers cast to float32 'p';
        # int64 'l' / int32 'i' arrays with Python ints 'n' (their bits in the scalar slot)
        array, scalar = {"f32": "fp", "i64": "ln", "i32": "in"}[spec.dtype]
        return KernelSignature(
            spec.result_kind, "".join(array if k == "array" else scalar for k in spec.leaves), ()
        )
    weak = weak_leaves(spec) if spec.reduce is None else frozenset()
    # 'c': a complex128 array (`_complex`); 'j': an int64 array read as float64, 'n' a
    # Python int its int64 nodes read (`_mixed`)
    letters = {"scalar": "s", "complex": "c", "int": "j", "int_scalar": "n"}
    leaves = "".join(
        ("w" if i in weak else "a") if k == "array" else letters[k]
        for i, k in enumerate(spec.leaves)
    )
    return KernelSignature(spec.result_kind, leaves, loop_signatures(spec))


def loop_signatures(spec: KernelSpec) -> tuple[tuple[str, str], ...]:
    """``(loop, "d->d" | "dd->d" | "ddd->d")`` per library loop the kernel calls: the
    signature says how many float64 inputs the loop takes."""
    arity: dict[str, int] = {}
    for node in spec.nodes:
        name = loop_name(node, spec)
        if name is not None:
            arity.setdefault(name, len(node.args))
    return tuple((op, "d" * arity[op] + "->d") for op in spec.loop_ops())


def compile_specs(
    specs: Sequence[KernelSpec],
    name: str = "kernels",
    lowerings: Mapping[str, Lowering] | None = None,
    hoisting: bool = True,
) -> list[CompiledKernel]:
    """Compile every spec into one .so (cached by content) and describe each kernel.
    Each distinct kernel is its own LLVM module, compiled to an object cached by its
    text (`build_linked`): an edit to one site recompiles that site's kernel only.
    Kernels of one code are compiled once: those whose text is the same but for their
    name (``sin(x)`` and ``cos(x)`` call their loop through the table the adapter
    fills) are aliases of one function, and those that differ only in literals
    (`_hoist`; `hoisting` False: never) one body their sites' wrappers call with
    their literals, all wrappers in a few small modules. A kernel no other shares
    keeps its literals in its code: no wrapper to pass through (a store calls its
    kernel once per row: heat_3d, 25k calls, 3% of its time)."""
    table = dict(lowerings) if lowerings is not None else default_lowerings()
    texts: dict[str, str] = {}  # body spec key -> its module, named BODY (emitted once)
    groups: dict[str, list[Member]] = {}  # the sha256 of a body's text -> its kernels
    seen: set[str] = set()
    for spec in specs:
        sym = symbol_of(spec)
        if sym in seen:
            continue
        seen.add(sym)
        split = hoist(spec) if hoisting else None
        body, values = (split.body, split.values) if split else (spec, None)
        if body.key() not in texts:
            texts[body.key()] = _module(body, BODY, table)
        digest = hashlib.sha256(texts[body.key()].encode()).hexdigest()
        groups.setdefault(digest, []).append((sym, spec, body.key(), values))
    modules: list[str] = []
    sites: list[Site] = []
    for digest, members in groups.items():
        first, spec, body_key, values = members[0]
        if len(members) == 1:  # its own kernel, literals and all
            own = texts[body_key] if values is None else _module(spec, BODY, table)
            modules.append(own.replace(f"@{BODY}", f"@{first}"))
        elif values is None:  # one code under several names
            text = texts[body_key].replace(f"@{BODY}", f"@{first}")
            modules.append(text + aliases(spec, first, [m[0] for m in members[1:]]))
        else:
            body_sym = f"ppy_k_{digest[:20]}"
            modules.append(hidden(texts[body_key]).replace(f"@{BODY}", f"@{body_sym}"))
            sites.extend((s, sym, body_sym, v) for sym, s, _, v in members)
    texts_out = [*modules, *wrappers_modules(sites)]
    path = build_linked(texts_out, name)
    fp = fingerprint()
    return [CompiledKernel(str(path), symbol_of(s), signature_of(s), fp) for s in specs]


def _module(spec: KernelSpec, sym: str, lowerings: Mapping[str, Lowering]) -> str:
    """The LLVM module of one kernel."""
    decls: set[str] = set()  # this kernel's own: its text depends on no other
    return module_text([emit_kernel(spec, sym, lowerings, decls)], decls)
