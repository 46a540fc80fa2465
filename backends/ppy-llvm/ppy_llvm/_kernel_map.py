"""The body of an elementwise map kernel: which copies of its loop, and their stores.

A float64 map on x86 pins the operand order of every add/sub/mul/div and, where both
operands may be NaN with different bits, selects the first NaN explicitly
(`LowerCtx.first_nan_wins`). Those selects cost three instructions per vector, so:

- a map whose library loops (if any) are NumPy's first runs a copy with none of them
  that records whether any result element is NaN; only then does it run the exact
  copy again over the whole range (same arithmetic: the same values and FP flags).
  Every inline op and NumPy loop turns a NaN operand into a NaN result or gives a
  result that does not depend on the NaN's bits (compares, a select's condition,
  ``fmax``, ``hypot(nan, inf)``), so a result without NaN is the exact one; a bool
  result never sees NaN bits and needs no selects at all; the exact copy flips the
  NaN order of `_nan_order.swap_nodes` where NumPy elides a temporary (bits the
  dispatcher passes, `elision_table`);
- another library's loops (SciPy's) are not known to keep NaN: a map calling them,
  with scalar leaves, has a copy with fewer selects for when no scalar is NaN
  (`_nan_order`).
"""

from __future__ import annotations

from ._codegen import BLOCK, VEC, KernelEmit
from ._complex import has_complex
from ._host import llc_bytes
from ._lower import x86_isa
from ._nan_order import swap_nodes, unordered_nodes
from ._spec import EXACT_UNARY, KernelSpec, is_foreign_loop

#: a last-level cache over this size is a server socket's, shared by its cores and
#: tenants (a desktop's or one AMD core complex's is at most 32-36 MiB)
SOCKET_LLC = 64 << 20
#: what `nt_min` counts of a socket's cache: about a core's private L2 and its slice
#: (a 2-CPU VM on a Xeon reporting 300 MiB: streaming stores won from 2.5e5 elements
#: of ``((0.5*x-1.2)*x+3.3)*x-0.7``, 4 MB of arrays, 0.73x; at 1.2e5 they tied)
SOCKET_SHARE = 8 << 20


