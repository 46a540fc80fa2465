"""The NumPy-null-model twin of a columnar kernel (`_columnar.ColumnSpec`): the same
expression over plain NumPy buffers, for a library whose float64 column is a NumPy
array in which NaN is the null (pandas' NumPy-backed Series):

    int64_t k_np(void *const *data, const double *scalars, void *out, int64_t n)

`data` holds each array operand's first element (float64, or one byte per boolean);
`out` receives n float64 values or n bytes (0/1). Semantics, per op:

- arithmetic, comparisons, neg/abs: IEEE (no fast-math); `!=` is unordered-or-unequal,
  the others are false with a NaN; a NaN operand is the result, quieted, the left
  one first (NumPy's loops compute `x op y`);
- and/or/xor (Kleene or not: a NumPy boolean holds no null), invert: on bytes;
- is_null: `isnan(x)` (a boolean is never null), is_valid its negation;
- fill_null(x, v): `isnan(x) ? v : x`.

A spec with select/coalesce has no twin (`twin_supported`). The symbol is the
kernel's own with `_np` appended. Returns 0.
"""

from __future__ import annotations

from ._columnar import ARITH, COMPARE, LOGIC, ColumnSpec
from ._irtext import Emitter, f64_literal

W = 8
D, B, I8V, I64V = f"<{W} x double>", f"<{W} x i1>", f"<{W} x i8>", f"<{W} x i64>"
TWIN_OPS = frozenset(
    {*ARITH, *COMPARE, *LOGIC, "and_kleene", "or_kleene", "unary", "is_null", "is_valid"}
    | {"fill_null", "const"}
)
SUFFIX = "_np"


def _splat(ty: str, value: str) -> str:
    return "<" + ", ".join([f"{ty} {value}"] * W) + ">"


TRUE, FALSE = _splat("i1", "true"), "zeroinitializer"


def twin_supported(spec: ColumnSpec) -> bool:
    """Whether the spec's ops all have a NumPy-model meaning here."""
    return all(node.op in TWIN_OPS for node in spec.nodes)


class _Twin:
    def __init__(self, spec: ColumnSpec, em: Emitter) -> None:
        self.spec, self.em = spec, em
        self.ptrs: dict[int, str] = {}
        self.scalars: dict[int, str] = {}

    def entry(self) -> None:
        em, na, ns = self.em, 0, 0
        for vid, kind in enumerate(self.spec.leaves):
            if kind == "s":
                at = em.assign(f"getelementptr double, ptr %scalars, i64 {ns}")
                s = em.assign(f"load double, ptr {at}, align 8")
                one = em.assign(f"insertelement {D} poison, double {s}, i64 0")
                self.scalars[vid] = em.assign(
                    f"shufflevector {D} {one}, {D} poison, <{W} x i32> zeroinitializer"
                )
                ns += 1
                continue
            at = em.assign(f"getelementptr ptr, ptr %data, i64 {na}")
            self.ptrs[vid] = em.assign(f"load ptr, ptr {at}, align 8")
            na += 1

    def compute(self, at: dict[int, str]) -> str:
        """The result vector of 8 slots; `at` points at each array's 8 elements."""
        em, val = self.em, {}
        for vid, kind in enumerate(self.spec.leaves):
            if kind == "s":
                val[vid] = self.scalars[vid]
            elif kind == "a":
                val[vid] = em.assign(f"load {D}, ptr {at[vid]}, align 1", "x")
            else:
                raw = em.assign(f"load {I8V}, ptr {at[vid]}, align 1")
                val[vid] = em.assign(f"icmp ne {I8V} {raw}, zeroinitializer")
        nl = len(self.spec.leaves)
        for k, node in enumerate(self.spec.nodes):
            val[nl + k] = self._op(node, val)
        return val[self.spec.result]

    def _as(self, vid: int, value: str, kind: str) -> str:
        if self.spec.kind_of(vid) == kind:
            return value
        if kind == "i1":
            return self.em.assign(f"fcmp une {D} {value}, zeroinitializer")
        return self.em.assign(f"uitofp {B} {value} to {D}")

    def _isnan(self, x: str) -> str:
        return self.em.assign(f"fcmp uno {D} {x}, zeroinitializer")

    def _op(self, node, val: dict[int, str]) -> str:
        em, op, a = self.em, node.op, node.args
        if op == "const":
            return _splat("double", f64_literal(node.attr("value")))
        if op in ARITH:
            x, y = (self._as(v, val[v], "f64") for v in a)
            raw = em.assign(f"{ARITH[op]} {D} {x}, {y}")
            pick = em.assign(f"select {B} {self._isnan(y)}, {D} {self._quiet(y)}, {D} {raw}")
            return em.assign(f"select {B} {self._isnan(x)}, {D} {self._quiet(x)}, {D} {pick}")
        if op in COMPARE:
            x, y = (self._as(v, val[v], "f64") for v in a)
            return em.assign(f"fcmp {COMPARE[op]} {D} {x}, {y}")
        if op in LOGIC or op in ("and_kleene", "or_kleene"):
            x, y = (self._as(v, val[v], "i1") for v in a)
            return em.assign(f"{LOGIC.get(op, op.partition('_')[0])} {B} {x}, {y}")
        if op == "unary":
            kind = node.attr("op")
            if kind == "invert":
                return em.assign(f"xor {B} {self._as(a[0], val[a[0]], 'i1')}, {TRUE}")
            x = self._as(a[0], val[a[0]], "f64")
            if kind == "neg":
                return em.assign(f"fneg {D} {x}")
            return em.assign(f"call {D} @llvm.fabs.v8f64({D} {x})")
        if op in ("is_null", "is_valid"):
            if self.spec.kind_of(a[0]) == "i1":
                return FALSE if op == "is_null" else TRUE
            pred = "uno" if op == "is_null" else "ord"
            return em.assign(f"fcmp {pred} {D} {val[a[0]]}, zeroinitializer")
        if op == "fill_null":
            if node.kind == "i1":
                return self._as(a[0], val[a[0]], "i1")
            x, fill = self._as(a[0], val[a[0]], "f64"), self._as(a[1], val[a[1]], "f64")
            return em.assign(f"select {B} {self._isnan(x)}, {D} {fill}, {D} {x}")
        raise ValueError(f"columnar {op} has no NumPy-model twin")

    def _quiet(self, x: str) -> str:
        bits = self.em.assign(f"bitcast {D} {x} to {I64V}")
        quiet = self.em.assign(f"or {I64V} {bits}, {_splat('i64', '2251799813685248')}")
        return self.em.assign(f"bitcast {I64V} {quiet} to {D}")

    def pointers(self, base: str, scratch: dict[int, str] | None = None) -> dict[int, str]:
        out = {}
        for vid, ptr in self.ptrs.items():
            if scratch is not None:
                out[vid] = scratch[vid]
                continue
            ty = "double" if self.spec.leaves[vid] == "a" else "i8"
            out[vid] = self.em.assign(f"getelementptr {ty}, ptr {ptr}, i64 {base}")
        return out

    def store(self, value: str, at: str) -> None:
        if self.spec.kind_of(self.spec.result) == "f64":
            self.em.emit(f"store {D} {value}, ptr {at}, align 1")
        else:
            byte = self.em.assign(f"zext {B} {value} to {I8V}")
            self.em.emit(f"store {I8V} {byte}, ptr {at}, align 1")


