"""Whole kernel functions: elementwise map, pairwise sum, product, max/min."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ppy_core.runtime.abi import ROWS_SUFFIX, SPLAT_SUFFIX, SWAPS_SUFFIX

from ._codegen import BLOCK, LEAF, VEC, KernelEmit
from ._complex import has_complex
from ._host import host
from ._irtext import Emitter, f64_literal
from ._kernel_map import elision_table, emit_map, nan_witness, rows_nt_min
from ._lower import Lowering, x86_isa
from ._spec import KernelSpec, has_slots, loop_name

_ATTRS = "#0"
ROWS_ARGS = (
    "ptr noalias %arrays, ptr noalias %scalars, ptr %out, i64 %len, i64 %nrows, "
    "ptr noalias %steps, ptr %loops"
)
MAP_ARGS = "ptr noalias %arrays, ptr noalias %scalars, ptr %out, i64 %begin, i64 %end, ptr %loops"
RED_ARGS = "ptr noalias %arrays, ptr noalias %scalars, i64 %lo, i64 %n, ptr %loops"
#: a hoisted body's last parameter: its table of literals (`_hoist`)
CONSTS_ARG = ", ptr noalias %consts"


def entry_points(spec: KernelSpec) -> list[tuple[str, str, str]]:
    """(symbol suffix, return type, parameters) of each function a kernel of `spec`
    exports (the runtime finds them by name), the plain entry first."""
    if spec.reduce is not None:
        return [("", "double", RED_ARGS)]
    if not has_splat(spec):
        return [("", "void", MAP_ARGS)]
    return [
        ("", "void", MAP_ARGS),
        (SPLAT_SUFFIX, "void", MAP_ARGS),
        (ROWS_SUFFIX, "i64", ROWS_ARGS),
    ]


def has_splat(spec: KernelSpec) -> bool:
    """Whether a map kernel has the _splat and _rows_nan entries (`_codegen`'s ABI)."""
    return (
        spec.rows
        and spec.dtype == "f64"
        and not has_complex(spec)  # its row entries read 8-byte elements
        and "int" not in spec.leaves  # and float64 ones (`_mixed`)
        and not any(loop_name(n, spec) for n in spec.nodes)
    )


def _consts(spec: KernelSpec, arg: bool = False) -> str:
    """The table of literals a hoisted body's functions take last (``arg``: passed on
    in a call), or nothing."""
    if not has_slots(spec):
        return ""
    return ", ptr %consts" if arg else CONSTS_ARG


def emit_kernel(
    spec: KernelSpec, name: str, lowerings: Mapping[str, Lowering], decls: set[str]
) -> str:
    """The LLVM IR text of kernel `name` for `spec`."""
    text = _emit_kernel(spec, name, lowerings, decls)
    table = elision_table(spec)
    if table:
        text += "\n" + swaps_marker(name + SWAPS_SUFFIX, table)
    if spec.fastmath:  # attribute groups #2/#3: no strictfp
        text = text.replace(" #1", " #3").replace(" #0 {", " #2 {")
    return text


def _emit_kernel(
    spec: KernelSpec, name: str, lowerings: Mapping[str, Lowering], decls: set[str]
) -> str:
    if spec.reduce is None:
        text = _map_function(spec, name, lowerings, decls, masked=False)
        if not has_splat(spec):
            return text
        splat = _map_function(spec, name + SPLAT_SUFFIX, lowerings, decls, masked=True)
        return "\n".join((text, splat, _rows_function(spec, name)))
    ke = KernelEmit(spec, lowerings, Emitter(decls))
    ke.load_leaves()
    ke.big_cond = ke.em.assign("icmp sgt i64 %n, 8")
    params = RED_ARGS + _consts(spec)
    if spec.reduce in ("add", "mean"):
        inner = KernelEmit(spec, lowerings, Emitter(decls))
        inner.load_leaves()
        inner.big_cond = inner.em.assign("icmp sgt i64 %n, 8")
        _emit_pairwise(inner, name, PAIRS_INNER)  # odd depths call back the even ones
        _emit_pairwise(ke, f"{name}.r", PAIRS_TOP)
        return (
            inner.em.function(f"define internal double @{name}.r({params}) {_ATTRS}")
            + "\n"
            + ke.em.function(f"define double @{name}({params}) {_ATTRS}")
        )
    if spec.reduce == "mul":
        _emit_fold(ke, _prod_range, [ke.element], [f64_literal(1.0)])
    else:
        init = f64_literal(float("-inf") if spec.reduce == "max" else float("inf"))
        _emit_fold(ke, _extremum_range, [ke.element, "i1"], [init, "false"])
    return ke.em.function(f"define double @{name}({params}) {_ATTRS}")


def _map_function(
    spec: KernelSpec, name: str, lowerings: Mapping[str, Lowering], decls: set[str], masked: bool
) -> str:
    """A map kernel function; `masked`: the _splat entry (`_codegen`'s ABI), whose
    operands broadcast along a row are read from a few copies of their value."""
    ke = KernelEmit(spec, lowerings, Emitter(decls), masked=masked)
    ke.load_leaves()
    ke.big_cond = ke.em.assign("icmp sgt i64 %end, 8")
    emit_map(ke)
    return ke.em.function(f"define void @{name}({MAP_ARGS}{_consts(spec)}) {_ATTRS}")


def _rows_function(spec: KernelSpec, name: str) -> str:
    """``NAME_rows_nan`` (`_codegen`'s ABI): the _splat entry over `nrows` rows of
    `len` elements, array j's row r at ``arrays[j] + r*steps[j]`` and the output's at
    ``out + r*steps[na]``; an operand with mask 0 (broadcast along the row) is read from
    VEC copies of its row's first element. One call where the dispatcher made one per
    row: ~100 cycles a row less (a pairwise distance over 1000x1000, 5% of its time).
    The _splat entry is called, not inlined: inlined, its loop ran out of registers
    (spills in the loop, measured 5-10% slower). Returns whether a row stored a NaN
    (stopping there where the caller's witness slot asks), 0 where no NaN's bits can
    depend on NumPy's calls, or -1 where the kernel cannot tell
    (`_kernel_map.nan_witness`)."""
    em = Emitter(set())
    arrays = [k for k, kind in enumerate(spec.leaves) if kind == "array"]
    na, ns = len(arrays), len(spec.leaves) - len(arrays)
    vt = f"<{VEC} x double>"
    args = em.alloca(f"[{na} x ptr]", 8)
    bufs = [em.alloca(vt) for _ in range(na)]
    bases, steps, splat = [], [], []
    for j in range(na):
        slot = em.assign(f"getelementptr ptr, ptr %arrays, i64 {j}")
        bases.append(em.assign(f"load ptr, ptr {slot}, align 8"))
        step = em.assign(f"getelementptr i64, ptr %steps, i64 {j}")
        steps.append(em.assign(f"load i64, ptr {step}, align 8"))
        mslot = em.assign(f"getelementptr double, ptr %scalars, i64 {ns + j}")
        mask = em.assign(f"load i64, ptr {mslot}, align 8")
        splat.append(em.assign(f"icmp eq i64 {mask}, 0"))
    oslot = em.assign(f"getelementptr i64, ptr %steps, i64 {na}")
    ostep = em.assign(f"load i64, ptr {oslot}, align 8")
    ext = _stream_scalars(em, ns + na + 1, rows_nt_min(1 + na))
    witness = nan_witness(spec)
    wslot = em.assign(f"getelementptr i64, ptr {ext}, i64 {ns + na + 2}")
    em.emit(f"store i64 {int(witness == 'seen')}, ptr {wslot}, align 8")
    ask = em.assign(f"getelementptr i64, ptr %scalars, i64 {ns + na + 2}")
    stop = em.assign(f"icmp ne i64 {em.assign(f'load i64, ptr {ask}, align 8')}, 0")

    def more(r: str) -> str:
        rows_left = em.assign(f"icmp slt i64 {r}, %nrows")
        if witness != "seen":
            return rows_left
        seen = em.assign(f"icmp eq i64 {em.assign(f'load i64, ptr {wslot}, align 8')}, 2")
        done = em.assign(f"and i1 {stop}, {seen}")
        return em.assign(f"and i1 {rows_left}, {em.assign(f'xor i1 {done}, true')}")

    def row(r: str, _acc: list[str]) -> list[str]:
        for j in range(na):
            off = em.assign(f"mul i64 {r}, {steps[j]}")
            at = em.assign(f"getelementptr i8, ptr {bases[j]}, i64 {off}")
            value = em.assign(f"load double, ptr {at}, align 8")
            one = em.assign(f"insertelement {vt} poison, double {value}, i64 0")
            lanes = f"<{VEC} x i32> zeroinitializer"
            copies = em.assign(f"shufflevector {vt} {one}, {vt} poison, {lanes}")
            em.emit(f"store {vt} {copies}, ptr {bufs[j]}, align 64")
            ptr = em.assign(f"select i1 {splat[j]}, ptr {bufs[j]}, ptr {at}")
            slot = em.assign(f"getelementptr ptr, ptr {args}, i64 {j}")
            em.emit(f"store ptr {ptr}, ptr {slot}, align 8")
        off = em.assign(f"mul i64 {r}, {ostep}")
        dest = em.assign(f"getelementptr i8, ptr %out, i64 {off}")
        em.emit(
            f"call void @{name}{SPLAT_SUFFIX}(ptr {args}, ptr {ext}, ptr {dest}, i64 0, "
            f"i64 %len, ptr %loops{_consts(spec, arg=True)}) #1"
        )
        return []

    em.counted_loop("0", more, 1, [], row)
    if witness == "seen":
        seen = em.assign(f"icmp eq i64 {em.assign(f'load i64, ptr {wslot}, align 8')}, 2")
        em.emit(f"ret i64 {em.assign(f'zext i1 {seen} to i64')}")
    else:
        em.emit(f"ret i64 {0 if witness == 'exact' else -1}")
    return em.function(f"define i64 @{name}{ROWS_SUFFIX}({ROWS_ARGS}{_consts(spec)}) {_ATTRS}")


def _stream_scalars(em: Emitter, slots: int, minimum: int) -> str:
    """A copy of the _splat entry's `slots` scalars (scalars, masks, elision bits), its
    streaming bit, set where the rows hold `minimum` elements or more, and a slot for
    its NaN witness (`_codegen`'s ABI; the caller sets it). Row by row,
    a kernel never streams (a row is short); streamed, blend's 1000x1000 rows ran in
    0.85x the time (nothing reads the rows back on this path: `rows_entry`)."""
    copy = em.alloca(f"[{slots + 2} x i64]", 8)
    for k in range(slots):
        src = em.assign(f"getelementptr i64, ptr %scalars, i64 {k}")
        value = em.assign(f"load i64, ptr {src}, align 8")
        dst = em.assign(f"getelementptr i64, ptr {copy}, i64 {k}")
        em.emit(f"store i64 {value}, ptr {dst}, align 8")
    total = em.assign("mul i64 %len, %nrows")
    large = em.assign(f"zext i1 {em.assign(f'icmp sge i64 {total}, {minimum}')} to i64")
    dst = em.assign(f"getelementptr i64, ptr {copy}, i64 {slots}")
    em.emit(f"store i64 {large}, ptr {dst}, align 8")
    return copy


def _source(ke: KernelEmit, lo: str, count: str) -> dict[int, str]:
    """Pointers from which the result values at ``lo + [0, count)`` are loaded."""
    ptrs = ke.ptrs_at(lo)
    if not ke.loop_nodes:
        return ptrs
    tmp = ke.em.alloca(f"[{max(BLOCK, LEAF)} x double]")
    ke.materialize(count, ptrs, tmp)
    return {ke.spec.result: tmp}


#: the order of the operands of ``(r[0]+r[1]) + (r[2]+r[3]) + ...`` in NumPy's compiled
#: pairwise sum, measured on NumPy 2.4's x86-64 wheel, whose compiler unrolled the
#: recursion once: at even depths r[3] comes first in its pair and the halves add
#: left + right, at odd depths r[2] comes first and right + left. Only NaN bits depend
#: on it; the proof checks them before a NaN sum is trusted (`_proof.nan_verdicts`).
PAIRS_TOP: Final = ((0, 1), (3, 2), (4, 5), (6, 7))
PAIRS_INNER: Final = ((0, 1), (2, 3), (4, 5), (6, 7))


def _emit_pairwise(ke: KernelEmit, recurse: str, pairs: tuple[tuple[int, int], ...]) -> None:
    """NumPy's ``pairwise_sum``: <8 sequential; <=128 eight accumulators; else the two
    halves by `recurse`."""
    em, spec = ke.em, ke.spec
    small, check, mid, big = em.label("small"), em.label("check"), em.label("mid"), em.label("big")
    lt8 = em.assign("icmp slt i64 %n, 8")
    em.emit(f"br i1 {lt8}, label %{small}, label %{check}")
    em.start_block(small)
    src = _source(ke, "%lo", "%n")
    et = ke.element  # float32 rows sum in float32, as NumPy's FLOAT_pairwise_sum
    _, (acc,) = em.counted_loop(
        "0",
        lambda i: em.assign(f"icmp slt i64 {i}, %n"),
        1,
        [(et, f64_literal(0.0))],
        lambda i, a: [ke.ctx(1).binop("fadd", a[0], ke.value(spec.result, 1, src, i, {}))],
    )
    em.emit(f"ret double {_widened(ke, acc)}")
    em.start_block(check)
    le = em.assign(f"icmp sle i64 %n, {LEAF}")
    em.emit(f"br i1 {le}, label %{mid}, label %{big}")
    em.start_block(mid)
    src = _source(ke, "%lo", "%n")
    vt = f"<{VEC} x {et}>"
    first = ke.value(spec.result, VEC, src, "0", {})
    n8 = em.assign("and i64 %n, -8")
    i, r = _accumulate(ke, src, first, n8)
    lanes = [em.assign(f"extractelement {vt} {r}, i64 {k}") for k in range(VEC)]
    c1 = ke.ctx(1)
    sums = [c1.binop("fadd", lanes[i], lanes[j]) for i, j in pairs]
    res = c1.binop("fadd", c1.binop("fadd", sums[0], sums[1]), c1.binop("fadd", sums[2], sums[3]))
    _, (res,) = em.counted_loop(
        i,
        lambda j: em.assign(f"icmp slt i64 {j}, %n"),
        1,
        [(et, res)],
        lambda j, a: [c1.binop("fadd", a[0], ke.value(spec.result, 1, src, j, {}))],
    )
    em.emit(f"ret double {_widened(ke, res)}")
    em.start_block(big)
    half = em.assign("lshr i64 %n, 1")
    n2 = em.assign(f"and i64 {half}, -8")
    lo2 = em.assign(f"add i64 %lo, {n2}")
    rest = em.assign(f"sub i64 %n, {n2}")
    consts = _consts(spec, arg=True)
    left = em.assign(
        f"call double @{recurse}(ptr %arrays, ptr %scalars, i64 %lo, i64 {n2}, "
        f"ptr %loops{consts}) #1"
    )
    right = em.assign(
        f"call double @{recurse}(ptr %arrays, ptr %scalars, i64 {lo2}, i64 {rest}, "
        f"ptr %loops{consts}) #1"
    )
    first, second = (left, right) if pairs is PAIRS_TOP else (right, left)
    total = c1.binop("fadd", _narrowed(ke, first), _narrowed(ke, second))
    em.emit(f"ret double {_widened(ke, total)}")


def _accumulate(ke: KernelEmit, src: dict[int, str], first: str, n8: str) -> tuple[str, str]:
    """The eight accumulators of a pairwise block, ``r += a[j:j+8]`` for 8 <= j < n8:
    (the index at exit, the vector). A float64 add on x86 pins its NaN order with a
    select on the accumulator (`LowerCtx.first_nan_wins`), one cycle more on the
    chain each step (a 1e5 sum took 1.2-1.3x NumPy's time). A lane that never holds
    a NaN never adds two NaNs, where the select changes nothing: the block runs with
    the pinned adds alone and again with the selects only where a lane ends NaN."""
    em, spec = ke.em, ke.spec
    vt = f"<{VEC} x {ke.element}>"

    def run(ordered: bool) -> tuple[str, str]:
        i, (r,) = em.counted_loop(
            "8",
            lambda j: em.assign(f"icmp slt i64 {j}, {n8}"),
            VEC,
            [(vt, first)],
            lambda j, a: [
                ke.ctx(VEC).binop(
                    "fadd", a[0], ke.value(spec.result, VEC, src, j, {}), ordered=ordered
                )
            ],
        )
        return i, r

    if ke.element != "double" or not ke.ctx(VEC).strict or not x86_isa():
        return run(True)  # no select to spare: one loop
    i, fast = run(False)
    nans = ke.ctx(VEC).fcmp("uno", fast, fast)
    em.declare(f"declare i1 @llvm.vector.reduce.or.v{VEC}i1(<{VEC} x i1>)")
    anynan = em.assign(f"call i1 @llvm.vector.reduce.or.v{VEC}i1(<{VEC} x i1> {nans})")
    again, join = em.label("nanblock"), em.label("summed")
    quick = em.block
    em.emit(f"br i1 {anynan}, label %{again}, label %{join}")
    em.start_block(again)
    _, careful = run(True)
    slow = em.block
    em.emit(f"br label %{join}")
    em.start_block(join)
    r = em.assign(f"phi {vt} [ {fast}, %{quick} ], [ {careful}, %{slow} ]")
    return i, r


def _widened(ke: KernelEmit, value: str) -> str:
    """A reduction's element value as the double the entry returns (exact)."""
    return ke.em.assign(f"fpext float {value} to double") if ke.element == "float" else value


def _narrowed(ke: KernelEmit, value: str) -> str:
    """A double a float32 reduction entry returned, as its float again (exact)."""
    return ke.narrow(value) if ke.element == "float" else value


def _prod_range(ke: KernelEmit, src: dict[int, str], count: str, acc: list[str]) -> list[str]:
    em = ke.em
    _, out = em.counted_loop(
        "0",
        lambda i: em.assign(f"icmp slt i64 {i}, {count}"),
        1,
        [(ke.element, acc[0])],
        lambda i, a: [ke.ctx(1).binop("fmul", a[0], ke.value(ke.spec.result, 1, src, i, {}))],
    )
    return out


#: independent vector accumulators of a max/min: one select chain ran at its latency
#: (float32 rows of 100,000 took 3.9x NumPy's time with one chain of 8 lanes, 1.1x with
#: four of 16; rows of 128: 0.48x -> 0.15x; benchmarks/npbench.py softmax)
EXTREMUM_CHAINS: Final = 4  # even: vrange's NaN compares take two chains each


def _extremum_range(ke: KernelEmit, src: dict[int, str], count: str, acc: list[str]) -> list[str]:
    """Running max/min plus a NaN flag, in EXTREMUM_CHAINS vector chains, then one, then
    element by element; lane and chain order are irrelevant for the value unless it is
    +-0 or NaN, which the dispatcher hands back to NumPy."""
    em, spec = ke.em, ke.spec
    pred = "ogt" if spec.reduce == "max" else "olt"
    w = ke.lanes  # 16 float32 lanes on AVX-512, as NumPy's loop
    ranged = _range_intrinsic(ke, w)

    def update(width: int, v: str, m: str, nan: str) -> list[str]:
        if ranged and width == w:
            return [_ranged(em, ranged, vt, spec.reduce, v, m), _or_uno(ke, w, nan, v, v)]
        ctx = ke.ctx(width)
        better = ctx.fcmp(pred, v, m)
        isnan = ctx.fcmp("uno", v, v)
        return [ctx.select(better, v, m), em.assign(f"or {ctx.bt} {nan}, {isnan}")]

    def step(width: int):
        def body(i: str, a: list[str]) -> list[str]:
            return update(width, ke.value(spec.result, width, src, i, {}), a[0], a[1])

        return body

    vt, bt = f"<{w} x {ke.element}>", f"<{w} x i1>"

    def vlimit(span: int):
        def limit(i: str) -> str:
            return em.assign(f"icmp sle i64 {em.assign(f'add i64 {i}, {span}')}, {count}")

        return limit

    chains = EXTREMUM_CHAINS

    def chained(i: str, a: list[str]) -> list[str]:
        values = [
            ke.value(spec.result, w, src, em.assign(f"add i64 {i}, {c * w}"), {})
            for c in range(chains)
        ]
        if not ranged:
            return [x for c, v in enumerate(values) for x in update(w, v, a[2 * c], a[2 * c + 1])]
        out = []  # one unordered compare finds a NaN in either of two vectors
        for c, v in enumerate(values):
            nan = a[2 * c + 1]
            if c % 2 == 0:
                nan = _or_uno(ke, w, nan, v, values[c + 1])
            out += [_ranged(em, ranged, vt, spec.reduce, v, a[2 * c]), nan]
        return out

    start = [(vt, ke.splat_var(acc[0], w)), (bt, "zeroinitializer")] * chains
    i, carried = em.counted_loop("0", vlimit(chains * w), chains * w, start, chained)
    vm, vn = carried[0], carried[1]
    for c in range(1, chains):  # the chains' values are numbers: any order
        vm, vn = (
            _ranged(em, ranged, vt, spec.reduce, carried[2 * c], vm)
            if ranged  # no NaN compare: the chains' flags hold their NaNs
            else update(w, carried[2 * c], vm, vn)[0],
            em.assign(f"or {bt} {vn}, {carried[2 * c + 1]}"),
        )
    i, (vm, vn) = em.counted_loop(i, vlimit(w), w, [(vt, vm), (bt, vn)], step(w))
    m, c1 = acc[0], ke.ctx(1)
    for lane in _halves(ke, pred, vm, w):
        m = c1.select(c1.fcmp(pred, lane, m), lane, m)
    em.declare(f"declare i1 @llvm.vector.reduce.or.v{w}i1({bt})")
    anynan = em.assign(f"call i1 @llvm.vector.reduce.or.v{w}i1({bt} {vn})")
    nan = em.assign(f"or i1 {acc[1]}, {anynan}")
    _, out = em.counted_loop(
        i,
        lambda j: em.assign(f"icmp slt i64 {j}, {count}"),
        1,
        [(ke.element, m), ("i1", nan)],
        step(1),
    )
    return out


def _or_uno(ke: KernelEmit, width: int, nan: str, a: str, b: str) -> str:
    """`nan` or, lane by lane, whether `a` or `b` is NaN (one quiet compare)."""
    ctx = ke.ctx(width)
    return ke.em.assign(f"or {ctx.bt} {nan}, {ctx.fcmp('uno', a, b)}")


def _ranged(em: Emitter, name: str, vt: str, reduce: str, v: str, m: str) -> str:
    """vrange's max/min of `v` and `m` (`_range_intrinsic`)."""
    lanes = RANGE_MASK[int(vt[1 : vt.index(" ")])]
    return em.assign(
        f"call {vt} @{name}({vt} {v}, {vt} {m}, {RANGE_ARGS[reduce]}, {vt} {m}, {lanes}, i32 4)"
    )


#: vrangepd/ps's immediate: max or min of the two, the sign of the one chosen
RANGE_ARGS: Final = {"max": "i32 5", "min": "i32 4"}
RANGE_MASK: Final = {8: "i8 -1", 16: "i16 -1"}


def _range_intrinsic(ke: KernelEmit, width: int) -> str:
    """AVX-512 DQ's vrange (a 512-bit vector of `width` lanes), or "": one instruction
    for a running max/min where a quiet compare and a blend made a chain of two (long
    rows took 1.7-1.9x NumPy's time). For numbers it picks the element the compare
    picks; a quiet NaN it passes over quietly (no invalid flag, as the quiet compare),
    so the NaN flag is an unordered compare beside it, one for two vectors in the
    chained loop; +-0 extrema go to NumPy whatever their sign."""
    bits = 64 if ke.element == "double" else 32
    if width * bits != 512 or x86_isa() != "avx512" or "+avx512dq" not in host()[1].split(","):
        return ""
    kind = "pd" if bits == 64 else "ps"
    name = f"llvm.x86.avx512.mask.range.{kind}.512"
    vt, mt = f"<{width} x {ke.element}>", f"i{width}"
    ke.em.declare(f"declare {vt} @{name}({vt}, {vt}, i32, {vt}, {mt}, i32)")
    return name


def _halves(ke: KernelEmit, pred: str, v: str, width: int) -> list[str]:
    """The two lanes left of `width` lanes of numbers folded in halves by `pred`
    (log2 steps, not `width` dependent selects: a row of 7 elements pays them too)."""
    em, et = ke.em, ke.element
    while width > 2:
        half = width // 2
        parts = []
        for first in (0, half):
            lanes = ", ".join(f"i32 {first + k}" for k in range(half))
            vt = f"<{width} x {et}>"
            parts.append(
                em.assign(f"shufflevector {vt} {v}, {vt} poison, <{half} x i32> <{lanes}>")
            )
        ctx = ke.ctx(half)
        v = ctx.select(ctx.fcmp(pred, parts[1], parts[0]), parts[1], parts[0])
        width = half
    return [em.assign(f"extractelement <2 x {et}> {v}, i64 {k}") for k in range(2)]


def _emit_fold(ke: KernelEmit, fold, types: list[str], init: list[str]) -> None:  # type: ignore[no-untyped-def]
    """A sequential fold over ``[lo, lo+n)``, block by block when loops are called."""
    em = ke.em
    if not ke.loop_nodes:
        out = fold(ke, ke.ptrs_at("%lo"), "%n", init)
    else:
        end = em.assign("add i64 %lo, %n")

        def block(blk: str, acc: list[str]) -> list[str]:
            rest = em.assign(f"sub i64 {end}, {blk}")
            small = em.assign(f"icmp slt i64 {rest}, {BLOCK}")
            count = em.assign(f"select i1 {small}, i64 {rest}, i64 {BLOCK}")
            return fold(ke, _source(ke, blk, count), count, acc)

        _, out = em.counted_loop(
            "%lo",
            lambda b: em.assign(f"icmp slt i64 {b}, {end}"),
            BLOCK,
            list(zip(types, init, strict=False)),
            block,
        )
    et = ke.element
    if len(out) == 2:
        out = [em.assign(f"select i1 {out[1]}, {et} {f64_literal(float('nan'))}, {et} {out[0]}")]
    em.emit(f"ret double {_widened(ke, out[0])}")


def module_text(bodies: list[str], decls: set[str]) -> str:
    """A whole module: declarations, functions, attribute groups (#0/#1 strict, #2/#3 fastmath)."""
    groups = [
        "attributes #0 = { strictfp nounwind }",
        "attributes #1 = { strictfp }",
        "attributes #2 = { nounwind }",
        "attributes #3 = { nounwind }",
    ]
    return "\n".join([*sorted(decls), *bodies, *groups, ""])


def swaps_marker(name: str, table: tuple[int, ...]) -> str:
    """``int NAME_swaps(int64_t *out)``: writes `table`, returns its length."""
    lines = [f"define i32 @{name}(ptr %out) {{"]
    for k, value in enumerate(table):
        lines.append(f"  %p{k} = getelementptr i64, ptr %out, i64 {k}")
        lines.append(f"  store i64 {value}, ptr %p{k}, align 8")
    return "\n".join([*lines, f"  ret i32 {len(table)}", "}", ""])
