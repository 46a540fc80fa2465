"""LLVM IR text of a columnar kernel (`_columnar.ColumnSpec`); see `_columnar` for the
semantics and `ppy_core.runtime.abi` for the C signature:

    int64_t k(const struct ArrowArray *const *arrays, const double *scalars,
              void *out_values, uint8_t *out_validity, int64_t n, int64_t *info)

Returns 0; 1 when a checked op would raise in Arrow (the site then runs Arrow);
2 when an array's length is not n; 3 when its offset is not a multiple of 8.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._columnar import ALWAYS_BITMAP, ARITH, COMPARE, LOGIC, NO_BITMAP, ColumnSpec
from ._irtext import Emitter, f64_literal

#: `struct ArrowArray` field offsets (int64 length, null_count, offset, n_buffers,
#: n_children, then the buffers pointer)
LENGTH, NULL_COUNT, OFFSET, BUFFERS = 0, 8, 16, 40
DECLS = (
    "declare <8 x double> @llvm.fabs.v8f64(<8 x double>)",
    "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
    "declare i8 @llvm.ctpop.i8(i8)",
    '@ppy_col_ones = private unnamed_addr constant [1 x i8] c"\\FF", align 1',
)


@dataclass(slots=True)
class _Leaf:
    """Entry-block names of one array operand."""

    vsrc: str  # validity bytes (or the one all-ones byte when there is no bitmap)
    vstep: str  # i64 1, or 0 with no bitmap
    data: str  # float64 values at the array's offset, or its value bytes (boolean)
    has: str  # i1: a bitmap is present
    may: str  # i1: it may have nulls (a bitmap and a null count other than 0)


@dataclass(slots=True)
class _Kernel:
    spec: ColumnSpec
    em: Emitter
    leaves: dict[int, _Leaf] = field(default_factory=dict)
    scalars: dict[int, str] = field(default_factory=dict)

    # -- entry ---------------------------------------------------------------------
    def entry(self) -> tuple[str, str]:
        """Read every operand's struct; (i1 `bad length`, i1 `bad offset`)."""
        em, bad_len, bad_off = self.em, "false", "false"
        na = ns = 0
        for vid, kind in enumerate(self.spec.leaves):
            if kind == "s":
                at = em.assign(f"getelementptr double, ptr %scalars, i64 {ns}")
                self.scalars[vid] = em.assign(f"load double, ptr {at}, align 8", "s")
                ns += 1
                continue
            at = em.assign(f"getelementptr ptr, ptr %arrays, i64 {na}")
            na += 1
            arr = em.assign(f"load ptr, ptr {at}, align 8", "arr")
            length, nulls, offset = (self._field(arr, o) for o in (LENGTH, NULL_COUNT, OFFSET))
            bad_len = em.assign(f"or i1 {bad_len}, {em.assign(f'icmp ne i64 {length}, %n')}")
            low = em.assign(f"and i64 {offset}, 7")
            bad_off = em.assign(f"or i1 {bad_off}, {em.assign(f'icmp ne i64 {low}, 0')}")
            bufs = em.assign(
                f"load ptr, ptr {em.assign(f'getelementptr i8, ptr {arr}, i64 {BUFFERS}')}, align 8"
            )
            vbuf = em.assign(f"load ptr, ptr {bufs}, align 8", "vbuf")
            dbuf = em.assign(
                f"load ptr, ptr {em.assign(f'getelementptr ptr, ptr {bufs}, i64 1')}, align 8"
            )
            obytes = em.assign(f"lshr i64 {offset}, 3")
            has = em.assign(f"icmp ne ptr {vbuf}, null", "has")
            may = em.assign(f"and i1 {has}, {em.assign(f'icmp ne i64 {nulls}, 0')}", "may")
            vat = em.assign(f"getelementptr i8, ptr {vbuf}, i64 {obytes}")
            vsrc = em.assign(f"select i1 {has}, ptr {vat}, ptr @ppy_col_ones")
            vstep = em.assign(f"zext i1 {has} to i64")
            if kind == "a":
                data = em.assign(f"getelementptr double, ptr {dbuf}, i64 {offset}", "d")
            else:
                data = em.assign(f"getelementptr i8, ptr {dbuf}, i64 {obytes}", "d")
            self.leaves[vid] = _Leaf(vsrc, vstep, data, has, may)
        return bad_len, bad_off

    def splat_scalars(self) -> None:
        """Each float64 scalar operand as a vector of 8 equal lanes."""
        for vid, scalar in list(self.scalars.items()):
            one = self.em.assign(f"insertelement {D} poison, double {scalar}, i64 0")
            self.scalars[vid] = self.em.assign(
                f"shufflevector {D} {one}, {D} poison, <{W} x i32> zeroinitializer"
            )

    def _field(self, arr: str, offset: int) -> str:
        at = self.em.assign(f"getelementptr i8, ptr {arr}, i64 {offset}")
        return self.em.assign(f"load i64, ptr {at}, align 8")

    def bitmap_flag(self) -> str:
        """i1: Arrow's answer would carry a validity bitmap (its preallocation rule)."""
        em, nl = self.em, len(self.spec.leaves)
        may: dict[int, str] = {}
        has: dict[int, str] = {}
        for vid in range(nl):
            leaf = self.leaves.get(vid)
            has[vid] = leaf.has if leaf else "false"
            may[vid] = leaf.may if leaf else "false"
        for k, node in enumerate(self.spec.nodes):
            vid = nl + k
            any_may = "false"
            for a in node.args:
                any_may = em.assign(f"or i1 {any_may}, {may[a]}")
            if node.op in ALWAYS_BITMAP or node.attr("nan_null"):
                has[vid] = may[vid] = "true"
            elif node.op in NO_BITMAP or node.op == "const":
                has[vid] = may[vid] = "false"
            else:
                has[vid] = may[vid] = any_may
        nonempty = em.assign("icmp ne i64 %n, 0")  # Arrow gives an empty result none
        return em.assign(f"and i1 {has[self.spec.result]}, {nonempty}")

    # -- eight slots at a time -------------------------------------------------------
    def slots(self, data: dict[int, str], vbytes: dict[int, str], dbytes: dict[int, str]):
        """(values, valid, errors) of the result's 8 slots of one validity byte, as
        vectors: `data` points at each float64 operand's 8 values, `vbytes` /
        `dbytes` are each array's validity / boolean value byte."""
        em = self.em
        val: dict[int, str] = {}
        ok: dict[int, str] = {}
        err = FALSE
        for vid, kind in enumerate(self.spec.leaves):
            if kind == "s":
                val[vid], ok[vid] = self.scalars[vid], TRUE
                continue
            ok[vid] = em.assign(f"bitcast i8 {vbytes[vid]} to {B}")
            if kind == "a":
                val[vid] = em.assign(f"load {D}, ptr {data[vid]}, align 8", "x")
            else:
                val[vid] = em.assign(f"bitcast i8 {dbytes[vid]} to {B}")
        for k, node in enumerate(self.spec.nodes):
            v, m, e = self._op(node, val, ok)
            val[len(self.spec.leaves) + k], ok[len(self.spec.leaves) + k] = v, m
            if e != FALSE:
                err = em.assign(f"or {B} {err}, {e}")
        return val[self.spec.result], ok[self.spec.result], err

    def _as(self, vid: int, value: str, kind: str) -> str:
        """`value` of `vid` as `kind` (a float constant meeting booleans is != 0)."""
        if self.spec.kind_of(vid) == kind:
            return value
        if kind == "i1":
            return self.em.assign(f"fcmp une {D} {value}, zeroinitializer")
        return self.em.assign(f"uitofp {B} {value} to {D}")

    def _op(self, node, val: dict[int, str], ok: dict[int, str]) -> tuple[str, str, str]:
        em, op, a = self.em, node.op, node.args
        if op == "const":
            return _splat("double", f64_literal(node.attr("value"))), TRUE, FALSE
        both = em.assign(f"and {B} {ok[a[0]]}, {ok[a[-1]]}") if len(a) == 2 else ""
        if op in ARITH:
            x, y = (self._as(v, val[v], "f64") for v in a)
            out = self._nan_bits(node, x, y, em.assign(f"{ARITH[op]} {D} {x}, {y}"))
            err = FALSE
            if node.attr("nan_null"):  # a NaN it produces is null (pandas on Arrow)
                both = em.assign(f"and {B} {both}, {em.assign(f'fcmp ord {D} {out}, {out}')}")
            if op == "div" and node.attr("checked"):
                zero = em.assign(f"fcmp oeq {D} {y}, zeroinitializer")
                err = em.assign(f"and {B} {both}, {zero}")
            return out, both, err
        if op in COMPARE:
            x, y = (self._as(v, val[v], "f64") for v in a)
            return em.assign(f"fcmp {COMPARE[op]} {D} {x}, {y}"), both, FALSE
        if op in LOGIC:
            x, y = (self._as(v, val[v], "i1") for v in a)
            return em.assign(f"{LOGIC[op]} {B} {x}, {y}"), both, FALSE
        if op in ("and_kleene", "or_kleene"):
            return (*self._kleene(op, a, val, ok), FALSE)
        if op == "unary":
            return self._unary(node.attr("op"), a[0], val, ok), ok[a[0]], FALSE
        if op in NO_BITMAP:
            value = ok[a[0]] if op == "is_valid" else em.assign(f"xor {B} {ok[a[0]]}, {TRUE}")
            return value, TRUE, FALSE
        return (*self._choose(node, val, ok), FALSE)

    def _nan_bits(self, node, x: str, y: str, raw: str) -> str:
        """Arrow's NaN, made explicit (LLVM may commute an fadd, and NaN bits then
        follow register placement): a NaN operand is the result, quieted, the one
        Arrow's kernel puts first when both are NaN. Measured on pyarrow 26 (x86):
        subtract/divide take their left operand's; add/multiply the array's over a
        scalar's, and of two arrays the left one's, or the right one's for the
        `_checked` kernels."""
        em, (a, b) = self.em, node.args
        first, second = x, y
        if node.op in ("add", "mul"):
            left_scalar, right_scalar = self._is_scalar(a), self._is_scalar(b)
            if (left_scalar and not right_scalar) or (
                node.attr("checked") and left_scalar == right_scalar
            ):
                first, second = y, x
        pick = em.assign(f"select {B} {self._isnan(second)}, {D} {self._quiet(second)}, {D} {raw}")
        return em.assign(f"select {B} {self._isnan(first)}, {D} {self._quiet(first)}, {D} {pick}")

    def _is_scalar(self, vid: int) -> bool:
        nl = len(self.spec.leaves)
        if vid < nl:
            return self.spec.leaves[vid] == "s"
        return self.spec.nodes[vid - nl].op == "const"

    def _isnan(self, x: str) -> str:
        return self.em.assign(f"fcmp uno {D} {x}, zeroinitializer")

    def _quiet(self, x: str) -> str:
        """x with the quiet bit set (x86 quiets a signalling NaN operand so)."""
        bits = self.em.assign(f"bitcast {D} {x} to {I64V}")
        quiet = self.em.assign(f"or {I64V} {bits}, {_splat('i64', '2251799813685248')}")
        return self.em.assign(f"bitcast {I64V} {quiet} to {D}")

    def _unary(self, kind: str, a: int, val: dict[int, str], ok: dict[int, str]) -> str:
        if kind == "invert":
            return self.em.assign(f"xor {B} {self._as(a, val[a], 'i1')}, {TRUE}")
        x = self._as(a, val[a], "f64")
        if kind == "neg":
            return self.em.assign(f"fneg {D} {x}")
        return self.em.assign(f"call {D} @llvm.fabs.v8f64({D} {x})")

    def _kleene(self, op: str, a: tuple, val: dict[int, str], ok: dict[int, str]) -> tuple:
        em = self.em
        x, y = (self._as(v, val[v], "i1") for v in a)
        xt = em.assign(f"and {B} {ok[a[0]]}, {x}")
        yt = em.assign(f"and {B} {ok[a[1]]}, {y}")
        xf = em.assign(f"and {B} {ok[a[0]]}, {em.assign(f'xor {B} {x}, {TRUE}')}")
        yf = em.assign(f"and {B} {ok[a[1]]}, {em.assign(f'xor {B} {y}, {TRUE}')}")
        if op == "and_kleene":
            true, false = em.assign(f"and {B} {xt}, {yt}"), em.assign(f"or {B} {xf}, {yf}")
        else:
            true, false = em.assign(f"or {B} {xt}, {yt}"), em.assign(f"and {B} {xf}, {yf}")
        return true, em.assign(f"or {B} {true}, {false}")

    def _choose(self, node, val: dict[int, str], ok: dict[int, str]) -> tuple[str, str]:
        """select, fill_null, coalesce."""
        em, a = self.em, node.args
        ty = D if node.kind == "f64" else B
        if node.op == "select":
            c = self._as(a[0], val[a[0]], "i1")
            x, y = (self._as(v, val[v], node.kind) for v in a[1:])
            value = em.assign(f"select {B} {c}, {ty} {x}, {ty} {y}")
            side = em.assign(f"select {B} {c}, {B} {ok[a[1]]}, {B} {ok[a[2]]}")
            return value, em.assign(f"and {B} {ok[a[0]]}, {side}")
        value, valid = self._as(a[-1], val[a[-1]], node.kind), ok[a[-1]]
        for v in reversed(a[:-1]):  # fill_null(x, fill) is coalesce(x, fill)
            mine = self._as(v, val[v], node.kind)
            value = em.assign(f"select {B} {ok[v]}, {ty} {mine}, {ty} {value}")
            valid = em.assign(f"or {B} {ok[v]}, {valid}")
        return value, valid


