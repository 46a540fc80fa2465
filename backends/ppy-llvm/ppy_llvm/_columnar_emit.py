"""LLVM IR text of a columnar kernel's ops (`_columnar.ColumnSpec`): the values,
validity and errors of one step of W slots (`_Kernel.slots`); `_columnar_steps` emits
the function around it (entry, steps, tail). See `_columnar` for the semantics and
`ppy_core.runtime.abi` for the C signature:

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
    "declare <8 x double> @llvm.fabs.v8f64(<8 x double>)",  # the NumPy-model twins'
    "declare <32 x double> @llvm.fabs.v32f64(<32 x double>)",
    "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
    *(f"declare i{w} @llvm.ctpop.i{w}(i{w})" for w in (8, 32)),
    '@ppy_col_ones = private unnamed_addr constant [8 x i8] c"' + "\\FF" * 8 + '", align 8',
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
    """One kernel being emitted, `W` slots (a multiple of 8) per step."""

    spec: ColumnSpec
    em: Emitter
    W: int = 8
    leaves: dict[int, _Leaf] = field(default_factory=dict)
    scalars: dict[int, str] = field(default_factory=dict)

    # -- the step's types ------------------------------------------------------------
    @property
    def WB(self) -> int:
        return self.W // 8

    @property
    def M(self) -> str:
        return f"i{self.W}"

    @property
    def D(self) -> str:
        return f"<{self.W} x double>"

    @property
    def B(self) -> str:
        return f"<{self.W} x i1>"

    @property
    def I64V(self) -> str:
        return f"<{self.W} x i64>"

    def splat(self, ty: str, value: str) -> str:
        """A constant vector of W equal lanes."""
        return "<" + ", ".join([f"{ty} {value}"] * self.W) + ">"

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
            one = self.em.assign(f"insertelement {self.D} poison, double {scalar}, i64 0")
            self.scalars[vid] = self.em.assign(
                f"shufflevector {self.D} {one}, {self.D} poison, <{self.W} x i32> zeroinitializer"
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

    # -- W slots at a time -------------------------------------------------------------
    # A boolean value and every validity mask is one i8: the 8 slots' bits, in Arrow's
    # bit order, so that logic, Kleene rules, null tests and the stores are integer ops
    # on whole bytes (an `<8 x i1>` vector lowers on x86 to a lane per bit and back).
    # Float64 values are `<8 x double>` vectors; a comparison's `<8 x i1>` becomes its
    # byte at once (a movemask), and a byte becomes a vector mask only where a float
    # select needs one (fill_null, if_else over floats).
    def slots(self, data: dict[int, str], vbytes: dict[int, str], dbytes: dict[int, str]):
        """(values, valid, errors) of the result's 8 slots of one validity byte: the
        values a vector (float64) or a byte (boolean), validity and errors bytes.
        `data` points at each float64 operand's 8 values, `vbytes` / `dbytes` are
        each array's validity / boolean value byte."""
        val: dict[int, str] = {}
        ok: dict[int, str] = {}
        err = "0"
        for vid, kind in enumerate(self.spec.leaves):
            if kind == "s":
                val[vid], ok[vid] = self.scalars[vid], ONES
                continue
            ok[vid] = vbytes[vid]
            if kind == "a":
                val[vid] = self.em.assign(f"load {self.D}, ptr {data[vid]}, align 8", "x")
            else:
                val[vid] = dbytes[vid]
        for k, node in enumerate(self.spec.nodes):
            v, m, e = self._op(node, val, ok)
            val[len(self.spec.leaves) + k], ok[len(self.spec.leaves) + k] = v, m
            if e != "0":
                err = self.em.assign(f"or {self.M} {err}, {e}")
        return val[self.spec.result], ok[self.spec.result], err

    def _as(self, vid: int, value: str, kind: str) -> str:
        """`value` of `vid` as `kind`: a float vector, or a boolean byte (a float
        constant meeting booleans is != 0)."""
        if self.spec.kind_of(vid) == kind:
            return value
        if kind == "i1":
            return self._byte(self.em.assign(f"fcmp une {self.D} {value}, zeroinitializer"))
        return self.em.assign(f"uitofp {self.B} {self._mask(value)} to {self.D}")

    def _byte(self, mask: str) -> str:
        """An `<8 x i1>` as its byte (slot k is bit k)."""
        return self.em.assign(f"bitcast {self.B} {mask} to {self.M}")

    def _mask(self, byte: str) -> str:
        """A byte as an `<8 x i1>` (for a float select)."""
        return self.em.assign(f"bitcast {self.M} {byte} to {self.B}")

    def _and(self, x: str, y: str) -> str:
        return self.em.assign(f"and {self.M} {x}, {y}")

    def _not(self, x: str) -> str:
        return self.em.assign(f"xor {self.M} {x}, -1")

    def _op(self, node, val: dict[int, str], ok: dict[int, str]) -> tuple[str, str, str]:
        em, op, a = self.em, node.op, node.args
        if op == "const":
            return self.splat("double", f64_literal(node.attr("value"))), ONES, "0"
        both = self._and(ok[a[0]], ok[a[-1]]) if len(a) == 2 else ""
        if op in ARITH:
            x, y = (self._as(v, val[v], "f64") for v in a)
            out = self._nan_bits(node, x, y, em.assign(f"{ARITH[op]} {self.D} {x}, {y}"))
            err = "0"
            if node.attr("nan_null"):  # a NaN it produces is null (pandas on Arrow)
                both = self._and(both, self._byte(em.assign(f"fcmp ord {self.D} {out}, {out}")))
            if op == "div" and node.attr("checked"):
                zero = self._byte(em.assign(f"fcmp oeq {self.D} {y}, zeroinitializer"))
                err = self._and(both, zero)
            return out, both, err
        if op in COMPARE:
            x, y = (self._as(v, val[v], "f64") for v in a)
            return self._byte(em.assign(f"fcmp {COMPARE[op]} {self.D} {x}, {y}")), both, "0"
        if op in LOGIC:
            x, y = (self._as(v, val[v], "i1") for v in a)
            return em.assign(f"{LOGIC[op]} {self.M} {x}, {y}"), both, "0"
        if op in ("and_kleene", "or_kleene"):
            return (*self._kleene(op, a, val, ok), "0")
        if op == "unary":
            return self._unary(node.attr("op"), a[0], val), ok[a[0]], "0"
        if op in NO_BITMAP:
            value = ok[a[0]] if op == "is_valid" else self._not(ok[a[0]])
            return value, ONES, "0"
        return (*self._choose(node, val, ok), "0")

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
        pick = em.assign(
            f"select {self.B} {self._isnan(second)}, {self.D} {self._quiet(second)}, {self.D} {raw}"
        )
        return em.assign(
            f"select {self.B} {self._isnan(first)}, {self.D} {self._quiet(first)}, {self.D} {pick}"
        )

    def _is_scalar(self, vid: int) -> bool:
        nl = len(self.spec.leaves)
        if vid < nl:
            return self.spec.leaves[vid] == "s"
        return self.spec.nodes[vid - nl].op == "const"

    def _isnan(self, x: str) -> str:
        return self.em.assign(f"fcmp uno {self.D} {x}, zeroinitializer")

    def _quiet(self, x: str) -> str:
        """x with the quiet bit set (x86 quiets a signalling NaN operand so)."""
        bits = self.em.assign(f"bitcast {self.D} {x} to {self.I64V}")
        quiet = self.em.assign(f"or {self.I64V} {bits}, {self.splat('i64', '2251799813685248')}")
        return self.em.assign(f"bitcast {self.I64V} {quiet} to {self.D}")

    def _unary(self, kind: str, a: int, val: dict[int, str]) -> str:
        if kind == "invert":
            return self._not(self._as(a, val[a], "i1"))
        x = self._as(a, val[a], "f64")
        if kind == "neg":
            return self.em.assign(f"fneg {self.D} {x}")
        return self.em.assign(f"call {self.D} @llvm.fabs.v{self.W}f64({self.D} {x})")

    def _kleene(self, op: str, a: tuple, val: dict[int, str], ok: dict[int, str]) -> tuple:
        """Kleene and/or on bytes: (value, validity)."""
        x, y = (self._as(v, val[v], "i1") for v in a)
        xt, yt = self._and(ok[a[0]], x), self._and(ok[a[1]], y)
        xf, yf = self._and(ok[a[0]], self._not(x)), self._and(ok[a[1]], self._not(y))
        if op == "and_kleene":
            true = self._and(xt, yt)
            false = self.em.assign(f"or {self.M} {xf}, {yf}")
        else:
            true = self.em.assign(f"or {self.M} {xt}, {yt}")
            false = self._and(xf, yf)
        return true, self.em.assign(f"or {self.M} {true}, {false}")

    def _pick(self, c: str, x: str, y: str) -> str:
        """Byte-wise `c ? x : y`."""
        return self.em.assign(f"or {self.M} {self._and(c, x)}, {self._and(self._not(c), y)}")

    def _choose(self, node, val: dict[int, str], ok: dict[int, str]) -> tuple[str, str]:
        """select, fill_null, coalesce."""
        em, a = self.em, node.args

        def pick(c: str, x: str, y: str) -> str:
            if node.kind == "i1":
                return self._pick(c, x, y)
            return em.assign(f"select {self.B} {self._mask(c)}, {self.D} {x}, {self.D} {y}")

        if node.op == "select":
            c = self._as(a[0], val[a[0]], "i1")
            x, y = (self._as(v, val[v], node.kind) for v in a[1:])
            side = self._pick(c, ok[a[1]], ok[a[2]])
            return pick(c, x, y), self._and(ok[a[0]], side)
        value, valid = self._as(a[-1], val[a[-1]], node.kind), ok[a[-1]]
        for v in reversed(a[:-1]):  # fill_null(x, fill) is coalesce(x, fill)
            value = pick(ok[v], self._as(v, val[v], node.kind), value)
            valid = em.assign(f"or {self.M} {ok[v]}, {valid}")
        return value, valid


ONES = "-1"  # a word of W valid slots (or W true ones)


__all__ = ["DECLS", "ONES"]