def emit_twin_kernel(spec: ColumnSpec, symbol: str) -> str:
    """The twin's IR text (symbol `symbol + "_np"`)."""
    em = Emitter(set())
    t = _Twin(spec, em)
    t.entry()
    out_ty = "double" if spec.kind_of(spec.result) == "f64" else "i8"
    full = em.assign("and i64 %n, -8", "full")

    def body(i: str, acc: list[str]) -> list[str]:
        value = t.compute(t.pointers(i))
        t.store(value, em.assign(f"getelementptr {out_ty}, ptr %outv, i64 {i}"))
        return []

    em.counted_loop("0", lambda i: em.assign(f"icmp slt i64 {i}, {full}"), W, [], body)
    rest = em.assign(f"sub i64 %n, {full}", "rest")
    some, done = em.label("tail"), em.label("end")
    em.emit(f"br i1 {em.assign(f'icmp ne i64 {rest}, 0')}, label %{some}, label %{done}")
    em.start_block(some)
    scratch: dict[int, str] = {}
    for vid, ptr in t.ptrs.items():
        size = 8 if spec.leaves[vid] == "a" else 1
        buf = em.alloca(f"[{W} x double]", 64)
        em.emit(f"store {D} zeroinitializer, ptr {buf}, align 64")
        src = em.assign(f"getelementptr i8, ptr {ptr}, i64 {em.assign(f'mul i64 {full}, {size}')}")
        nbytes = em.assign(f"mul i64 {rest}, {size}")
        em.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {buf}, ptr {src}, i64 {nbytes}, i1 false)")
        scratch[vid] = buf
    value = t.compute(t.pointers(full, scratch))
    out = em.alloca(f"[{W} x double]", 64)
    t.store(value, out)
    osize = 8 if out_ty == "double" else 1
    dst = em.assign(f"getelementptr i8, ptr %outv, i64 {em.assign(f'mul i64 {full}, {osize}')}")
    nbytes = em.assign(f"mul i64 {rest}, {osize}")
    em.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {dst}, ptr {out}, i64 {nbytes}, i1 false)")
    em.emit(f"br label %{done}")
    em.start_block(done)
    em.emit("ret i64 0")
    header = (
        f"define i64 @{symbol}{SUFFIX}(ptr noalias %data, ptr noalias %scalars, "
        "ptr noalias %outv, i64 %n) nounwind"
    )
    return em.function(header)


__all__ = ["SUFFIX", "emit_twin_kernel", "twin_supported"]