def nt_min(streams: int) -> int:
    """Elements of one task from which a map kernel reading and writing `streams`
    float64 arrays writes its output with streaming stores: where they fill more than
    half the last-level cache (`SOCKET_SHARE` of a socket's). Below, plain stores win:
    a repeated call finds the output buffer it reuses still cached (measured:
    ``((0.5*x-1.2)*x+3.3)*x-0.7``, 32 MiB L3, 5e5 elements 115 µs plain vs 184 µs
    streaming; at 1e7 streaming wins, benchmarks/numpy_fusion.py)."""
    llc = llc_bytes()
    cache = SOCKET_SHARE if llc > SOCKET_LLC else llc
    return max(cache // 2 // (8 * streams), 1 << 15)


def rows_nt_min(streams: int) -> int:
    """Elements of a _rows_nan call from which its rows stream their stores: each row
    also stores two lines plainly beside its streamed ones, so rows stream from four
    times `nt_min` (measured, the 300 MiB Xeon: blend's rows over 400x400 1.12x the
    time of plain stores, 500x500 1.04x, 707x707 0.91x, 1000x1000 0.85x)."""
    return 4 * nt_min(streams)


def emit_map(ke: KernelEmit) -> None:
    """The map kernel's body (see the module docstring)."""
    spec = ke.spec
    pinned = x86_isa() != "" and spec.dtype == "f64" and not spec.fastmath
    if not pinned:
        _emit_copy(ke)
    elif not any(is_foreign_loop(op) for op in spec.loop_ops()):
        _emit_checked(ke)
    else:
        _emit_scalar_split(ke)


def _emit_checked(ke: KernelEmit) -> None:
    """A bool result: one copy in any operand order. A float one: the copy in any
    order recording NaN results, then (only if one was NaN) the exact copy."""
    ke.any_order = True
    if nan_witness(ke.spec) == "exact":
        _emit_copy(ke)
        ke.any_order = False
        return
    em = ke.em
    ke.nan_flag = em.alloca("i1", 1)
    em.entry_lines.append(f"  store i1 false, ptr {ke.nan_flag}, align 1")
    exact = em.label("exact")
    if ke.masked:
        _emit_hoisted_copy(ke, exact)
    _emit_copy(ke, exact)
    ke.any_order, ke.nan_flag = False, None
    em.start_block(exact)
    if ke.masked:
        _note_witness(ke)
    if follows_elision(ke.spec):  # read only where a NaN was seen
        ke.elide = ke.load_elide()
    _emit_copy(ke)
    ke.elide = ""


#: ops a row's invariant value may take (`row_invariants`): IEEE operations whose bits
#: do not depend on the vector lane or the operand order but for a NaN's
_INVARIANT_OPS = frozenset({"add", "sub", "mul", "div", "neg", "abs", "const"})


def row_invariants(spec: KernelSpec) -> dict[int | None, tuple[int, ...]]:
    """The nodes a _splat call may compute once, by the array leaf they read (None:
    none, scalars and constants only), in SSA order: nodes of `_INVARIANT_OPS` (and
    exact unary functions) over scalars, constants and at most one array leaf, valid
    where that leaf is broadcast along the row (``1.0 - alpha[:, None]``: one
    subtraction a row, not one a vector)."""
    nl = len(spec.leaves)
    reads: dict[int, frozenset[int]] = {
        k: frozenset({k}) if kind == "array" else frozenset() for k, kind in enumerate(spec.leaves)
    }
    groups: dict[int | None, tuple[int, ...]] = {}
    for k, node in enumerate(spec.nodes):
        vid = nl + k
        exact = node.op in _INVARIANT_OPS or (node.op == "unary" and node.attr("op") in EXACT_UNARY)
        if not exact or any(a not in reads for a in node.args):
            continue
        leaves = frozenset().union(*(reads[a] for a in node.args))
        if len(leaves) <= 1:
            reads[vid] = leaves
            if node.op != "const":
                leaf = next(iter(leaves), None)
                groups[leaf] = (*groups.get(leaf, ()), vid)
    return groups


#: the most leaves a _splat entry has a copy with row invariants for (each a copy)
HOISTED_COPIES = 2


def _emit_hoisted_copy(ke: KernelEmit, redo: str) -> None:
    """The _splat entry's copies in any operand order with row invariants computed
    once (`row_invariants`): one per leaf with invariants (the most first, at most
    `HOISTED_COPIES`), taken where that leaf is broadcast along the row and the call
    has an element. A NaN result redoes the call exactly (`redo`), so only values
    are shared (the same operation on the same operands, the same FP flags)."""
    groups = row_invariants(ke.spec)
    always = groups.pop(None, ())
    leaves: list[int | None] = sorted(groups, key=lambda j: -len(groups[j]))[:HOISTED_COPIES]
    if not leaves and always:
        leaves = [None]
    em = ke.em
    for leaf in leaves:
        take = em.assign("icmp sgt i64 %end, %begin")
        if leaf is not None:
            broadcast = em.assign(f"icmp eq i64 {ke.masks[leaf]}, 0")
            take = em.assign(f"and i1 {take}, {broadcast}")
        hoisted, other = em.label("row_invariant"), em.label("generic")
        em.emit(f"br i1 {take}, label %{hoisted}, label %{other}")
        em.start_block(hoisted)
        ptrs = ke.ptrs_at("%begin")
        wide: dict[int, str] = {}
        one: dict[int, str] = {}
        nodes = sorted((*always, *(groups[leaf] if leaf is not None else ())))
        ke.hoisted = {
            vid: (ke.value(vid, VEC, ptrs, "%begin", wide), ke.value(vid, 1, ptrs, "%begin", one))
            for vid in nodes
        }
        _emit_copy(ke, redo)
        ke.hoisted = {}
        em.start_block(other)


def nan_witness(spec: KernelSpec) -> str:
    """How the _splat entry tells a _rows_nan call's NaN results (`_codegen`'s ABI):
    ``seen``: its checked copy marks the witness slot (`_note_witness`); ``exact``:
    no NaN's bits depend on the operand order (a bool result, or no node whose two
    operands may both be NaN), nothing to tell; ``unknown``: neither (operand order
    not pinned: another ISA, fastmath)."""
    pinned = x86_isa() != "" and spec.dtype == "f64" and not spec.fastmath
    if not pinned or any(is_foreign_loop(op) for op in spec.loop_ops()):
        return "unknown"
    arith = frozenset(n for n in spec.nodes if n.op in ("add", "sub", "mul", "div"))
    if spec.value_is_bool(spec.result) or unordered_nodes(spec) >= arith:
        return "exact"
    return "seen"


def _note_witness(ke: KernelEmit) -> None:
    """In the _splat entry's exact copy (a NaN result was stored): 2 into the witness
    slot where a _rows_nan call set it (1); a call of the dispatcher's (0) is left alone,
    its scalars are shared by the pool's threads."""
    em = ke.em
    ns = sum(kind == "scalar" for kind in ke.spec.leaves)
    slot = em.assign(f"getelementptr i64, ptr %scalars, i64 {ns + len(ke.base) + 2}")
    asked = em.assign(f"icmp ne i64 {em.assign(f'load i64, ptr {slot}, align 8')}, 0")
    mark, go_on = em.label("witness"), em.label("exact_copy")
    em.emit(f"br i1 {asked}, label %{mark}, label %{go_on}")
    em.start_block(mark)
    em.emit(f"store i64 2, ptr {slot}, align 8")
    em.emit(f"br label %{go_on}")
    em.start_block(go_on)


def _emit_scalar_split(ke: KernelEmit) -> None:
    """Where no scalar leaf is NaN, a copy with fewer first-NaN selects."""
    em = ke.em
    scalars = frozenset(k for k, kind in enumerate(ke.spec.leaves) if kind == "scalar")
    if not scalars or unordered_nodes(ke.spec, scalars) == unordered_nodes(ke.spec):
        _emit_copy(ke)
        return
    nans = []
    for k in sorted(scalars):  # by the bits: a compare could raise invalid
        bits = em.assign(f"bitcast double {ke.scalar_val[k]} to i64")
        mag = em.assign(f"and i64 {bits}, {0x7FFF_FFFF_FFFF_FFFF}")
        nans.append(em.assign(f"icmp ugt i64 {mag}, {0x7FF0_0000_0000_0000}"))
    any_nan = nans[0]
    for more in nans[1:]:
        any_nan = em.assign(f"or i1 {any_nan}, {more}")
    general, ordered = em.label("nan_scalar"), em.label("ordered_scalars")
    em.emit(f"br i1 {any_nan}, label %{general}, label %{ordered}")
    em.start_block(ordered)
    ke.nan_free = scalars
    _emit_copy(ke)
    ke.nan_free = frozenset()
    em.start_block(general)
    _emit_copy(ke)


def _finish(ke: KernelEmit, redo: str | None) -> None:
    """Return; a copy recording NaN results first jumps to `redo` if there was one."""
    em = ke.em
    if redo is None or ke.nan_flag is None:
        em.emit("ret void")
        return
    seen = em.assign(f"load i1, ptr {ke.nan_flag}, align 1")
    done = em.label("done")
    em.emit(f"br i1 {seen}, label %{redo}, label %{done}")
    em.start_block(done)
    em.emit("ret void")


def _emit_copy(ke: KernelEmit, redo: str | None = None) -> None:
    """One copy of the loop over ``[begin, end)``, ending in `_finish`."""
    em = ke.em
    bool_out = ke.spec.value_is_bool(ke.spec.result)
    if not ke.loop_nodes:
        count = em.assign("sub i64 %end, %begin")
        ptrs, dest = ke.ptrs_at("%begin"), ke.offset("%out", "%begin", bool_out)
        if not bool_out and x86_isa() and ke.spec.dtype == "f64" and not has_complex(ke.spec):
            streams = 1 + sum(kind == "array" for kind in ke.spec.leaves)
            large = em.assign(f"icmp sge i64 {count}, {nt_min(streams)}")
            # or a row of a _rows_nan call that streams (`KernelEmit.load_stream`), where the
            # edge vectors' recomputation is cheap (see `divider_bound`)
            if ke.masked and not divider_bound(ke.spec):
                rows_stream = em.assign(f"icmp ne i64 {ke.load_stream()}, 0")
                long_row = em.assign(f"icmp sge i64 {count}, {ALIGNED_MIN}")
                row_large = em.assign(f"and i1 {rows_stream}, {long_row}")
                large = em.assign(f"or i1 {large}, {row_large}")
            _emit_aligned(ke, count, ptrs, dest, redo, large, nontemporal=True)
            if not divider_bound(ke.spec):
                large = em.assign(f"icmp sge i64 {count}, {ALIGNED_MIN}")
                _emit_aligned(ke, count, ptrs, dest, redo, large, nontemporal=False)
        ke.stage(count, ptrs, ke.spec.result, dest, detect=True)
        _finish(ke, redo)
        return

    def block(blk: str, _acc: list[str]) -> list[str]:
        rest = em.assign(f"sub i64 %end, {blk}")
        small = em.assign(f"icmp slt i64 {rest}, {BLOCK}")
        count = em.assign(f"select i1 {small}, i64 {rest}, i64 {BLOCK}")
        ke.materialize(count, ke.ptrs_at(blk), ke.offset("%out", blk, bool_out))
        return []

    em.counted_loop("%begin", lambda b: em.assign(f"icmp slt i64 {b}, %end"), BLOCK, [], block)
    _finish(ke, redo)


#: elements of a task from which a map kernel stores whole cache lines
ALIGNED_MIN = 64
#: unary ops that cost about as little as an add (the rest wait on the divider or are
#: a polynomial: sqrt, reciprocal, an inline exp)
CHEAP_UNARY = frozenset({"neg", "abs", "floor", "ceil", "trunc", "square"})


def divider_bound(spec: KernelSpec) -> bool:
    """Whether each element waits on a division, square root or the like: lining up
    the stores buys such a loop nothing, and the two overlapping edge vectors of the
    aligned loop cost it (measured: a pairwise distance, 1000x1000, ~1%)."""
    return any(
        n.op in ("div", "pow") or (n.op == "unary" and n.attr("op") not in CHEAP_UNARY)
        for n in spec.nodes
    )


def _emit_aligned(
    ke: KernelEmit,
    count: str,
    ptrs: dict[int, str],
    dest: str,
    redo: str | None,
    large: str,
    nontemporal: bool,
) -> None:
    """Where `large` (i1: at least `ALIGNED_MIN` elements) and the output is 8-byte
    aligned, the loop stores whole 64-byte lines: NumPy's allocator gives addresses
    16 bytes past a line, where every
    other 32-byte load and store of an unaligned loop splits a line (measured: blend,
    10-25% slower than Numba's loop over its 64-byte aligned result). Operands that
    share the output's offset (all of NumPy's fresh arrays) are read aligned too.
    `nontemporal`: the stores are streaming, to memory without first reading the line
    into the cache, a fifth less traffic for ``a*b + c`` where the arrays outgrow the
    cache (`nt_min`). Falls through to the plain loop otherwise.

    Every element keeps the code NumPy's loops give it: vector lanes (operand order
    of the SIMD body) everywhere but the last ``n % 8`` (the scalar tail). The aligned
    middle is bracketed by two unaligned vector stores that overlap it (recomputing a
    pure value gives the same bits and flags); streamed, by two plain lines as well."""
    em, result, vt = ke.em, ke.spec.result, f"<{VEC} x double>"
    addr = em.assign(f"ptrtoint ptr {dest} to i64")
    aligned8 = em.assign(f"icmp eq i64 {em.assign(f'and i64 {addr}, 7')}, 0")
    take = em.assign(f"and i1 {large}, {aligned8}")
    lines, plain = em.label("stream" if nontemporal else "lines"), em.label("plain")
    em.emit(f"br i1 {take}, label %{lines}, label %{plain}")
    em.start_block(lines)
    ke.big = True
    detect = ke.nan_flag is not None

    def store(i: str, middle: bool, acc: list[str]) -> list[str]:
        v = ke.value(result, VEC, ptrs, i, {})
        tail = ", align 8"
        if middle:
            tail = ", align 64, !nontemporal !{i32 1}" if nontemporal else ", align 64"
        em.emit(f"store {vt} {v}, ptr {ke.offset(dest, i)}{tail}")
        return [ke.or_nan(acc[0], v, VEC)] if detect else []

    def edge(i: str) -> None:
        ke.note_nan(store(i, False, ["zeroinitializer"]), VEC)

    count8 = em.assign(f"and i64 {count}, -8")
    edge("0")
    mis = em.assign(f"and i64 {em.assign(f'sub i64 0, {addr}')}, 63")
    peel = em.assign(f"lshr i64 {mis}, 3")  # elements to the next 64-byte boundary
    span = em.assign(f"and i64 {em.assign(f'sub i64 {count8}, {peel}')}, -8")
    stop = em.assign(f"add i64 {peel}, {span}")
    first = peel
    if nontemporal:
        # plain stores to the first and last lines: a plain store to a line being
        # streamed flushes it half-written (blend's rows, 1000x1000: 16% slower)
        edge(peel)
        stop = em.assign(f"sub i64 {stop}, {VEC}")
        edge(stop)
        first = em.assign(f"add i64 {peel}, {VEC}")
    _, acc = em.counted_loop(
        first,
        lambda i: em.assign(f"icmp slt i64 {i}, {stop}"),
        VEC,
        ke.nan_carried(detect, VEC),
        lambda i, a: store(i, True, a),
    )
    ke.note_nan(acc, VEC)
    edge(em.assign(f"sub i64 {count8}, {VEC}"))

    def scalar(j: str, a: list[str]) -> list[str]:
        v = ke.value(result, 1, ptrs, j, {})
        em.emit(f"store double {v}, ptr {ke.offset(dest, j)}, align 8")
        return [ke.or_nan(a[0], v, 1)] if detect else []

    _, acc = em.counted_loop(
        count8,
        lambda j: em.assign(f"icmp slt i64 {j}, {count}"),
        1,
        ke.nan_carried(detect, 1),
        scalar,
    )
    ke.note_nan(acc, 1)
    if nontemporal:
        em.declare("declare void @llvm.x86.sse.sfence()")
        em.emit("call void @llvm.x86.sse.sfence()")
    _finish(ke, redo)
    ke.big = False
    em.start_block(plain)


#: the most swap nodes a kernel follows NumPy's elision in (bits of one int64 slot)
SWAPS_MAX = 32


def follows_elision(spec: KernelSpec) -> bool:
    """Whether the map entries' exact copy reads the elision bits (`_codegen`'s ABI)."""
    return (
        0 < len(swap_nodes(spec)) <= SWAPS_MAX
        and spec.reduce is None
        and x86_isa() != ""
        and spec.dtype == "f64"
        and not spec.fastmath
        and not spec.value_is_bool(spec.result)
        and not any(is_foreign_loop(op) for op in spec.loop_ops())
    )


def elision_table(spec: KernelSpec) -> tuple[int, ...]:
    """The `swaps` marker's table (`_codegen`'s ABI): (flags, then per swap node its
    left leaf's ordinal and its right side's leaf bits), or () where NumPy's elision
    never changes the kernel's NaN bits (no swap node, float32, a bool result)."""
    swaps = swap_nodes(spec)
    if not swaps or spec.dtype != "f64" or spec.fastmath or spec.value_is_bool(spec.result):
        return ()
    # an augmented store (``a += v``) never elides at its result's node: the
    # dispatcher clears that node's bit where it is the last swap node (4), or knows
    # it is none (8)
    root = spec.nodes[spec.result - len(spec.leaves)] if spec.result >= len(spec.leaves) else None
    flags = (1 if follows_elision(spec) else 2) | (
        4 if list(swaps)[-1] == root else 0 if root in swaps else 8
    )
    if len(swaps) > SWAPS_MAX:  # no table: any call NumPy may elide in is checked
        return (flags,)
    return (flags, *(x for pair in swaps.values() for x in pair))