W = 8  # slots per step: one validity byte
D, B, I64V = f"<{W} x double>", f"<{W} x i1>", f"<{W} x i64>"


def _splat(ty: str, value: str) -> str:
    return "<" + ", ".join([f"{ty} {value}"] * W) + ">"


TRUE, FALSE = _splat("i1", "true"), "zeroinitializer"


def emit_column_kernel(spec: ColumnSpec, symbol: str) -> str:
    """The kernel function's IR text."""
    em = Emitter(set())
    k = _Kernel(spec, em)
    bad_len, bad_off = k.entry()
    k.splat_scalars()
    flag = k.bitmap_flag()
    bad = em.assign(f"or i1 {bad_len}, {bad_off}")
    go, stop = em.label("go"), em.label("bad")
    em.emit(f"br i1 {bad}, label %{stop}, label %{go}")
    em.start_block(stop)
    em.emit(f"ret i64 {em.assign(f'select i1 {bad_len}, i64 2, i64 3')}")
    em.start_block(go)
    full = em.assign("lshr i64 %n, 3", "full")
    _, (nulls, err) = em.counted_loop(
        "0",
        lambda b: em.assign(f"icmp slt i64 {b}, {full}"),
        1,
        [("i64", "0"), ("i8", "0")],
        lambda b, acc: _step(k, b, acc),
    )
    nulls, err = _tail(k, full, nulls, err)
    info1 = em.assign("getelementptr i64, ptr %info, i64 1")
    em.emit(f"store i64 {nulls}, ptr %info, align 8")
    em.emit(f"store i64 {em.assign(f'zext i1 {flag} to i64')}, ptr {info1}, align 8")
    raised = em.assign(f"icmp ne i8 {err}, 0")
    em.emit(f"ret i64 {em.assign(f'zext i1 {raised} to i64')}")
    header = (
        f"define i64 @{symbol}(ptr noalias %arrays, ptr noalias %scalars, ptr noalias %outv, "
        "ptr noalias %outm, i64 %n, ptr noalias %info) nounwind"
    )
    return em.function(header)


