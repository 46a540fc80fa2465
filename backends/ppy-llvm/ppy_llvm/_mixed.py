"""int64 arrays in a float64 kernel: converted as they are loaded, as NumPy casts them.

Where an int64 array meets float64 (``histw / histu``: a float64 array divided by
int64 counts; ``u * 0.5``; ``a / b`` of two int64 arrays), NumPy casts the ints to
float64 through a buffered cast (to nearest, as C's conversion: exact up to 2^53) and
runs its float64 loop; a kernel reads the int64 buffer directly and converts each
element where it loads it (one pass, no temporary). Such a leaf is an ``int`` leaf of
the spec (``j`` to the dispatcher, which guards an exact int64 ndarray there).

Only where NumPy itself computes in float64: every use of an int value is ``+ - *``
whose other operand is float64 (an array, a float literal, a float result; not a
float variable, whose int value would make NumPy's answer int64) or ``/`` (NumPy's
true division of ints is float64). The int64 parts of a tree (``(u * 2) / w``,
``u + k`` with a Python int k: ``int_scalar``, ``n`` to the dispatcher, which takes
only a Python int there) are `INT_ATTR` nodes, computed in int64 as NumPy does
(wrapping, `_lower_int`) and converted where a float64 operation reads them. Maps
only, without library loops (which read their operands' buffers as float64) and
without a node NumPy's temporary elision may swap (the elision table numbers float64
leaves only): E2049 otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._errors import LlvmBackendError
from ._lower_int import lower_int
from ._nan_order import swap_nodes
from ._spec import KernelSpec, LeafKind, loop_name

if TYPE_CHECKING:
    from ._codegen import KernelEmit
    from ._lower import LowerCtx

#: the spec's leaf kind of an int64 array read by a float64 kernel
INT_LEAF = "int"
#: a Python int an int64 node of a float64 kernel reads (``n``: its int64 bits in the
#: slot, guarded a Python int by the dispatcher; float64 uses read it converted)
INT_SCALAR = "int_scalar"
#: the attribute of a node a float64 kernel computes in int64 (as NumPy does)
INT_ATTR = "int"
_ARITH = ("tensor.add", "tensor.sub", "tensor.mul")
_INT_OPS = frozenset(
    f"tensor.{n}" for n in ("add", "sub", "mul", "neg", "abs", "maximum", "minimum", "clip")
) | {"tensor.compare"}


def _kind(t: Any) -> str | None:
    """The element kind of a tensor type, or a scalar's kind."""
    return getattr(getattr(t, "element", t), "kind", None)


def mixed_kinds(
    leaves: list[Any], kinds: tuple[LeafKind, ...], ops: list[Any], ids: Mapping[int, int]
) -> tuple[tuple[LeafKind, ...], frozenset[int]]:
    """`kinds` with the int64 array leaves of a float64 kernel made `INT_LEAF`, and the
    ids of the ops it computes in int64 (integer ``+ - *``, negation, abs, extrema,
    clip and compares of ints, and their integer literals: `INT_ATTR` nodes); or
    `kinds` unchanged (no int64 leaf, or an integer kernel). LlvmBackendError (E2049)
    where an int meets an operation NumPy computes otherwise."""
    ints = {
        k
        for k, (v, c) in enumerate(zip(leaves, kinds, strict=True))
        if c == "array" and _kind(v.type) == "i64"
    }
    computing = [op for op in ops if op.name not in ("tensor.yield", "func.return")]
    # (a literal is no evidence: the core holds an int literal as its float)
    floats = {_kind(op.results[0].type) for op in computing if op.name != "builtin.constant"}
    if not ints or "f64" not in floats:
        return kinds, frozenset()  # an integer kernel (`_kernel_dtype`'s rules)
    made = {id(op.results[0]): op for op in computing if op.results}
    int_values: set[int] = set()  # ids of the int64 values ops compute
    flagged: set[int] = set()

    def is_int(v: Any) -> bool:
        slot = ids.get(id(v))
        return (slot is not None and slot < len(leaves) and slot in ints) or id(v) in int_values

    scalars: set[int] = set()  # scalar leaves under int ops: Python ints (`INT_SCALAR`)

    def int_scalar(v: Any) -> bool:
        slot = ids.get(id(v))
        if slot is None or slot >= len(leaves) or kinds[slot] != "scalar":
            return False
        scalars.add(slot)  # the plugin types an int op over Python ints only
        return True

    def int_literal(v: Any) -> bool:
        op = made.get(id(v))
        value = (
            op.attributes.get("value") if op is not None and op.name == "builtin.constant" else None
        )
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return ok and float(value).is_integer() and abs(value) < 2**63  # type: ignore[arg-type]

    for op in computing:
        if op.name == "builtin.constant":
            continue
        out = _kind(op.results[0].type)
        operands = list(op.operands)
        if out == "i64" or (op.name == "tensor.compare" and any(map(is_int, operands))):
            if op.name not in _INT_OPS or not all(
                is_int(v) or int_literal(v) or int_scalar(v) for v in operands
            ):
                raise LlvmBackendError("E2049", f"{op.name} of int64 beside float64")
            flagged.add(id(op))
            flagged.update(id(made[id(v)]) for v in operands if id(v) in made)  # literals
            if out == "i64":
                int_values.add(id(op.results[0]))
            continue
        if out not in ("f64", "i1"):
            raise LlvmBackendError("E2049", f"{op.name} of {out} beside float64")
        for at, v in enumerate(operands):
            if not is_int(v) or (op.name == "tensor.div" and out == "f64"):
                continue  # NumPy's true division casts both operands to float64
            other = operands[1 - at] if len(operands) == 2 else None
            float_other = _kind(getattr(other, "type", None)) == "f64" and not is_int(other)
            # a scalar variable there: NumPy's dtype is float64 for a float, int64 for an
            # int, and the dispatcher's float slot takes either (a literal is known)
            slot = ids.get(id(other))
            variable = slot is not None and slot < len(leaves) and kinds[slot] == "scalar"
            if op.name not in _ARITH or out != "f64" or not float_other or variable:
                raise LlvmBackendError("E2049", f"an int64 array under {op.name}")
    kinds = tuple(
        INT_LEAF if k in ints else INT_SCALAR if k in scalars else c for k, c in enumerate(kinds)
    )  # type: ignore[misc]
    return kinds, frozenset(flagged)


