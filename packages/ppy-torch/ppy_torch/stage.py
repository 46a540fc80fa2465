"""Stage a whole function as an ATen region: its syntax becomes a `RegionGraph`.

The function qualifies when its parameters are annotated `torch.Tensor` (or
`int`/`float`/`bool`) with no defaults, it returns `torch.Tensor`, a fixed
`tuple[torch.Tensor, ...]` or None, and its body is straight-line assignments
and calls of `CURATED_OPS` ending in a return. Anything else is a reason: a
`StageRefusal` whose message `ppy explain` shows; the function stays Python.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from ppy_torch import ops
from ppy_torch.bind import bind
from ppy_torch.graph import (
    BOOL,
    FLOAT,
    INT,
    TENSOR,
    TENSORS,
    Arg,
    AtenCall,
    Const,
    IntOp,
    ListArg,
    Node,
    RegionGraph,
    Value,
)

_SCALAR_ANNOTATIONS = {"int": INT, "float": FLOAT, "bool": BOOL}
_INT_OPS = {"Add": "add", "Sub": "sub", "Mult": "mul", "FloorDiv": "floordiv"}
Resolver = Callable[[ast.expr], "str | None"]


class StageRefusal(Exception):
    """Why a function cannot be a region (a fallback reason, never a user error)."""

    def __init__(self, message: str, line: int = 0) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


@dataclass(frozen=True, slots=True)
class StageInput:
    """What staging reads: the function's syntax, a name resolver, its decorators."""

    node: ast.FunctionDef
    resolve: Resolver
    decorators: tuple[str, ...] = ()
    path: str = ""


def _refuse(node: ast.AST, message: str) -> StageRefusal:
    return StageRefusal(message, getattr(node, "lineno", 0))