def _bytes(k: _Kernel, b: str) -> tuple[dict[int, str], dict[int, str]]:
    """Each array's validity byte `b` (and a boolean array's value byte)."""
    em = k.em
    vbytes: dict[int, str] = {}
    dbytes: dict[int, str] = {}
    for vid, leaf in k.leaves.items():
        idx = em.assign(f"mul i64 {b}, {leaf.vstep}")
        at = em.assign(f"getelementptr i8, ptr {leaf.vsrc}, i64 {idx}")
        vbytes[vid] = em.assign(f"load i8, ptr {at}, align 1", "vb")
        if k.spec.leaves[vid] == "b":
            at = em.assign(f"getelementptr i8, ptr {leaf.data}, i64 {b}")
            dbytes[vid] = em.assign(f"load i8, ptr {at}, align 1", "db")
    return vbytes, dbytes


def _compute(k: _Kernel, b: str, data: dict[int, str]) -> tuple[str, str, str, str]:
    """(values vector, value byte for booleans, validity byte, error byte) of byte b."""
    em = k.em
    vbytes, dbytes = _bytes(k, b)
    value, valid, err = k.slots(data, vbytes, dbytes)
    mbyte = em.assign(f"bitcast {B} {valid} to i8")
    ebyte = em.assign(f"bitcast {B} {err} to i8") if err != FALSE else "0"
    vbyte = em.assign(f"bitcast {B} {value} to i8") if k.spec.result_kind != "column" else ""
    return value, vbyte, mbyte, ebyte


