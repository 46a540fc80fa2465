"""The region graph: a typed, straight-line list of ATen calls over SSA values.

This is the `graph` payload of the `GraphRegionSpec` the plugin hands the `aten`
backend. It is plain frozen data, printable as text:

    aten.region @layer(%x: tensor, %weight: tensor, %bias: tensor) -> tensor {
      %0 = aten.matmul(self=%x, other=%weight)
      %1 = aten.add.Tensor(self=%0, other=%bias)
      %2 = aten.relu(self=%1)
      return %2
    }

The `aten` backend reads this structure directly; the plugin's `aten` dialect
(`ppy_torch.dialect`) is the IR spelling of the same calls.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final

TENSOR: Final = "tensor"
INT: Final = "int"
FLOAT: Final = "float"
BOOL: Final = "bool"
VALUE_KINDS: Final = (TENSOR, INT, FLOAT, BOOL)
NONE: Final = "none"  # a method's `return logits, None`: None in its result tuple
TENSORS: Final = "tensors"  # a list of tensors an op returns (`split`), unpacked at once
#: a parameter's dtype as described (`str(t.dtype)`) -> its `c10::ScalarType`
SCALAR_TYPES: Final = {
    "torch.float32": "Float",
    "torch.float64": "Double",
    "torch.float16": "Half",
    "torch.bfloat16": "BFloat16",
    "torch.int64": "Long",
    "torch.int32": "Int",
    "torch.int16": "Short",
    "torch.int8": "Char",
    "torch.uint8": "Byte",
    "torch.bool": "Bool",
    "torch.complex64": "ComplexFloat",
    "torch.complex128": "ComplexDouble",
}


def device_parts(text: str) -> tuple[str, int] | None:
    """A described device ("cpu", "cuda:0") as (`c10::DeviceType`, index), or None."""
    kind, _, index = text.partition(":")
    types = {"cpu": "CPU", "cuda": "CUDA"}
    if kind not in types or (index and not index.isdigit()):
        return None
    return types[kind], int(index) if index else -1


@dataclass(frozen=True, slots=True)
class Value:
    """An SSA value: a parameter or a call's result. `kind` is one of VALUE_KINDS."""

    name: str
    kind: str

    def text(self) -> str:
        return f"%{self.name}"


