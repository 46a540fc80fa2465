"""The loops dialect's array statements: `V op= E` / `V = E` over vector views.

E is an elementwise expression of + - * / over float64 vector views and scalars,
evaluated as NumPy evaluates it: one ufunc call per operation into a fresh
temporary, then the in-place ufunc (or the copy) into V. A backend fuses it into
one loop over the elements, keeping each call's NaN rule and warnings (see
ppy_llvm._loops_vector).

    loops.index_check %a, %i {axis = 0}          (IndexError if %i is out of axis 0)
    loops.vector %C, %A, %i, %lo, %hi, %k, %s
        {op = "add", views = ("is", "si"), tree = ("s0", "v1", "mul")}
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Operation, attribute, operand
from ppy_core.ir.types import ScalarType, TensorType

#: the statement's last step: the copy of `V = E`, or the in-place ufunc of `V op= E`
STATEMENT_OPS: Final = ("set", "add", "sub", "mul", "truediv")
TREE_OPS: Final = ("add", "sub", "mul", "truediv")
#: tree ops of one operand: np.negative (`-A[i, :]`), a sign flip
TREE_UNARY: Final = ("neg",)


class IndexCheckOp(Operation):
    """The IndexError NumPy raises when it takes a view `a[..., i, ...]`, at the
    point of the program where Python takes it (the view's own op comes later)."""

    name: ClassVar[str] = "loops.index_check"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory"})
    array = operand(TensorType)
    index = operand(ScalarType)
    axis = attribute(int)


class VectorOp(Operation):
    """An array statement. Operands: one array per view (`views[0]` the target),
    then each view's bounds ("i": an index, "s": start and stop, as DotOp's), then
    the scalars (float64), then per element of `loads` its array and its indices.
    `tree` is E in postfix (a lone "s0" fills the target, a lone "v1" copies into
    it): "v<k>" view k (k >= 1), "s<j>" scalar j, "e<j>" element
    j (float64, read and bounds-checked at that point), or an op of TREE_OPS. Every
    view has exactly one "s" axis, or is flat: every axis "f", the whole C-contiguous
    array as one vector, without bounds (`ppy_core.compiler.frontend.loops_flat`).
    `late`: the views whose index checks this op makes at their place in the tree
    (the target's, 0, after all of E), the others' come before it
    (`loops.index_check`)."""

    name: ClassVar[str] = "loops.vector"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory", "WriteMemory"})
    parts = operand((TensorType, ScalarType), variadic=True)
    op = attribute(str, one_of=STATEMENT_OPS)
    views = attribute(tuple)
    tree = attribute(tuple)
    loads = attribute(tuple, optional=True)  # absent: ()
    late = attribute(tuple, optional=True)

    def verify_extra(self) -> None:
        views, parts = self.attributes["views"], self.operands
        if len(views) < 1 or len(parts) < len(views):
            self.fail("a target view")
        bounds = 0
        for k, view in enumerate(views):
            t = parts[k].type
            if not isinstance(t, TensorType) or t.rank != len(view):
                self.fail(f"view {view!r} of operand {k}")
            if set(view) == {"f"}:  # flat: the whole C-contiguous array (loops_flat)
                continue
            if view.count("s") != 1 or set(view) - {"i", "s"}:
                self.fail(f"view {view!r} needs one slice")
            bounds += sum(1 if c == "i" else 2 for c in view)
        loads = self.attributes.get("loads", ())
        scalars = len(parts) - len(views) - bounds - sum(1 + rank for rank in loads)
        if scalars < 0:
            self.fail("fewer operands than its views and loads need")
        at = len(parts) - sum(1 + rank for rank in loads)
        for rank in loads:
            t = parts[at].type
            if not isinstance(t, TensorType) or t.rank != rank:
                self.fail(f"a load of rank {rank} from operand {at}")
            at += 1 + rank
        if any(not 0 <= k < len(views) for k in self.attributes.get("late", ())):
            self.fail("a late check of no view")
        counts = {"v": len(views), "s": scalars, "e": len(loads)}
        depth = 0
        for token in self.attributes["tree"]:
            if token in TREE_OPS:
                depth -= 1
            elif token in TREE_UNARY:
                pass  # one value in, one out (an empty stack underflows below)
            elif token[:1] in counts and token[1:].isdigit():
                k = int(token[1:])
                if not (1 if token[0] == "v" else 0) <= k < counts[token[0]]:
                    self.fail(f"tree token {token!r} names no operand")
                depth += 1
            else:
                self.fail(f"tree token {token!r}")
            if depth < 1:
                self.fail("tree underflows")
        if depth != 1:
            self.fail("tree leaves more than one value")


VECTOR_OPS: Final = (IndexCheckOp, VectorOp)

__all__ = ["STATEMENT_OPS", "TREE_OPS", "TREE_UNARY", "VECTOR_OPS", "IndexCheckOp", "VectorOp"]
