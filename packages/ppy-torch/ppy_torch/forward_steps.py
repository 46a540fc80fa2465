"""The statements of a forward beyond calls of modules, staged on described constants.

A mixin of the method stager (`modules._MethodStager`): nanoGPT's attention and GPT
forward as written. `B, T, C = x.size()` (its rank checked in C++) and `q, k, v =
t.split(n, dim=2)` (its length checked) unpack; `if self.flash:`, `a if self.training
else b` and `targets is not None` fold on constants the guard checks; `assert t <=
self.config.block_size` is checked in C++ (a failure runs Python, which raises its
own AssertionError); `torch.arange(0, t, dtype=torch.long, device=idx.device)` and
`x[:, [-1], :]` are the ATen calls eager makes.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

from ppy_torch.graph import (
    INT,
    TENSOR,
    TENSORS,
    Arange,
    Arg,
    Const,
    IndexList,
    IntCheck,
    RankCheck,
    Unpack,
    Value,
)
from ppy_torch.stage import _refuse


class ForwardSteps:
    """Needs the stager's `expr`, `fresh`, `aten`, `assign`, `nodes`, `src`, `devices`."""

    expr: Any
    fresh: Any
    aten: Any
    assign: Any
    nodes: Any
    src: Any
    devices: dict[str, Value]

    def expr_Compare(self, node: ast.Compare) -> Arg:
        """A comparison of constants (`targets is not None`), folded as Python does."""
        if len(node.ops) != 1:
            raise _refuse(node, "a chained comparison stays Python")
        lhs, rhs = self.expr(node.left), self.expr(node.comparators[0])
        if not (isinstance(lhs, Const) and isinstance(rhs, Const)):
            raise _refuse(node, f"`{ast.unparse(node)}` is no constant")
        fold = _COMPARE.get(type(node.ops[0]))
        identity = isinstance(node.ops[0], ast.Is | ast.IsNot)
        if fold is None or (identity and lhs.value is not None and rhs.value is not None):
            raise _refuse(node, f"`{ast.unparse(node)}`: the comparison stays Python")
        return Const(bool(fold(lhs.value, rhs.value)))

    def expr_Subscript(self, node: ast.Subscript) -> Arg:
        """`x[:, [-1], :]`: full slices around one list of ints, torch's `aten.index`."""
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        lists = [i for i, e in enumerate(parts) if isinstance(e, ast.List)]
        full = all(
            isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None
            for i, e in enumerate(parts)
            if i not in lists
        )
        if len(lists) != 1 or not full:
            return super().expr_Subscript(node)
        items = parts[lists[0]].elts  # type: ignore[attr-defined]
        values = [self.expr(e) for e in items]
        if not values or not all(isinstance(v, Const) and type(v.value) is int for v in values):
            raise _refuse(node, f"`{ast.unparse(node)}`: a list index of int constants only")
        x = self.expr(node.value)
        if not (isinstance(x, Value) and x.kind == TENSOR):
            raise _refuse(node, f"`{ast.unparse(node)}` does not index a tensor")
        result = self.fresh(TENSOR)
        ints = tuple(int(v.value) for v in values)  # type: ignore[union-attr, arg-type]
        self.nodes.append(IndexList(x, lists[0], ints, result))
        return result

    def arange(self, node: ast.Call) -> Arg:
        """`torch.arange([start,] end, dtype=torch.long, device=idx.device)`."""
        bounds = [self.expr(a) for a in node.args]
        if len(bounds) == 1:
            bounds.insert(0, Const(0))
        like: Value | None = None
        long = False
        for kw in node.keywords:
            if kw.arg == "dtype":
                long = self.src.resolve(kw.value) in ("torch.long", "torch.int64")
            elif kw.arg == "device" and isinstance(kw.value, ast.Name):
                like = self.devices.get(kw.value.id)
                if like is None:
                    raise _refuse(node, "arange: a device other than a tensor's")
            else:
                raise _refuse(node, f"arange: `{kw.arg}` stays Python")
        if len(bounds) != 2 or not long or not all(_int_arg(b) for b in bounds):
            raise _refuse(node, "arange: int bounds and dtype=torch.long only")
        if like is None:  # torch's default device may be set: eager's, not the CPU
            raise _refuse(node, "arange: the device of a tensor only")
        result = self.fresh(TENSOR)
        self.nodes.append(Arange(bounds[0], bounds[1], like, result))  # type: ignore[arg-type]
        return result

    def check(self, stmt: ast.Assert) -> None:
        """`assert t <= self.config.block_size, ...`: checked in C++; a failure runs
        Python, which raises its AssertionError and message."""
        test = stmt.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            raise _refuse(stmt, "an assert other than one comparison stays Python")
        op = _CXX_COMPARE.get(type(test.ops[0]))
        lhs, rhs = self.expr(test.left), self.expr(test.comparators[0])
        if op is None or not (_int_arg(lhs) and _int_arg(rhs)):
            raise _refuse(stmt, "an assert compares sizes and ints only")
        if isinstance(lhs, Const) and isinstance(rhs, Const):
            if not _COMPARE[type(test.ops[0])](lhs.value, rhs.value):
                raise _refuse(stmt, "the assert always fails")
            return
        self.nodes.append(IntCheck(op, lhs, rhs))  # type: ignore[arg-type]

    def expr_IfExp(self, node: ast.IfExp) -> Arg:
        """`self.dropout if self.training else 0`: a test of constants picks its side."""
        return self.expr(node.body if self.constant_test(node.test) else node.orelse)

    def constant_test(self, test: ast.expr) -> bool:
        value = self.expr(test)
        if not isinstance(value, Const):
            raise _refuse(test, f"`{ast.unparse(test)}` is no constant; a branch stays Python")
        return bool(value.value)

    def unpack(self, stmt: ast.Assign, targets: list[ast.expr]) -> bool:
        """`B, T, C = x.size()` (the sizes, its rank checked) and `q, k, v = t.split(n,
        dim=2)` (a tensor list, its length checked); False for any other value."""
        value = stmt.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "size"
            and not value.args
            and not value.keywords
        ):
            x = self.expr(value.func.value)
            if isinstance(x, Value) and x.kind == TENSOR:
                self.nodes.append(RankCheck(x, len(targets)))
                for dim, target in enumerate(targets):
                    self.assign(target, self.aten(stmt, "size", [x, Const(dim)], {}), stmt)
                return True
        if isinstance(value, ast.Tuple):
            return False
        listed = self.expr(value)
        if not (isinstance(listed, Value) and listed.kind == TENSORS):
            raise _refuse(stmt, f"`{ast.unparse(value)}` is unpacked: a size or a split only")
        results = tuple(self.fresh(TENSOR) for _ in targets)
        self.nodes.append(Unpack(listed, results))
        for target, result in zip(targets, results, strict=True):
            self.assign(target, result, stmt)
        return True


_COMPARE = {
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}


_CXX_COMPARE = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}


def _int_arg(arg: Arg) -> bool:
    return (isinstance(arg, Const) and type(arg.value) is int) or (
        isinstance(arg, Value) and arg.kind == INT
    )


__all__ = ["ForwardSteps"]