class _Stager:
    """Walks one function body, binding names to SSA values."""

    def __init__(self, src: StageInput) -> None:
        self.src = src
        self.env: dict[str, Value] = {}
        self.nodes: list[Node] = []
        self.counter = 0
        self.effects: set[str] = {ops.EFFECT_READ}

    # -- signature ------------------------------------------------------------
    def annotation_kind(self, node: ast.expr | None, what: str) -> str:
        if node is None:
            raise _refuse(self.src.node, f"{what} has no annotation")
        if isinstance(node, ast.Name) and node.id in _SCALAR_ANNOTATIONS:
            return _SCALAR_ANNOTATIONS[node.id]
        if self.src.resolve(node) == "torch.Tensor":
            return TENSOR
        raise _refuse(
            node,
            f"{what}: annotation `{ast.unparse(node)}` is not torch.Tensor, int, float or bool",
        )

    def params(self) -> tuple[Value, ...]:
        args = self.src.node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
            raise _refuse(
                self.src.node, "a region takes plain positional parameters without defaults"
            )
        values = []
        for arg in args.args:
            value = Value(arg.arg, self.annotation_kind(arg.annotation, f"parameter `{arg.arg}`"))
            self.env[arg.arg] = value
            values.append(value)
        return tuple(values)

    def returns(self) -> tuple[int | None, bool]:
        """(number of tensor results or None for `-> None`, whether it is a tuple)."""
        node = self.src.node.returns
        if isinstance(node, ast.Constant) and node.value is None:
            return 0, False
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "tuple"
        ):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for item in items:
                if self.annotation_kind(item, "return") != TENSOR:
                    raise _refuse(node, "a region returns tensors only")
            return len(items), True
        if self.annotation_kind(node, "return") != TENSOR:
            raise _refuse(self.src.node, "a region returns tensors only")
        return 1, False

    # -- values ---------------------------------------------------------------
    def fresh(self, kind: str) -> Value:
        value = Value(str(self.counter), kind)
        self.counter += 1
        return value

    def expr(self, node: ast.expr) -> Arg:
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            raise _refuse(node, f"`{ast.unparse(node)}` is not a region operation")
        return handler(node)

    def expr_Name(self, node: ast.Name) -> Arg:
        if node.id in self.env:
            return self.env[node.id]
        raise _refuse(node, f"`{node.id}` is not a parameter or a value computed in the region")

    def expr_Constant(self, node: ast.Constant) -> Arg:
        if node.value is None or type(node.value) in (int, float, bool, str):
            return Const(node.value)
        raise _refuse(node, f"constant {node.value!r} is not supported in a region")

    def expr_Tuple(self, node: ast.Tuple | ast.List) -> Arg:
        items = [self.expr(elt) for elt in node.elts]
        if all(isinstance(i, Const) and type(i.value) is int for i in items):
            return Const(tuple(i.value for i in items))  # type: ignore[misc]
        if any(
            isinstance(i, ListArg) or (isinstance(i, Const) and type(i.value) is not int)
            for i in items
        ):
            raise _refuse(node, "a tuple in a region holds ints or tensors")
        return ListArg(tuple(items))  # type: ignore[arg-type]

    expr_List = expr_Tuple

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Arg:
        operand = self.expr(node.operand)
        if not isinstance(node.op, ast.USub):
            raise _refuse(node, f"operator {type(node.op).__name__} is not supported")
        if isinstance(operand, Const) and type(operand.value) in (int, float):
            return Const(-operand.value)  # type: ignore[operator]
        if isinstance(operand, Value) and operand.kind == INT:
            return self.int_op(node, "sub", Const(0), operand)
        return self.aten(node, "neg", [operand], {})

    def expr_BinOp(self, node: ast.BinOp) -> Arg:
        return self.binop(node, self.expr(node.left), self.expr(node.right))

    def binop(self, node: ast.BinOp, lhs: Arg, rhs: Arg) -> Arg:
        op = type(node.op).__name__
        if _is_int(lhs) and _is_int(rhs):
            if op not in _INT_OPS:
                raise _refuse(node, f"integer operator {op} is not supported")
            return self.int_op(node, _INT_OPS[op], lhs, rhs)  # type: ignore[arg-type]
        if op not in ops.OPERATORS:
            raise _refuse(node, f"operator {op} on tensors is not a curated operation")
        if not (isinstance(lhs, Value) and lhs.kind == TENSOR):
            if op not in ops.COMMUTATIVE or not (isinstance(rhs, Value) and rhs.kind == TENSOR):
                raise _refuse(node, f"`{ast.unparse(node)}`: a number on the left of {op}")
            lhs, rhs = rhs, lhs
        return self.aten(node, ops.OPERATORS[op], [lhs, rhs], {})

    def expr_Subscript(self, node: ast.Subscript) -> Arg:
        target = node.value
        if isinstance(target, ast.Attribute) and target.attr == "shape":
            receiver = self.expr(target.value)
            index = self.expr(node.slice)
            if isinstance(receiver, Value) and receiver.kind == TENSOR and _is_int(index):
                return self.aten(node, "size", [receiver, index], {})
        raise _refuse(node, f"subscript `{ast.unparse(node)}` is not supported in a region")

    def expr_Call(self, node: ast.Call) -> Arg:
        func = node.func
        receiver: Arg | None = None
        qualname = self.src.resolve(func)
        if isinstance(func, ast.Attribute) and (qualname is None or _root(func) in self.env):
            receiver = self.expr(func.value)
            if not (isinstance(receiver, Value) and receiver.kind == TENSOR):
                raise _refuse(node, f"`{ast.unparse(func)}` is not a tensor method")
            qualname = f"torch.Tensor.{func.attr}"
        name = qualname or ast.unparse(func)
        if name not in ops.CURATED_OPS:
            raise _refuse(node, f"`{name}` is not a curated torch operation")
        aten = ops.CURATED_OPS[name]
        known = {p.name for sig in ops.ATEN_CALLS[aten].signatures for p in sig.params}
        for kw in node.keywords:
            if kw.arg is not None and kw.arg not in known | {"input"}:
                raise _refuse(node, f"{aten}: no C++ signature has a parameter `{kw.arg}`")
        args = [self.expr(a) for a in node.args if not isinstance(a, ast.Starred)]
        if len(args) != len(node.args):
            raise _refuse(node, "starred arguments are not supported in a region")
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise _refuse(node, "`**` arguments are not supported in a region")
            kwargs[kw.arg] = self.expr(kw.value)
        if receiver is not None:
            args = [receiver, *_spread(aten, args)]
        return self.aten(node, aten, args, kwargs)

    def aten(self, node: ast.AST, op: str, args: list[Arg], kwargs: dict[str, Arg]) -> Value:
        bound = bind(ops.ATEN_CALLS[op], args, kwargs)
        if isinstance(bound, str):
            raise _refuse(node, f"{op}: {bound}")
        sig, bound_args = bound
        result = self.fresh(_RESULT_KINDS.get(sig.returns, INT))
        self.effects |= sig.effects
        self.nodes.append(
            AtenCall(op, sig.overload, bound_args, result, getattr(node, "lineno", 0))
        )
        return result

    def int_op(self, node: ast.AST, op: str, lhs: Value | Const, rhs: Value | Const) -> Arg:
        if isinstance(lhs, Const) and isinstance(rhs, Const):
            a, b = int(lhs.value), int(rhs.value)  # type: ignore[arg-type]
            if op == "floordiv" and b == 0:
                raise _refuse(node, "integer division by zero")
            folded = {"add": a + b, "sub": a - b, "mul": a * b}.get(op)
            return Const(a // b if folded is None else folded)
        result = self.fresh(INT)
        self.nodes.append(IntOp(op, lhs, rhs, result))
        return result

    # -- statements -----------------------------------------------------------
    def assign(self, target: ast.expr, value: Arg, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, Value):
                self.env[target.id] = value
                return
            raise _refuse(node, f"`{target.id}` must be bound to a computed value")
        raise _refuse(node, "only plain names can be assigned in a region")

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if (
                isinstance(target, ast.Tuple)
                and isinstance(stmt.value, ast.Tuple)
                and len(target.elts) == len(stmt.value.elts)
            ):
                values = [self.expr(v) for v in stmt.value.elts]
                for t, v in zip(target.elts, values, strict=True):
                    self.assign(t, v, stmt)
                return
            self.assign(target, self.expr(stmt.value), stmt)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.expr(stmt.value), stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self.expr(stmt.value)
        else:
            raise _refuse(stmt, f"`{type(stmt).__name__}` statement stays Python")

    def run(self) -> RegionGraph:
        fn = self.src.node
        for deco in self.src.decorators:
            if deco.split(".")[0] != "ppy":
                raise _refuse(fn, f"decorator `{deco}` is not a ppy decorator")
        params = self.params()
        count, is_tuple = self.returns()
        body = list(fn.body)
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body = body[1:]
        ret = body.pop() if body and isinstance(body[-1], ast.Return) else None
        for stmt in body:
            self.statement(stmt)
        results = self.results(ret, count, is_tuple)
        return RegionGraph(
            fn.name,
            params,
            tuple(self.nodes),
            results,
            is_tuple,
            frozenset(self.effects),
            self.src.path,
        )

    def results(
        self, ret: ast.Return | None, count: int | None, is_tuple: bool
    ) -> tuple[Value, ...]:
        if (
            ret is None
            or ret.value is None
            or (isinstance(ret.value, ast.Constant) and ret.value.value is None)
        ):
            if count:
                raise _refuse(self.src.node, "the function must end in `return`")
            return ()
        exprs = ret.value.elts if is_tuple and isinstance(ret.value, ast.Tuple) else [ret.value]
        values = [self.expr(e) for e in exprs]
        if len(values) != count or not all(
            isinstance(v, Value) and v.kind == TENSOR for v in values
        ):
            raise _refuse(ret, "the returned values do not match the return annotation")
        return tuple(values)  # type: ignore[arg-type]


_RESULT_KINDS = {"Tensor": TENSOR, "Tensor[]": TENSORS}


def _is_int(arg: Arg) -> bool:
    return (isinstance(arg, Const) and type(arg.value) is int) or (
        isinstance(arg, Value) and arg.kind == INT
    )


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _spread(aten: str, args: list[Arg]) -> list[Arg]:
    """`x.view(2, 3)` is `x.view((2, 3))` (the methods that take a spread shape)."""
    if aten not in ops.VARARG_METHODS or len(args) == 1 or not all(_is_int(a) for a in args):
        return args
    if all(isinstance(a, Const) for a in args):
        return [Const(tuple(a.value for a in args))]  # type: ignore[misc, union-attr]
    return [ListArg(tuple(args))]  # type: ignore[arg-type]


def stage_graph(src: StageInput) -> RegionGraph:
    """The region graph of one function; raises StageRefusal with the reason."""
    return _Stager(src).run()


__all__ = ["stage_graph", "StageInput", "StageRefusal"]
