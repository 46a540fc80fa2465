"""The builtin and func dialects: modules, functions, constants, calls, returns."""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import (
    PURE,
    Block,
    Dialect,
    Operation,
    Region,
    attribute,
    operand,
    region,
    result,
)
from ppy_core.ir.types import ScalarType, TensorType, Type


class ModuleOp(Operation):
    """A container of functions.

    builtin.module {name = "m"} { func.func @f(...) -> (...) { ... } }
    """

    name: ClassVar[str] = "builtin.module"
    body = region()

    @classmethod
    def empty(cls, attributes: dict[str, object] | None = None) -> ModuleOp:
        return cls(attributes=attributes or {}, regions=[Region([Block()])])


class ConstantOp(Operation):
    """A compile-time scalar.

    %c = builtin.constant {value = 2.0} : () -> f64
    """

    name: ClassVar[str] = "builtin.constant"
    value = attribute((int, float, bool))
    out = result(ScalarType)

    def verify_extra(self) -> None:
        kind = self.out.type.kind
        if isinstance(self.value, float) and not self.out.type.is_float:
            self.fail(f"a float constant cannot have type {kind}")


class FuncOp(Operation):
    """A function: its block's arguments are its parameters.

    func.func @site_0(%a: tensor<?xf64>, %x: f64) -> (tensor<?xf64>) { ... }
    """

    name: ClassVar[str] = "func.func"
    sym_name = attribute(str)
    result_types = attribute(tuple)
    body = region()

    @classmethod
    def build(
        cls,
        sym_name: str,
        arg_types: list[Type],
        result_types: list[Type],
        arg_names: list[str | None] | None = None,
    ) -> FuncOp:
        block = Block(arg_types, arg_names=arg_names or [])
        return cls(
            attributes={"sym_name": sym_name, "result_types": tuple(result_types)},
            regions=[Region([block])],
        )

    @property
    def entry(self) -> Block:
        return self.regions[0].block

    @property
    def args(self) -> list:
        return self.entry.args

    def verify_extra(self) -> None:
        for t in self.result_types:
            if not isinstance(t, Type):
                self.fail(f"result type {t!r} is not a type")
        ops = self.entry.ops
        if not ops or not isinstance(ops[-1], ReturnOp):
            self.fail("a function must end with func.return")
        returned = [v.type for v in ops[-1].operands]
        if returned != list(self.result_types):
            self.fail(
                f"returns {[str(t) for t in returned]}, declared "
                f"{[str(t) for t in self.result_types]}"
            )


class ReturnOp(Operation):
    """func.return %x : (tensor<?xf64>) -> ()"""

    name: ClassVar[str] = "func.return"
    is_terminator: ClassVar[bool] = True
    values = operand(Type, variadic=True)


class CallOp(Operation):
    """A call the IR does not look inside (a library function kept as it is).

    %r = func.call %a {callee = "numpy.dot"} : (tensor<?xf64>) -> tensor<?xf64>
    """

    name: ClassVar[str] = "func.call"
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory", "Callback"})
    callee = attribute(str)
    args = operand(Type, variadic=True)
    outs = result(Type, variadic=True)


BUILTIN: Final = Dialect("builtin", [ModuleOp, ConstantOp])
FUNC: Final = Dialect("func", [FuncOp, ReturnOp, CallOp])

__all__ = [
    "ModuleOp",
    "ConstantOp",
    "FuncOp",
    "ReturnOp",
    "CallOp",
    "BUILTIN",
    "FUNC",
    "TensorType",
    "PURE",
]
