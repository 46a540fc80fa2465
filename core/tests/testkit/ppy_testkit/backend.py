"""The `pyloop` backend: a tensor.kernel becomes Python source for one loop."""

from __future__ import annotations

from ppy_core.interface.backend import Backend, CompiledUnit, LowerContext
from ppy_core.ir.core import Operation, Value
from ppy_core.ir.types import TensorType

_EXPR = {
    "tensor.add": "({0} + {1})",
    "tensor.sub": "({0} - {1})",
    "tensor.mul": "({0} * {1})",
    "tensor.div": "({0} / {1})",
    "tensor.neg": "(-{0})",
}


class PyLoopBackend(Backend):
    name = "pyloop"
    version = "1"

    def fingerprint(self) -> str:
        return "v1:pyloop"

    def can_lower(self, func: Operation) -> str | None:
        for op in func.walk():
            if (
                op.name
                in (
                    "func.func",
                    "func.return",
                    "tensor.kernel",
                    "tensor.yield",
                    "builtin.constant",
                    "tensor.reduce",
                )
                or op.name in _EXPR
            ):
                continue
            if op.name == "tensor.unary" and op.attributes["op"] == "sin":
                continue
            return f"pyloop cannot lower {op.name}"
        return None

    def lower(self, func: Operation, ctx: LowerContext) -> CompiledUnit:
        kernel = next(op for op in func.walk() if op.name == "tensor.kernel")
        block = kernel.regions[0].block
        names: dict[int, str] = {}
        kinds = []
        for i, arg in enumerate(block.args):
            is_vec = isinstance(arg.type, TensorType)
            names[id(arg)] = f"a{i}[i]" if is_vec else f"a{i}"
            kinds.append("vec" if is_vec else "scalar")
        reduce = None
        for op in block.ops:
            if op.name == "tensor.yield":
                result = names[id(op.operands[0])]
            elif op.name == "builtin.constant":
                names[id(op.result)] = repr(float(op.attributes["value"]))
            elif op.name == "tensor.reduce":
                reduce = names[id(op.operands[0])]
                names[id(op.result)] = "__total__"
            elif op.name == "tensor.unary":
                names[id(op.result)] = f"math.sin({_use(names, op.operands[0])})"
            else:
                names[id(op.result)] = _EXPR[op.name].format(*[_use(names, v) for v in op.operands])
        params = ", ".join(f"a{i}" for i in range(len(block.args)))
        body = (
            f"    return math.fsum({reduce} for i in range(n))"
            if reduce is not None
            else f"    return [{result} for i in range(n)]"
        )
        source = f"import math\n\ndef kernel(n, {params}):\n{body}\n"
        filename = f"{ctx.site_id}.pyloop.py"
        (ctx.build_dir / filename).write_text(source)
        return CompiledUnit(
            "pyloop",
            "ppy_testkit.loader:load",
            (filename,),
            {"file": filename, "kinds": kinds, "reduce": reduce is not None},
        )


def _use(names: dict[int, str], value: Value) -> str:
    return names[id(value)]
