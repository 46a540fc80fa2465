"""The function of a columnar kernel around its ops (`_columnar_emit._Kernel`): the
entry (operands' structs read, lengths and offsets checked), the loop of W-slot steps
(each bitmap read a word at a time, a boolean answer stored as words), and the tail
of n % W slots through zeroed scratch (nothing read or written past a buffer's end).
"""

from __future__ import annotations

from ._columnar import ColumnSpec
from ._columnar_emit import DECLS, _Kernel
from ._irtext import Emitter

#: slots per step: a boolean result is bits, so a wide step stores whole words and
#: reads each bitmap a word at a time (32 measured best on AVX2: 3x the 8-slot step);
#: a float64 result keeps 8 (wider steps spill the float vectors)
STEP_BOOL, STEP_FLOAT = 32, 8


def emit_column_kernel(spec: ColumnSpec, symbol: str) -> str:
    """The kernel function's IR text."""
    em = Emitter(set())
    k = _Kernel(spec, em, STEP_BOOL if spec.result_kind == "column_bool" else STEP_FLOAT)
    bad_len, bad_off = k.entry()
    k.splat_scalars()
    flag = k.bitmap_flag()
    bad = em.assign(f"or i1 {bad_len}, {bad_off}")
    go, stop = em.label("go"), em.label("bad")
    em.emit(f"br i1 {bad}, label %{stop}, label %{go}")
    em.start_block(stop)
    em.emit(f"ret i64 {em.assign(f'select i1 {bad_len}, i64 2, i64 3')}")
    em.start_block(go)
    full = em.assign(f"udiv i64 %n, {k.W}", "full")
    _, (nulls, err) = em.counted_loop(
        "0",
        lambda b: em.assign(f"icmp slt i64 {b}, {full}"),
        1,
        [("i64", "0"), (k.M, "0")],
        lambda b, acc: _step(k, b, acc),
    )
    nulls, err = _tail(k, full, nulls, err)
    info1 = em.assign("getelementptr i64, ptr %info, i64 1")
    em.emit(f"store i64 {nulls}, ptr %info, align 8")
    em.emit(f"store i64 {em.assign(f'zext i1 {flag} to i64')}, ptr {info1}, align 8")
    raised = em.assign(f"icmp ne {k.M} {err}, 0")
    em.emit(f"ret i64 {em.assign(f'zext i1 {raised} to i64')}")
    header = (
        f"define i64 @{symbol}(ptr noalias %arrays, ptr noalias %scalars, ptr noalias %outv, "
        "ptr noalias %outm, i64 %n, ptr noalias %info) nounwind"
    )
    return em.function(header)


def _word_at(k: _Kernel, b: str) -> dict[int, tuple[str, str | None]]:
    """Where word `b` of each array's validity (and a boolean array's values) is."""
    em = k.em
    at: dict[int, tuple[str, str | None]] = {}
    start = em.assign(f"mul i64 {b}, {k.WB}")
    for vid, leaf in k.leaves.items():
        idx = em.assign(f"mul i64 {start}, {leaf.vstep}")  # 0 with no bitmap: all ones
        valid = em.assign(f"getelementptr i8, ptr {leaf.vsrc}, i64 {idx}")
        data = None
        if k.spec.leaves[vid] == "b":
            data = em.assign(f"getelementptr i8, ptr {leaf.data}, i64 {start}")
        at[vid] = (valid, data)
    return at


def _compute(
    k: _Kernel, data: dict[int, str], words: dict[int, tuple[str, str | None]]
) -> tuple[str, str, str]:
    """(values, validity word, error word) of one step: `data` points at each float64
    operand's W values, `words` at each array's validity and boolean value words."""
    em = k.em
    vwords: dict[int, str] = {}
    dwords: dict[int, str] = {}
    for vid, (valid, values) in words.items():
        vwords[vid] = em.assign(f"load {k.M}, ptr {valid}, align 1", "vw")
        if values is not None:
            dwords[vid] = em.assign(f"load {k.M}, ptr {values}, align 1", "dw")
    return k.slots(data, vwords, dwords)


def _step(k: _Kernel, b: str, acc: list[str]) -> list[str]:
    """The W slots of validity word `b`; the carried (null count, error word)."""
    em = k.em
    base = em.assign(f"mul i64 {b}, {k.W}")
    data = {
        vid: em.assign(f"getelementptr double, ptr {leaf.data}, i64 {base}")
        for vid, leaf in k.leaves.items()
        if k.spec.leaves[vid] == "a"
    }
    value, mword, eword = _compute(k, data, _word_at(k, b))
    if k.spec.result_kind == "column":
        at = em.assign(f"getelementptr double, ptr %outv, i64 {base}")
        em.emit(f"store {k.D} {value}, ptr {at}, align 8")
    else:
        at = em.assign(f"getelementptr {k.M}, ptr %outv, i64 {b}")
        em.emit(f"store {k.M} {value}, ptr {at}, align 1")
    em.emit(
        f"store {k.M} {mword}, ptr {em.assign(f'getelementptr {k.M}, ptr %outm, i64 {b}')}, align 1"
    )
    pop = _popcount(k, mword)
    nulls = em.assign(f"add i64 {acc[0]}, {em.assign(f'sub i64 {k.W}, {pop}')}")
    return [nulls, em.assign(f"or {k.M} {acc[1]}, {eword}")]


