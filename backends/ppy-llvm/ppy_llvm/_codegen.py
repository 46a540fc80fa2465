"""Kernel functions in LLVM IR text: one loop over the operands' buffers.

ABI (C), all pointers to float64 data of exact C-contiguous arrays::

    typedef struct { PyUFuncGenericFunction fn; void *data; } ppy_loop;
    /* elementwise: out[i] = f(...) for begin <= i < end (out is double* or npy_bool*) */
    void   NAME(char *const *arrays, const double *scalars, void *out,
                int64_t begin, int64_t end, const ppy_loop *loops);
    /* reductions over lo <= i < lo+n: sum/mean -> NumPy's pairwise_sum of f
       (the caller adds the 0.0 seed / divides), prod -> sequential product from
       1.0, max/min -> extremum, NaN if any element is NaN */
    double NAME(char *const *arrays, const double *scalars, int64_t lo, int64_t n,
                const ppy_loop *loops);
    /* NAME_splat (float64 maps without library loops): NAME, but array j is read at
       index i & m_j, m_j the int64 bits of scalars[ns + j] (ns: the scalar leaves), 0
       or -1: an operand broadcast along the row (m_j = 0) is a buffer of VEC copies of
       its value, filled once per row instead of a whole row; the slot after the
       elision bits (see NAME_swaps) is 0, or nonzero: stream the row's stores, as for
       a large output, from 64 elements; the next, the NaN witness, is 0, or 1: the
       call stores 2 there if it stored a NaN (NAME_rows_nan sets both) */
    /* NAME_rows_nan (with NAME_splat): NAME_splat over `nrows` rows of `len` elements,
       array j's row r at arrays[j] + r*steps[j] (bytes), the output's at
       out + r*steps[na]; an operand with mask 0 is read from its row's first element;
       the rows' stores stream where the call's output is large (`_kernel_map.rows_nt_min`).
       Returns 1 if a row stored a NaN (where ext's witness slot is nonzero, the rows
       after it are left unwritten), 0 if none did or no NaN's bits depend on how
       NumPy splits its calls, -1 if it cannot tell (`_kernel_map.nan_witness`) */
    int64_t NAME_rows_nan(char *const *arrays, const double *ext, void *out, int64_t len,
                          int64_t nrows, const int64_t *steps, const ppy_loop *loops);
    /* a float64 kernel with `_nan_order.swap_nodes` also exports
       int NAME_swaps(int64_t *out) (`_kernel_map.elision_table`): writes flags (1: the
       map entries' exact copy reads the int64 bits of the slot after their scalars
       (and masks), bit j set where NumPy elides the j-th swap node's temporary in this
       call; 2: they do not, a NaN result of such a call goes to NumPy; | 4: the result's
       node is the last swap node; | 8: it is none), then per swap node (at most 32) its
       left operand's array leaf and its right side's array leaves (bit k: array leaf k;
       bit 32, `_nan_order.RIGHT_IS_LEAF`: the right side is that one leaf, elided only
       where the call's argument is a temporary NumPy may reuse); returns the count of
       int64 written (at most 65) */

Elements computed by a NumPy loop (``sin``, ``power`` ...) are evaluated block
by block (`BLOCK` elements, a multiple of every SIMD width, blocks starting at
multiples of BLOCK from index 0) into stack buffers by calling that loop.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._complex import (
    bounded_compare,
    complex_parts,
    has_complex,
    lower_cabs,
    lower_cabs_compare,
)
from ._irtext import Emitter, f64_literal
from ._lower import LowerCtx, Lowering, x86_isa
from ._lower_int import lower_int
from ._mixed import int_node, int_node_value, int_scalar_value, load_int
from ._nan_order import swap_nodes, unordered_nodes
from ._spec import KernelSpec, loop_name, slot_of

BLOCK = 256
#: <fenv.h>'s FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW per machine: the
#: flags a kernel keeps across a library's loop (SciPy's loops test and clear them to
#: report through `sf_error`, NumPy's clip drops its own spurious ones, either would
#: hide the flags of `x * y` in `erf(x * y)` or `np.clip(x * y, lo, hi)`)
FE_REPORTED = {"x86_64": 0x1D, "AMD64": 0x1D, "aarch64": 0x0F, "arm64": 0x0F}
LEAF = 128  # NumPy's PW_BLOCKSIZE
#: ops whose NaN results are quiet (`KernelEmit.quiet_result`)
QUIET_OPS = frozenset({"add", "sub", "mul", "div"})
QUIET_UNARY = frozenset({"sqrt", "square", "reciprocal"})
VEC = 8  # lanes per vector iteration (also NumPy's 8 pairwise accumulators)


@dataclass(slots=True)
class KernelEmit:
    """State for emitting one kernel function."""

    spec: KernelSpec
    lowerings: Mapping[str, Lowering]
    em: Emitter
    base: dict[int, str] = field(default_factory=dict)  # array leaf -> data ptr
    scalar_ptr: dict[int, str] = field(default_factory=dict)
    scalar_val: dict[int, str] = field(default_factory=dict)
    buffers: dict[int, str] = field(default_factory=dict)
    const_ptr: dict[int, str] = field(default_factory=dict)
    big: bool = False
    big_cond: str = "false"  # i1 SSA: NumPy's call covers > 8 elements
    nan_free: frozenset[int] = frozenset()  # leaves this code runs only when not NaN
    #: NaN bits cannot reach the result unseen: every arithmetic node may take either
    #: operand first (a bool result, or a copy whose NaN results `nan_flag` records)
    any_order: bool = False
    nan_flag: str | None = None  # an i1 alloca: some result element was NaN
    masked: bool = False  # the _splat entry: array leaves read at index & mask
    masks: dict[int, str] = field(default_factory=dict)  # array leaf -> i64 0 or 1
    #: i64 SSA, or "": the elision bits (`load_elide`)
    elide: str = ""
    #: value id -> (its VEC-lane value, its scalar value), computed once before the
    #: loop (`_kernel_map.row_invariants`)
    hoisted: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: (any_order, nan_free, elision) -> (unordered nodes, swap nodes): `ctx` is asked
    #: once per emitted value, and computing these is linear in the kernel's nodes
    node_sets: dict[tuple[bool, frozenset[int], bool], tuple[Any, Any]] = field(
        default_factory=dict
    )

    @property
    def loop_nodes(self) -> list[int]:
        """Value ids computed by a NumPy loop call, in SSA order."""
        nl = len(self.spec.leaves)
        return [nl + k for k, n in enumerate(self.spec.nodes) if loop_name(n, self.spec)]

    def ctx(self, width: int) -> LowerCtx:
        """A lowering context at `width`."""
        key = (self.any_order, self.nan_free, bool(self.elide))
        sets = self.node_sets.get(key)
        if sets is None:
            unordered = (
                frozenset(self.spec.nodes)
                if self.any_order
                else unordered_nodes(self.spec, self.nan_free)
            )
            sets = self.node_sets[key] = (unordered, swap_nodes(self.spec) if self.elide else {})
        unordered, swap = sets
        return LowerCtx(
            self.em, width, not self.spec.fastmath, self.spec, self.big, unordered, self.elide, swap
        )

    def load_leaves(self) -> None:
        """Load array base pointers and scalar values in the entry block."""
        na = ns = 0
        for vid, kind in enumerate(self.spec.leaves):
            if kind in ("array", "complex", "int"):
                slot = self.em.assign(f"getelementptr ptr, ptr %arrays, i64 {na}")
                self.base[vid] = self.em.assign(f"load ptr, ptr {slot}, align 8", "arr")
                na += 1
            else:
                self.scalar_ptr[vid] = self.em.assign(
                    f"getelementptr double, ptr %scalars, i64 {ns}"
                )
                self.scalar_val[vid] = self.em.assign(
                    f"load double, ptr {self.scalar_ptr[vid]}, align 8", "s"
                )
                if kind == "int_scalar":  # the slot holds a Python int's bits: `_mixed`
                    self.scalar_val[vid] = int_scalar_value(self.ctx(1), self.scalar_val[vid])
                elif self.spec.dtype == "f32":  # NumPy 2 casts a Python float to float32
                    self.scalar_val[vid] = self.narrow(self.scalar_val[vid])
                elif self.spec.dtype in ("i64", "i32"):  # the slot holds the int's bits
                    bits = self.em.assign(f"bitcast double {self.scalar_val[vid]} to i64")
                    self.scalar_val[vid] = (
                        bits
                        if self.spec.dtype == "i64"
                        else self.em.assign(f"trunc i64 {bits} to i32")
                    )
                ns += 1
        self._load_literals()
        if self.masked:
            self._load_masks(ns)
        for vid in self.loop_nodes:
            node = self.spec.nodes[vid - len(self.spec.leaves)]
            for a in node.args:
                if (
                    a >= len(self.spec.leaves)
                    and self.spec.nodes[a - len(self.spec.leaves)].op != "const"
                ):
                    self.buffers.setdefault(a, self.em.alloca(f"[{BLOCK} x double]"))
            self.buffers[vid] = self.em.alloca(f"[{BLOCK} x double]")

    def _load_literals(self) -> None:
        """A hoisted body's literals (`_hoist`), read from its table ``%consts`` as a
        scalar leaf is from ``%scalars``: loaded once, then operands like any other."""
        nl = len(self.spec.leaves)
        for k, node in enumerate(self.spec.nodes):
            slot = slot_of(node)
            if slot is not None:
                at = self.em.assign(f"getelementptr double, ptr %consts, i64 {slot}")
                self.scalar_ptr[nl + k] = at
                self.scalar_val[nl + k] = self.em.assign(f"load double, ptr {at}, align 8", "c")

    def load_elide(self) -> str:
        """The elision bits (this module's ABI), after the scalars (and the masks)."""
        ns = sum(kind == "scalar" for kind in self.spec.leaves)
        at = ns + len(self.base) if self.masked else ns
        slot = self.em.assign(f"getelementptr i64, ptr %scalars, i64 {at}")
        return self.em.assign(f"load i64, ptr {slot}, align 8", "elide")

    def load_stream(self) -> str:
        """The _splat entry's streaming bit (this module's ABI), after the elision bits."""
        ns = sum(kind == "scalar" for kind in self.spec.leaves)
        slot = self.em.assign(f"getelementptr i64, ptr %scalars, i64 {ns + len(self.base) + 1}")
        return self.em.assign(f"load i64, ptr {slot}, align 8", "stream")

    def _load_masks(self, ns: int) -> None:
        """The _splat entry's index mask per array leaf, after the `ns` scalars."""
        for j, vid in enumerate(self.base):
            slot = self.em.assign(f"getelementptr i64, ptr %scalars, i64 {ns + j}")
            mask = self.em.assign(f"load i64, ptr {slot}, align 8", "m")
            # index * (0 or 1): loop strength reduction turns it into a pointer that
            # steps by 0 or by the vector, where `index & mask` costs two ops a load
            self.masks[vid] = self.em.assign(f"and i64 {mask}, 1", "step")

    def leaf_index(self, vid: int, index: str) -> str:
        """`index` into array leaf `vid` (masked in the _splat entry)."""
        if vid not in self.masks:
            return index
        return self.em.assign(f"mul nuw nsw i64 {index}, {self.masks[vid]}")

    def narrow(self, value: str) -> str:
        """A double rounded to float (to nearest; overflow raises the flag NumPy's cast
        raises, and the dispatcher then hands the call to NumPy or keeps inf as it)."""
        if self.spec.fastmath:
            return self.em.assign(f"fptrunc double {value} to float")
        name = "llvm.experimental.constrained.fptrunc.f32.f64"
        self.em.declare(f"declare float @{name}(double, metadata, metadata)")
        return self.em.assign(
            f'call float @{name}(double {value}, metadata !"round.tonearest", '
            f'metadata !"fpexcept.strict") #1'
        )

    @property
    def element(self) -> str:
        """The LLVM type of one float element of the kernel's arrays."""
        return {"f32": "float", "i64": "i64", "i32": "i32"}.get(self.spec.dtype, "double")

    @property
    def align(self) -> int:
        """The alignment of one element."""
        return 4 if self.spec.dtype in ("f32", "i32") else 8

    def offset(self, ptr: str, index: str, bool_out: bool = False) -> str:
        """``ptr + index`` elements."""
        return self.em.assign(
            f"getelementptr {'i8' if bool_out else self.element}, ptr {ptr}, i64 {index}"
        )

    def ptrs_at(self, index: str) -> dict[int, str]:
        """Array leaf pointers advanced to `index` (a complex128 leaf's by 16 bytes)."""
        out = {}
        for vid, p in self.base.items():
            at = self.leaf_index(vid, index)
            if self.spec.leaves[vid] == "complex":
                out[vid] = self.em.assign(f"getelementptr [2 x double], ptr {p}, i64 {at}")
            else:
                out[vid] = self.offset(p, at)
        return out

    def value(
        self, vid: int, width: int, ptrs: dict[int, str], i: str, memo: dict[int, str]
    ) -> str:
        """Emit the value of `vid` at lanes ``i .. i+width`` (recursively, memoized)."""
        if vid in memo:
            return memo[vid]
        if vid in self.hoisted:
            return self.hoisted[vid][width == 1]
        ctx = self.ctx(width)
        if int_node(self.spec, vid):  # computed in int64, read as float64: `_mixed`
            memo[vid] = int_node_value(self, vid, width, ptrs, i, memo)
            return memo[vid]
        if vid in ptrs:
            p = self.offset(ptrs[vid], self.leaf_index(vid, i))
            if vid < len(self.spec.leaves) and self.spec.leaves[vid] == "int":  # `_mixed`
                out = load_int(ctx, p)
            else:
                out = self.em.assign(f"load {ctx.ft}, ptr {p}, align {self.align}")
        elif vid in self.scalar_val:
            out = self.splat_var(self.scalar_val[vid], width)
        else:
            node = self.spec.nodes[vid - len(self.spec.leaves)]
            bounded = bounded_compare(self.spec, vid) if has_complex(self.spec) else None
            if bounded is not None:  # `abs(z) > h`: the hypot only where it matters
                cabs, other, pred = bounded
                h = self.value(other, width, ptrs, i, memo)
                leaf = self.spec.nodes[cabs - len(self.spec.leaves)].args[0]
                parts = complex_parts(ctx, ptrs[leaf], self.leaf_index(leaf, i))
                memo[vid] = lower_cabs_compare(ctx, parts, h, pred)
                return memo[vid]
            if node.op == "cabs":  # its leaf is pairs of doubles: `_complex`
                leaf = node.args[0]
                at = self.leaf_index(leaf, i)
                memo[vid] = lower_cabs(ctx, *complex_parts(ctx, ptrs[leaf], at))
                return memo[vid]
            args = [self.value(a, width, ptrs, i, memo) for a in node.args]
            integer = self.spec.dtype in ("i64", "i32") and node.op not in ("select", "logical")
            out = (lower_int if integer else self.lowerings[node.op])(ctx, node, args)
        memo[vid] = out
        return out

    def splat_var(self, scalar: str, width: int) -> str:
        """Broadcast an SSA float to `width` lanes."""
        if width == 1:
            return scalar
        et = self.element
        one = self.em.assign(f"insertelement <{width} x {et}> poison, {et} {scalar}, i64 0")
        return self.em.assign(
            f"shufflevector <{width} x {et}> {one}, <{width} x {et}> poison, "
            f"<{width} x i32> zeroinitializer"
        )

    def stage(
        self, count: str, ptrs: dict[int, str], root: str | int, dest: str, detect: bool = False
    ) -> None:
        """``dest[i] = value(root)`` for ``0 <= i < count``, in two versions (NumPy's
        operand order differs for calls over more than 8 elements; see `lower_arith`);
        `detect`: a NaN stored sets `nan_flag`."""
        if not any(n.op in ("add", "mul") for n in self.spec.nodes):
            self._stage(count, ptrs, root, dest, detect)
            return
        yes, no, join = self.em.label("big"), self.em.label("small"), self.em.label("join")
        self.em.emit(f"br i1 {self.big_cond}, label %{yes}, label %{no}")
        for label, big in ((yes, True), (no, False)):
            self.em.start_block(label)
            self.big = big
            self._stage(count, ptrs, root, dest, detect)
            self.em.emit(f"br label %{join}")
        self.big = False
        self.em.start_block(join)

    def _stage(
        self, count: str, ptrs: dict[int, str], root: str | int, dest: str, detect: bool
    ) -> None:
        vid = int(root)
        bool_out = self.spec.value_is_bool(vid)
        detect = detect and self.nan_flag is not None and not bool_out

        def body(width: int):
            def emit(i: str, acc: list[str]) -> list[str]:
                v = self.value(vid, width, ptrs, i, {})
                p = self.offset(dest, i, bool_out)
                if bool_out:
                    ty = "i8" if width == 1 else f"<{width} x i8>"
                    src = "i1" if width == 1 else f"<{width} x i1>"
                    v = self.em.assign(f"zext {src} {v} to {ty}")
                    self.em.emit(f"store {ty} {v}, ptr {p}, align 1")
                else:
                    self.em.emit(f"store {self.ctx(width).ft} {v}, ptr {p}, align {self.align}")
                return [self.or_nan(acc[0], v, width)] if detect else []

            return emit

        lanes = self.lanes

        def vec_limit(i: str) -> str:
            e = self.em.assign(f"add i64 {i}, {lanes}")
            return self.em.assign(f"icmp sle i64 {e}, {count}")

        i, acc = self.em.counted_loop(
            "0", vec_limit, lanes, self.nan_carried(detect, lanes), body(lanes)
        )
        self.note_nan(acc, lanes)
        _, acc = self.em.counted_loop(
            i,
            lambda j: self.em.assign(f"icmp slt i64 {j}, {count}"),
            1,
            self.nan_carried(detect, 1),
            body(1),
        )
        self.note_nan(acc, 1)

    @property
    def lanes(self) -> int:
        """Lanes per vector iteration of a map's loop: VEC, but 16 for float32 on an
        AVX-512 host (one 512-bit register, as NumPy's float32 loops there; at 8 lanes
        an inline float32 exp ran at half NumPy's speed on Zen 5). Every lowering is
        lane-wise, so the width changes no bits."""
        return 16 if self.spec.dtype == "f32" and x86_isa() == "avx512" else VEC

    def nan_carried(self, detect: bool, width: int) -> list[tuple[str, str]]:
        """The loop-carried NaN witness of a loop storing results (none if not `detect`)."""
        if not detect:
            return []
        return [("i64", "0")] if width == 1 else [(f"<{width} x i64>", "zeroinitializer")]

    def or_nan(self, acc: str, value: str, width: int) -> str:
        """`acc` or a witness of the NaN lanes of `value` (sign bit set). An
        arithmetic result is never a signalling NaN, so a quiet unordered compare
        (two ops a vector) raises no flag; any other (a negation, a select, a
        maximum may pass a signalling NaN through) is tested from the bits:
        ``(bits & 0x7FF...F) + 0x000F...F`` has bit 63 set exactly for a NaN."""
        it = "i64" if width == 1 else f"<{width} x i64>"
        if self.quiet_result():
            ctx = self.ctx(width)
            uno = ctx.fcmp("uno", value, value)
            return self.em.assign(
                f"or {it} {acc}, {self.em.assign(f'sext {ctx.bt} {uno} to {it}')}"
            )

        def splat(c: int) -> str:
            return str(c) if width == 1 else "<" + ", ".join([f"i64 {c}"] * width) + ">"

        bits = self.em.assign(f"bitcast {self.ctx(width).ft} {value} to {it}")
        mag = self.em.assign(f"and {it} {bits}, {splat(0x7FFF_FFFF_FFFF_FFFF)}")
        witness = self.em.assign(f"add {it} {mag}, {splat(0x000F_FFFF_FFFF_FFFF)}")
        return self.em.assign(f"or {it} {acc}, {witness}")

    def quiet_result(self) -> bool:
        """Whether the kernel's result is an IEEE arithmetic operation's (never a
        signalling NaN: see `or_nan`)."""
        spec = self.spec
        at = spec.result - len(spec.leaves)
        if at < 0 or spec.dtype != "f64" or spec.fastmath:
            return False
        node = spec.nodes[at]
        return node.op in QUIET_OPS or (node.op == "unary" and node.attr("op") in QUIET_UNARY)

    def note_nan(self, acc: list[str], width: int) -> None:
        """Fold the NaN witness a loop carried out (`nan_carried`) into `nan_flag`."""
        if not acc or self.nan_flag is None:
            return
        lanes = acc[0]
        if width > 1:
            fn = f"llvm.vector.reduce.or.v{width}i64"
            self.em.declare(f"declare i64 @{fn}(<{width} x i64>)")
            lanes = self.em.assign(f"call i64 @{fn}(<{width} x i64> {lanes})")
        nan = self.em.assign(f"icmp slt i64 {lanes}, 0")
        seen = self.em.assign(f"load i1, ptr {self.nan_flag}, align 1")
        self.em.emit(
            f"store i1 {self.em.assign(f'or i1 {seen}, {nan}')}, ptr {self.nan_flag}, align 1"
        )

    def loop_arg(self, vid: int, ptrs: dict[int, str]) -> tuple[str, int]:
        """(pointer, byte stride) of one input of a NumPy loop call."""
        if vid in ptrs:
            return ptrs[vid], 8
        if vid in self.scalar_ptr:
            return self.scalar_ptr[vid], 0
        if vid not in self.const_ptr:
            p = self.em.alloca("double", 8)
            value = self.spec.nodes[vid - len(self.spec.leaves)].attr("value")
            self.em.entry_lines.append(
                f"  store double {f64_literal(float(value))}, ptr {p}, align 8"
            )  # type: ignore[arg-type]
            self.const_ptr[vid] = p
        return self.const_ptr[vid], 0

    def call_loop(self, vid: int, count: str, ptrs: dict[int, str]) -> None:
        """Call NumPy's inner loop for node `vid` over ``count`` elements."""
        node = self.spec.nodes[vid - len(self.spec.leaves)]
        index = self.spec.loop_ops().index(loop_name(node, self.spec) or "")
        operands = [self.loop_arg(a, ptrs) for a in node.args] + [(self.buffers[vid], 8)]
        k = len(operands)
        args, steps, dims = (
            self.em.alloca(f"[{k} x ptr]", 8),
            self.em.alloca(f"[{k} x i64]", 8),
            self.em.alloca("i64", 8),
        )
        for j, (p, stride) in enumerate(operands):
            slot = self.em.assign(f"getelementptr [{k} x ptr], ptr {args}, i64 0, i64 {j}")
            self.em.emit(f"store ptr {p}, ptr {slot}, align 8")
            sslot = self.em.assign(f"getelementptr [{k} x i64], ptr {steps}, i64 0, i64 {j}")
            self.em.emit(f"store i64 {stride}, ptr {sslot}, align 8")
        self.em.emit(f"store i64 {count}, ptr {dims}, align 8")
        fslot = self.em.assign(f"getelementptr {{ptr, ptr}}, ptr %loops, i64 {index}, i32 0")
        dslot = self.em.assign(f"getelementptr {{ptr, ptr}}, ptr %loops, i64 {index}, i32 1")
        fn = self.em.assign(f"load ptr, ptr {fslot}, align 8")
        data = self.em.assign(f"load ptr, ptr {dslot}, align 8")
        # every loop: NumPy's own clip and min/max loops also clear the flags when done
        keep = FE_REPORTED.get(platform.machine())
        if keep is not None:  # the loop may clear the flags our arithmetic raised: keep them
            self.em.declare("declare i32 @fetestexcept(i32)")
            self.em.declare("declare i32 @feraiseexcept(i32)")
            saved = self.em.assign(f"call i32 @fetestexcept(i32 {keep}) #1")
        self.em.emit(f"call void {fn}(ptr {args}, ptr {dims}, ptr {steps}, ptr {data}) #1")
        if keep is not None:
            self.em.assign(f"call i32 @feraiseexcept(i32 {saved}) #1")

    def materialize(self, count: str, ptrs: dict[int, str], dest: str) -> None:
        """Evaluate the result over ``count`` elements into `dest`, loop calls first."""
        ptrs = dict(ptrs)
        nl = len(self.spec.leaves)
        for vid in self.loop_nodes:
            for a in self.spec.nodes[vid - nl].args:
                if a in self.buffers and a not in ptrs:
                    self.stage(count, ptrs, a, self.buffers[a])
                    ptrs[a] = self.buffers[a]
            self.call_loop(vid, count, ptrs)
            ptrs[vid] = self.buffers[vid]
        self.stage(count, ptrs, self.spec.result, dest, detect=True)