@dataclass(frozen=True, slots=True)
class Const:
    """A compile-time constant argument: int, float, bool, str, None, or a tuple of ints."""

    value: int | float | bool | str | tuple[int, ...] | None

    def text(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class ListArg:
    """A tuple written in the source: ints (a shape, dims) or tensors (cat, stack)."""

    items: tuple[Value | Const, ...]

    def text(self) -> str:
        return (
            "("
            + ", ".join(item.text() for item in self.items)
            + ("," if len(self.items) == 1 else "")
            + ")"
        )


Arg = Value | Const | ListArg


@dataclass(frozen=True, slots=True)
class AtenCall:
    """`%result = aten.<overload>(name=arg, ...)`: one call through the dispatcher.

    `args` are bound to the C++ parameter names, in signature order; parameters
    the call left out take their C++ defaults. `result` is None when unused."""

    op: str
    overload: str
    args: tuple[tuple[str, Arg], ...]
    result: Value | None
    line: int = 0

    def text(self) -> str:
        inner = ", ".join(f"{name}={arg.text()}" for name, arg in self.args)
        head = f"{self.result.text()} = " if self.result is not None else ""
        return f"{head}aten.{self.overload}({inner})"


@dataclass(frozen=True, slots=True)
class IntOp:
    """`%r = int.<op>(%a, %b)`: integer arithmetic on sizes, with Python's semantics."""

    op: str  # "add", "sub", "mul", "floordiv"
    lhs: Value | Const
    rhs: Value | Const
    result: Value

    def text(self) -> str:
        return f"{self.result.text()} = int.{self.op}({self.lhs.text()}, {self.rhs.text()})"


@dataclass(frozen=True, slots=True)
class Unpack:
    """`%a, %b, %c = unpack(%list)`: a tensor list unpacked into names, as Python's
    assignment does; another length raises (Python then raises its own ValueError)."""

    value: Value
    results: tuple[Value, ...]

    def text(self) -> str:
        return f"{', '.join(r.text() for r in self.results)} = unpack({self.value.text()})"


@dataclass(frozen=True, slots=True)
class RankCheck:
    """`check.rank(%x, n)`: `B, T, C = x.size()` needs exactly n dimensions; another
    rank raises (Python then raises its own ValueError)."""

    value: Value
    rank: int

    def text(self) -> str:
        return f"check.rank({self.value.text()}, {self.rank})"


@dataclass(frozen=True, slots=True)
class IntCheck:
    """`check.int(%t <= 64)`: an `assert` of sizes; false raises (Python then raises
    its own AssertionError, with its message)."""

    op: str  # a C++ comparison: "<", "<=", ">", ">=", "==", "!="
    lhs: Value | Const
    rhs: Value | Const

    def text(self) -> str:
        return f"check.int({self.lhs.text()} {self.op} {self.rhs.text()})"


@dataclass(frozen=True, slots=True)
class Arange:
    """`%r = aten.arange.start(start, end, dtype=long)` on the device of `like`:
    `torch.arange(0, t, dtype=torch.long, device=idx.device)`."""

    start: Value | Const
    end: Value | Const
    like: Value
    result: Value

    def text(self) -> str:
        bounds = f"{self.start.text()}, {self.end.text()}"
        where = f"device={self.like.text()}.device"
        return f"{self.result.text()} = aten.arange.start({bounds}, dtype=long, {where})"


@dataclass(frozen=True, slots=True)
class IndexList:
    """`%r = aten.index.Tensor(%x, [None, ..., tensor(items)])`: `x[:, [-1], :]`, the
    list at dimension `dim` after full slices, as torch's indexing calls it."""

    value: Value
    dim: int
    items: tuple[int, ...]
    result: Value

    def text(self) -> str:
        where = f"{self.value.text()}, dim={self.dim}, {list(self.items)}"
        return f"{self.result.text()} = aten.index.Tensor({where})"


Node = AtenCall | IntOp | Unpack | RankCheck | IntCheck | Arange | IndexList


@dataclass(frozen=True, slots=True)
class RegionGraph:
    """One function as a region: parameters, straight-line nodes, results.

    `tuple_result` is True when the function returns a fixed tuple (then the C++
    function returns a `std::tuple`). `effects` is the union of the nodes'."""

    name: str
    params: tuple[Value, ...]
    nodes: tuple[Node, ...]
    results: tuple[Value, ...]
    tuple_result: bool
    effects: frozenset[str]
    path: str = ""
    # a method's region (`modules.py`): where each parameter comes from at a call,
    # ("arg", i) or ("self", "_modules", name, ..., "_parameters", name); () for a function
    sources: tuple[tuple[str | int, ...], ...] = ()
    # a method's region: the facts of the module tree it was built from, which its entry
    # checks at every call (`modules.Fact`); () for a function
    guards: tuple[tuple[object, ...], ...] = ()

    def text(self) -> str:
        params = ", ".join(f"{v.text()}: {v.kind}" for v in self.params)
        kinds = [v.kind for v in self.results]
        ret = f"tuple<{', '.join(kinds)}>" if self.tuple_result else (kinds[0] if kinds else "none")
        lines = [f"aten.region @{self.name}({params}) -> {ret} {{"]
        lines += [f"  {node.text()}" for node in self.nodes]
        lines.append("  return " + ", ".join(v.text() for v in self.results))
        lines.append("}")
        return "\n".join(lines)

    def key(self) -> str:
        """A stable content hash (sha256 of the text form)."""
        return hashlib.sha256(self.text().encode()).hexdigest()

    @property
    def writes(self) -> bool:
        return "WriteMemory" in self.effects


__all__ = [
    "Value",
    "Const",
    "ListArg",
    "Arg",
    "AtenCall",
    "IntOp",
    "Node",
    "RankCheck",
    "IntCheck",
    "Arange",
    "IndexList",
    "NONE",
    "TENSORS",
    "Unpack",
    "RegionGraph",
    "TENSOR",
    "INT",
    "FLOAT",
    "BOOL",
    "VALUE_KINDS",
    "SCALAR_TYPES",
    "device_parts",
]