def _step(k: _Kernel, b: str, acc: list[str]) -> list[str]:
    """The 8 slots of validity byte `b`; the carried (null count, error byte)."""
    em = k.em
    base = em.assign(f"shl i64 {b}, 3")
    data = {
        vid: em.assign(f"getelementptr double, ptr {leaf.data}, i64 {base}")
        for vid, leaf in k.leaves.items()
        if k.spec.leaves[vid] == "a"
    }
    value, vbyte, mbyte, ebyte = _compute(k, b, data)
    if k.spec.result_kind == "column":
        at = em.assign(f"getelementptr double, ptr %outv, i64 {base}")
        em.emit(f"store {D} {value}, ptr {at}, align 8")
    else:
        em.emit(f"store i8 {vbyte}, ptr {em.assign(f'getelementptr i8, ptr %outv, i64 {b}')}")
    em.emit(f"store i8 {mbyte}, ptr {em.assign(f'getelementptr i8, ptr %outm, i64 {b}')}")
    pop = em.assign(f"zext i8 {em.assign(f'call i8 @llvm.ctpop.i8(i8 {mbyte})')} to i64")
    nulls = em.assign(f"add i64 {acc[0]}, {em.assign(f'sub i64 8, {pop}')}")
    return [nulls, em.assign(f"or i8 {acc[1]}, {ebyte}")]


