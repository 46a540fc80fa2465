"""Which arithmetic nodes need x86's first-NaN rule made explicit.

`LowerCtx.first_nan_wins` pins which NaN an add/sub/mul/div returns when both of its
operands are NaN (LLVM's code generator was seen swapping the operands of the pinned
instruction). That select is needed only where both operands can be NaN with
different bits. Each value gets a NaN class: None where it is never NaN (a non-NaN
constant, a leaf the caller proved non-NaN), else a label such that two NaN values of
one label always have the same bits:

- a leaf is its own label;
- ``u op w`` with ``w`` never NaN (or both of one label) keeps ``u``'s label: when that
  leaf is NaN, every value of its label is the leaf's NaN quieted (x86 returns the NaN
  operand's bits when the other is not NaN); when it is not, a NaN of the label was
  made by an invalid operation, which always gives x86's default NaN;
- ``x*x``, ``sqrt(x)`` and ``1/x`` likewise keep ``x``'s label;
- anything else (``-x`` flips a NaN's sign, library loops, selects) is a new label.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping

from ._spec import POW_FAST, KernelSpec, Node, const_value

_ARITH = frozenset({"add", "sub", "mul", "div"})
_KEEPS_LABEL = frozenset({"square", "sqrt", "reciprocal"})


def _class_of(spec: KernelSpec, vid: int, node: Node, classes: list[int | None]) -> int | None:
    if node.op == "const":  # a hoisted literal (`_hoist`; value None here) is never NaN
        return None if const_value(spec, vid) == const_value(spec, vid) else vid
    if node.op in _ARITH:
        a, b = (classes[x] for x in node.args)
        return a if b is None or a == b else b if a is None else vid
    kind = node.attr("op") if node.op == "unary" else None
    if node.op == "pow" and node.attr("scalar_fast_path", False):
        kind = POW_FAST.get(const_value(spec, node.args[1]))  # type: ignore[arg-type]
    return classes[node.args[0]] if kind in _KEEPS_LABEL else vid


@functools.cache
def unordered_nodes(spec: KernelSpec, nan_free: frozenset[int] = frozenset()) -> frozenset[Node]:
    """The add/sub/mul/div nodes of `spec` whose two operands are never both NaN with
    different bits, given that the leaves `nan_free` are never NaN: their result has
    the same bits whichever operand x86 takes first."""
    nl = len(spec.leaves)
    classes: list[int | None] = [None if k in nan_free else k for k in range(nl)]
    free: set[Node] = set()
    for k, node in enumerate(spec.nodes):
        if node.op in _ARITH:
            a, b = (classes[x] for x in node.args)
            if a is None or b is None or a == b:
                free.add(node)
        classes.append(_class_of(spec, nl + k, node, classes))
    return frozenset(free)


#: in a swap node's right bits (`swap_nodes`): its right operand is that array leaf
#: itself, elided only where the call's argument is a temporary (a call's result)
RIGHT_IS_LEAF = 1 << 32


@functools.cache
def swap_nodes(spec: KernelSpec) -> Mapping[Node, tuple[int, int]]:
    """The add/mul nodes whose operands NumPy swaps where it elides a temporary
    (numpy/_core/src/multiarray/temp_elide.c): ``l + r`` with `l` an array leaf and
    `r` a temporary of `l`'s shape holding >= 256 KiB runs as ``np.add(r, l, out=r)``
    unless `l` is a temporary too (then ``np.add(l, r, out=l)``). `r` is a temporary
    when it is an array-valued intermediate, or an array leaf fed by a call's result
    (reference count 1: the dispatcher tells per call). An intermediate on the left is
    itself a temporary of the right's shape, never swapped. Nodes in
    `unordered_nodes` are left out: there the order cannot matter. Each maps to (`l`'s
    array leaf ordinal, the bits of `r`'s array leaves, bit j for the j-th array
    leaf, with `RIGHT_IS_LEAF` where `r` is that leaf), in the order of `spec.nodes`."""
    nl, free = len(spec.leaves), unordered_nodes(spec)
    ordinal = {k: j for j, k in enumerate(k for k, c in enumerate(spec.leaves) if c == "array")}
    bits: list[int] = [1 << ordinal[k] if k in ordinal else 0 for k in range(nl)]
    found: dict[Node, tuple[int, int]] = {}
    for node in spec.nodes:
        bits.append(functools.reduce(operator.or_, (bits[a] for a in node.args), 0))
        if node.op not in ("add", "mul") or node in free:
            continue
        left, right = node.args
        if left in ordinal and right >= nl and bits[right]:
            found.setdefault(node, (ordinal[left], bits[right]))
        elif left in ordinal and right in ordinal and left != right:
            found.setdefault(node, (ordinal[left], bits[right] | RIGHT_IS_LEAF))
    return found
