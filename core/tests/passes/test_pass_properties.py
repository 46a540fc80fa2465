"""Property test: the core passes keep random tensor functions valid, keep their
answers bit for bit (a small interpreter runs them before and after), keep calls
with effects in order, and a second run of the pipeline changes nothing."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ppy_core.compiler.passes import CORE_PASSES
from ppy_core.ir import (
    F64,
    I1,
    Operation,
    PassManager,
    TensorType,
    Value,
    core_registry,
    parse_ir,
    print_ir,
)
from ppy_core.ir.dialects.builtin import CallOp, ConstantOp, FuncOp, ModuleOp, ReturnOp
from ppy_core.ir.dialects.tensor import (
    BINARY_OPS,
    AbsOp,
    CompareOp,
    NegOp,
    ReduceOp,
    SelectOp,
    UnaryOp,
)

N = 3
VEC = TensorType(F64, (N,))
MASK = TensorType(I1, (N,))


def _max(a: float, b: float) -> float:
    return a if math.isnan(a) or a > b or (a == b and b == 0 and math.copysign(1, b) < 0) else b


def _min(a: float, b: float) -> float:
    return -_max(-a, -b)


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "maximum": _max,
    "minimum": _min,
}


def _total(fn: Callable[[float], float]) -> Callable[[float], float]:
    return lambda x: math.nan if math.isinf(x) else fn(x)  # math.sin(inf) raises


UNARY: dict[str, Callable[[float], float]] = {
    "sin": _total(math.sin),
    "cos": _total(math.cos),
    "tanh": math.tanh,
    "square": lambda x: x * x,
}
PRED: dict[str, Callable[[float, float], bool]] = {
    "lt": lambda a, b: a < b,
    "ge": lambda a, b: a >= b,
    "ne": lambda a, b: a != b,
}


def lift(fn: Callable[..., Any], *args: Any) -> Any:
    """Apply `fn` elementwise; scalars broadcast against tuples."""
    if not any(isinstance(a, tuple) for a in args):
        return fn(*args)
    return tuple(fn(*[a[i] if isinstance(a, tuple) else a for a in args]) for i in range(N))


def reduce_(kind: str, xs: tuple[float, ...]) -> float:
    acc = xs[0]
    for x in xs[1:]:
        acc = acc + x if kind == "add" else _max(acc, x) if kind == "max" else _min(acc, x)
    return acc


def evaluate(ops: list[Operation], env: dict[int, Any], log: list[Any]) -> list[Any]:
    for op in ops:
        args = [env[id(v)] for v in op.operands]
        kind = op.name.split(".")[1]
        if isinstance(op, ReturnOp) or kind == "yield":
            return args
        if kind == "kernel":
            block = op.regions[0].block
            inner = dict(env) | {id(a): v for a, v in zip(block.args, args, strict=True)}
            out = evaluate(block.ops, inner, log)[0]
        elif isinstance(op, ConstantOp):
            out = float(op.value)
        elif isinstance(op, CallOp):
            log.append(args)
            out = float(len(log))
        elif kind in BINARY:
            out = lift(BINARY[kind], *args)
        elif kind in ("neg", "abs"):
            out = lift(abs if kind == "abs" else (lambda x: -x), args[0])
        elif isinstance(op, UnaryOp):
            out = lift(UNARY[op.op], args[0])
        elif isinstance(op, CompareOp):
            out = lift(PRED[op.pred], *args)
        elif isinstance(op, SelectOp):
            out = lift(lambda c, a, b: a if c else b, *args)
        else:
            out = reduce_(op.op, args[0])
        env[id(op.result)] = out
    raise AssertionError("no terminator")


def bits(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return tuple(bits(v) for v in value)
    return struct.pack("<d", value) if isinstance(value, float) else value


def draw_op(draw: st.DrawFn, pool: list[Value]) -> Operation:
    nums = [v for v in pool if v.type in (F64, VEC)]
    a, b = draw(st.sampled_from(nums)), draw(st.sampled_from(nums))
    shaped = VEC if VEC in (a.type, b.type) else F64
    kind = draw(
        st.sampled_from(
            ["binary", "neg", "unary", "compare", "select", "reduce", "constant", "call"]
        )
    )
    if kind == "binary":
        return BINARY_OPS[draw(st.sampled_from(sorted(BINARY)))]([a, b], [shaped])
    if kind == "neg":
        return (NegOp if draw(st.booleans()) else AbsOp)([a], [a.type])
    if kind == "unary":
        return UnaryOp([a], [a.type], {"op": draw(st.sampled_from(sorted(UNARY)))})
    if kind == "compare":
        return CompareOp(
            [a, b], [MASK if shaped == VEC else I1], {"pred": draw(st.sampled_from(sorted(PRED)))}
        )
    if kind == "select":
        cond = draw(st.sampled_from([v for v in pool if v.type in (I1, MASK)] or [None]))
        if cond is not None:
            out = VEC if any(isinstance(v.type, TensorType) for v in (cond, a, b)) else F64
            return SelectOp([cond, a, b], [out])
    if kind == "reduce" and a.type == VEC:
        return ReduceOp([a], [F64], {"op": draw(st.sampled_from(["add", "max", "min"]))})
    if kind == "call":
        return CallOp([a], [F64], {"callee": "probe"})
    value = draw(st.sampled_from([0.0, -0.0, 1.0, 2.0, math.nan, -math.inf]))
    return ConstantOp([], [F64], {"value": value})


@st.composite
def programs(draw: st.DrawFn) -> ModuleOp:
    func = FuncOp.build("f", [VEC, VEC, F64], [], ["a", "b", "x"])
    pool = list(func.args)
    for _ in range(draw(st.integers(1, 14))):
        if len(pool) > 3 and draw(st.integers(0, 4)) == 0:  # repeat an op: work for CSE
            prev = draw(st.sampled_from([v.owner for v in pool[3:]]))
            op = type(prev)(prev.operands, [r.type for r in prev.results], prev.attributes)
        else:
            op = draw_op(draw, pool)
        pool.append(func.entry.append(op).result)
    outs = draw(st.lists(st.sampled_from(pool[3:]), min_size=1, max_size=2))
    func.entry.append(ReturnOp(outs))
    func.attributes["result_types"] = tuple(v.type for v in outs)
    module = ModuleOp.empty()
    module.body.block.append(func)
    return module


def run(module: ModuleOp, args: list[Any]) -> tuple[Any, Any]:
    func = module.body.block.ops[0]
    log: list[Any] = []
    env = {id(p): a for p, a in zip(func.args, args, strict=True)}
    return bits(evaluate(func.entry.ops, env, log)), bits(log)


vectors = st.tuples(*[st.floats(width=64)] * N)


@settings(max_examples=80, deadline=None)
@given(programs(), vectors, vectors, st.floats())
def test_core_passes_keep_the_answer(module: ModuleOp, a: tuple, b: tuple, x: float) -> None:
    before = run(module, [a, b, x])
    PassManager(CORE_PASSES).run(module)
    assert run(module, [a, b, x]) == before
    text = print_ir(module)
    again = parse_ir(text, core_registry())
    PassManager(CORE_PASSES).run(again)
    assert print_ir(again) == text