def _tail(k: _Kernel, full: str, nulls: str, err: str) -> tuple[str, str]:
    """The last n % 8 slots: their float64 values copied into zeroed 8-slot buffers,
    computed as a whole step, the lanes past n masked off and not stored."""
    em = k.em
    rest = em.assign("and i64 %n, 7", "rest")
    some, done = em.label("tail"), em.label("end")
    before = em.block
    em.emit(f"br i1 {em.assign(f'icmp ne i64 {rest}, 0')}, label %{some}, label %{done}")
    em.start_block(some)
    base = em.assign(f"shl i64 {full}, 3")
    size = em.assign(f"shl i64 {rest}, 3")
    data: dict[int, str] = {}
    for vid, leaf in k.leaves.items():
        if k.spec.leaves[vid] != "a":
            continue
        scratch = em.alloca(f"[{W} x double]", 64)
        em.emit(f"store {D} zeroinitializer, ptr {scratch}, align 64")
        src = em.assign(f"getelementptr double, ptr {leaf.data}, i64 {base}")
        em.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {scratch}, ptr {src}, i64 {size}, i1 false)")
        data[vid] = scratch
    value, vbyte, mbyte, ebyte = _compute(k, full, data)
    bit = em.assign(f"shl i64 1, {rest}")
    keep = em.assign(f"trunc i64 {em.assign(f'sub i64 {bit}, 1')} to i8")
    mbyte = em.assign(f"and i8 {mbyte}, {keep}")
    ebyte = em.assign(f"and i8 {ebyte}, {keep}")
    if k.spec.result_kind == "column":
        out = em.alloca(f"[{W} x double]", 64)
        em.emit(f"store {D} {value}, ptr {out}, align 64")
        dst = em.assign(f"getelementptr double, ptr %outv, i64 {base}")
        em.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {out}, i64 {size}, i1 false)")
    else:
        vbyte = em.assign(f"and i8 {vbyte}, {keep}")
        em.emit(f"store i8 {vbyte}, ptr {em.assign(f'getelementptr i8, ptr %outv, i64 {full}')}")
    em.emit(f"store i8 {mbyte}, ptr {em.assign(f'getelementptr i8, ptr %outm, i64 {full}')}")
    pop = em.assign(f"zext i8 {em.assign(f'call i8 @llvm.ctpop.i8(i8 {mbyte})')} to i64")
    tnulls = em.assign(f"add i64 {nulls}, {em.assign(f'sub i64 {rest}, {pop}')}")
    terr = em.assign(f"or i8 {err}, {ebyte}")
    last = em.block
    em.emit(f"br label %{done}")
    em.start_block(done)
    out_nulls = em.assign(f"phi i64 [ {nulls}, %{before} ], [ {tnulls}, %{last} ]")
    out_err = em.assign(f"phi i8 [ {err}, %{before} ], [ {terr}, %{last} ]")
    return out_nulls, out_err


def module_text(bodies: list[str]) -> str:
    """A module of columnar kernels."""
    return "\n".join([*DECLS, *bodies, ""])


__all__ = ["emit_column_kernel", "module_text"]