def has_int(spec: KernelSpec) -> bool:
    """Whether the kernel reads an int64 array as float64."""
    return INT_LEAF in spec.leaves


def int_refusal(spec: KernelSpec) -> None:
    """LlvmBackendError (E2049) unless the kernel's int leaves are in a float64 map
    without library loops or a node NumPy's elision may swap."""
    if not has_int(spec):
        return
    if spec.dtype != "f64" or spec.fastmath:
        raise LlvmBackendError("E2049", f"int64 arrays in a {spec.dtype} kernel")
    if spec.reduce is not None:
        raise LlvmBackendError("E2049", f"a reduction ({spec.reduce}) over int64 arrays")
    if any(loop_name(n, spec) for n in spec.nodes):
        raise LlvmBackendError("E2049", "int64 arrays beside NumPy's loop calls")
    if swap_nodes(spec):  # the elision table numbers float64 array leaves only
        raise LlvmBackendError("E2049", "int64 arrays beside a node NumPy's elision may swap")
    if spec.result < len(spec.leaves):
        raise LlvmBackendError("E2049", "an int64 array as the result")


def int_scalar_value(ctx: LowerCtx, slot: str) -> str:
    """An `INT_SCALAR`'s float64 value from its slot's double (the int's bits)."""
    bits = ctx.em.assign(f"bitcast double {slot} to i64")
    return _to_float(ctx, bits)


def load_int(ctx: LowerCtx, ptr: str) -> str:
    """`ctx.width` int64 elements at `ptr`, as float64 (to nearest, as NumPy's cast;
    inexact beyond 2^53 raises only the inexact flag, which no errstate reports)."""
    it = "i64" if ctx.width == 1 else f"<{ctx.width} x i64>"
    return _to_float(ctx, ctx.em.assign(f"load {it}, ptr {ptr}, align 8"))


def int_node(spec: KernelSpec, vid: int) -> bool:
    """Whether value `vid` is a node computed in int64 (`INT_ATTR`)."""
    nl = len(spec.leaves)
    return vid >= nl and bool(spec.nodes[vid - nl].attr(INT_ATTR))


def _int_ctx(ctx: LowerCtx) -> LowerCtx:
    """`ctx` typed int64 (for `_lower_int`'s lowerings)."""
    return replace(ctx, spec=replace(ctx.spec, dtype="i64", _key=[]))


def int_view(
    ke: KernelEmit, vid: int, width: int, ptrs: dict[int, str], i: str, memo: dict[int, str]
) -> str:
    """The int64 value (an i1 for a compare) of an int leaf or an int node, computed
    as NumPy does in int64 (wrapping); memoized under ``-1 - vid``."""
    key = -1 - vid
    if key in memo:
        return memo[key]
    ctx = _int_ctx(ke.ctx(width))
    nl = len(ke.spec.leaves)
    if vid < nl and ke.spec.leaves[vid] == INT_SCALAR:  # its slot holds the int's bits
        slot = ke.em.assign(f"load double, ptr {ke.scalar_ptr[vid]}, align 8")
        bits = ke.em.assign(f"bitcast double {slot} to i64")
        out = bits
        if width > 1:
            one = ke.em.assign(f"insertelement {ctx.ft} poison, i64 {bits}, i64 0")
            out = ke.em.assign(
                f"shufflevector {ctx.ft} {one}, {ctx.ft} poison, <{width} x i32> zeroinitializer"
            )
    elif vid < nl:
        p = ke.offset(ptrs[vid], ke.leaf_index(vid, i))
        out = ke.em.assign(f"load {ctx.ft}, ptr {p}, align 8")
    else:
        node = ke.spec.nodes[vid - nl]
        args = [int_view(ke, a, width, ptrs, i, memo) for a in node.args]
        out = lower_int(ctx, node, args)
    memo[key] = out
    return out


def int_node_value(
    ke: KernelEmit, vid: int, width: int, ptrs: dict[int, str], i: str, memo: dict[int, str]
) -> str:
    """An int node as a float64 kernel reads it: converted (a compare: its i1)."""
    value = int_view(ke, vid, width, ptrs, i, memo)
    if ke.spec.nodes[vid - len(ke.spec.leaves)].op == "compare":
        return value
    return _to_float(ke.ctx(width), value)


def _to_float(ctx: LowerCtx, raw: str) -> str:
    it = "i64" if ctx.width == 1 else f"<{ctx.width} x i64>"
    if not ctx.strict:
        return ctx.em.assign(f"sitofp {it} {raw} to {ctx.ft}")
    sfx = "f64" if ctx.width == 1 else f"v{ctx.width}f64"
    isfx = "i64" if ctx.width == 1 else f"v{ctx.width}i64"
    name = f"llvm.experimental.constrained.sitofp.{sfx}.{isfx}"
    ctx.em.declare(f"declare {ctx.ft} @{name}({it}, metadata, metadata)")
    return ctx.em.assign(
        f'call {ctx.ft} @{name}({it} {raw}, metadata !"round.tonearest", '
        'metadata !"fpexcept.strict") #1'
    )