def _popcount(k: _Kernel, word: str) -> str:
    """The set bits of a word, as i64."""
    pop = k.em.assign(f"call {k.M} @llvm.ctpop.{k.M}({k.M} {word})")
    return pop if k.M == "i64" else k.em.assign(f"zext {k.M} {pop} to i64")


def _copy(k: _Kernel, dst: str, src: str, nbytes: str) -> None:
    k.em.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {src}, i64 {nbytes}, i1 false)")


def _tail(k: _Kernel, full: str, nulls: str, err: str) -> tuple[str, str]:
    """The last n % W slots: what they read (float64 values, bitmap and boolean bytes)
    copied into zeroed W-slot buffers, computed as a whole step, the lanes past n
    masked off and only the bytes that exist stored (nothing is read or written past
    any buffer's end)."""
    em = k.em
    rest = em.assign(f"urem i64 %n, {k.W}", "rest")
    some, done = em.label("tail"), em.label("end")
    before = em.block
    em.emit(f"br i1 {em.assign(f'icmp ne i64 {rest}, 0')}, label %{some}, label %{done}")
    em.start_block(some)
    base = em.assign(f"mul i64 {full}, {k.W}")
    size = em.assign(f"shl i64 {rest}, 3")
    nbytes = em.assign(f"lshr i64 {em.assign(f'add i64 {rest}, 7')}, 3")  # bitmap bytes
    data: dict[int, str] = {}
    for vid, leaf in k.leaves.items():
        if k.spec.leaves[vid] != "a":
            continue
        scratch = em.alloca(f"[{k.W} x double]", 64)
        em.emit(f"store {k.D} zeroinitializer, ptr {scratch}, align 64")
        _copy(k, scratch, em.assign(f"getelementptr double, ptr {leaf.data}, i64 {base}"), size)
        data[vid] = scratch
    words: dict[int, tuple[str, str | None]] = {}
    for vid, (valid, values) in _word_at(k, full).items():
        pair: list[str | None] = []
        for src in (valid, values):
            if src is None:
                pair.append(None)
                continue
            word = em.alloca(k.M, 8)
            em.emit(f"store {k.M} 0, ptr {word}, align 8")
            _copy(k, word, src, nbytes)
            pair.append(word)
        words[vid] = (pair[0] or valid, pair[1])
    value, mword, eword = _compute(k, data, words)
    keep = em.assign(f"sub i64 {em.assign(f'shl i64 1, {rest}')}, 1")  # the slots < n
    keep = keep if k.M == "i64" else em.assign(f"trunc i64 {keep} to {k.M}")
    mword = em.assign(f"and {k.M} {mword}, {keep}")
    eword = em.assign(f"and {k.M} {eword}, {keep}")
    out = em.alloca(f"[{k.W} x double]", 64)
    if k.spec.result_kind == "column":
        em.emit(f"store {k.D} {value}, ptr {out}, align 64")
        _copy(k, em.assign(f"getelementptr double, ptr %outv, i64 {base}"), out, size)
    else:
        em.emit(f"store {k.M} {em.assign(f'and {k.M} {value}, {keep}')}, ptr {out}, align 8")
        _copy(k, em.assign(f"getelementptr {k.M}, ptr %outv, i64 {full}"), out, nbytes)
    mout = em.alloca(k.M, 8)
    em.emit(f"store {k.M} {mword}, ptr {mout}, align 8")
    _copy(k, em.assign(f"getelementptr {k.M}, ptr %outm, i64 {full}"), mout, nbytes)
    pop = _popcount(k, mword)
    tnulls = em.assign(f"add i64 {nulls}, {em.assign(f'sub i64 {rest}, {pop}')}")
    terr = em.assign(f"or {k.M} {err}, {eword}")
    last = em.block
    em.emit(f"br label %{done}")
    em.start_block(done)
    out_nulls = em.assign(f"phi i64 [ {nulls}, %{before} ], [ {tnulls}, %{last} ]")
    out_err = em.assign(f"phi {k.M} [ {err}, %{before} ], [ {terr}, %{last} ]")
    return out_nulls, out_err


def module_text(bodies: list[str]) -> str:
    """A module of columnar kernels."""
    return "\n".join([*DECLS, *bodies, ""])


__all__ = ["STEP_BOOL", "STEP_FLOAT", "emit_column_kernel", "module_text"]
