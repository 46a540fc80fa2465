"""SSA values, operations, blocks, regions, dialects: the IR's data model.

An operation class declares its operands, attributes, results and regions in its
body (`operand(TensorType)`, `attribute(str, one_of=...)`, `result(ScalarType)`);
the generic `verify()` checks those declarations and `verify_extra()` what they
cannot say. Operations own their results; blocks own their operations and
arguments; regions own blocks. Effects are a class-level set of EFFECTS.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir.types import Type

EFFECTS: Final = ("Pure", "ReadMemory", "WriteMemory", "Callback", "IO")
PURE: Final = frozenset({"Pure"})


class Value:
    """An SSA value: the result of an operation or the argument of a block."""

    __slots__ = ("index", "name_hint", "owner", "type")

    def __init__(
        self,
        type: Type,
        owner: Operation | Block | None = None,
        index: int = 0,
        name_hint: str | None = None,
    ) -> None:
        self.type = type
        self.owner = owner
        self.index = index
        self.name_hint = name_hint

    def __repr__(self) -> str:
        return f"<Value {self.name_hint or '?'}: {self.type}>"


@dataclass(frozen=True, slots=True)
class OperandDef:
    constraint: type | tuple[type, ...]
    variadic: bool = False
    name: str = ""


@dataclass(frozen=True, slots=True)
class ResultDef:
    constraint: type | tuple[type, ...]
    variadic: bool = False
    name: str = ""


@dataclass(frozen=True, slots=True)
class AttributeDef:
    kind: type | tuple[type, ...]
    one_of: tuple[Any, ...] | None = None
    optional: bool = False
    name: str = ""


@dataclass(frozen=True, slots=True)
class RegionDef:
    name: str = ""


def operand(constraint: type | tuple[type, ...] = Type, *, variadic: bool = False) -> Any:
    """Declare an operand; `variadic` takes the remaining operands (one per op)."""
    return OperandDef(constraint, variadic)


def result(constraint: type | tuple[type, ...] = Type, *, variadic: bool = False) -> Any:
    """Declare a result."""
    return ResultDef(constraint, variadic)


def attribute(
    kind: type | tuple[type, ...], *, one_of: Sequence[Any] | None = None, optional: bool = False
) -> Any:
    """Declare an attribute of Python kind `kind`, optionally from a fixed set."""
    return AttributeDef(kind, tuple(one_of) if one_of is not None else None, optional)


def region() -> Any:
    """Declare a region."""
    return RegionDef()


class Operation:
    """Base of every operation. Subclasses set `name`, `effects` and declarations."""

    name: ClassVar[str] = "builtin.unregistered"
    effects: ClassVar[frozenset[str]] = PURE
    is_terminator: ClassVar[bool] = False
    operand_defs: ClassVar[tuple[OperandDef, ...]] = ()
    result_defs: ClassVar[tuple[ResultDef, ...]] = ()
    attribute_defs: ClassVar[tuple[AttributeDef, ...]] = ()
    region_defs: ClassVar[tuple[RegionDef, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        groups: dict[type, list[Any]] = {
            OperandDef: [],
            ResultDef: [],
            AttributeDef: [],
            RegionDef: [],
        }
        for key, value in list(vars(cls).items()):
            kind = type(value)
            if kind in groups:
                named = _renamed(value, key)
                groups[kind].append(named)
                setattr(cls, key, _Accessor(kind, key, len(groups[kind]) - 1))
        if any(groups.values()):
            cls.operand_defs = tuple(groups[OperandDef])
            cls.result_defs = tuple(groups[ResultDef])
            cls.attribute_defs = tuple(groups[AttributeDef])
            cls.region_defs = tuple(groups[RegionDef])

    def __init__(
        self,
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attributes: Mapping[str, Any] | None = None,
        regions: Sequence[Region] = (),
    ) -> None:
        self.operands: list[Value] = list(operands)
        self.results: list[Value] = [Value(t, self, i) for i, t in enumerate(result_types)]
        self.attributes: dict[str, Any] = dict(attributes or {})
        self.regions: list[Region] = list(regions)
        for r in self.regions:
            r.parent = self
        self.parent: Block | None = None

    # -- convenience ----------------------------------------------------------
    @property
    def result(self) -> Value:
        if len(self.results) != 1:
            raise InvalidIRError(f"{self.name} has {len(self.results)} results, not one")
        return self.results[0]

    def walk(self) -> Iterator[Operation]:
        """This operation and every operation nested in its regions, pre-order."""
        yield self
        for r in self.regions:
            for block in r.blocks:
                for op in list(block.ops):
                    yield from op.walk()

    def __repr__(self) -> str:
        return f"<{self.name} at {id(self):#x}>"

    # -- verification ---------------------------------------------------------
    def verify(self) -> None:
        """Check declarations, then `verify_extra`, then nested regions."""
        _check_values(self, self.operands, self.operand_defs, "operand")
        _check_values(self, self.results, self.result_defs, "result")
        for adef in self.attribute_defs:
            _check_attribute(self, adef)
        if len(self.regions) != len(self.region_defs):
            self.fail(f"expects {len(self.region_defs)} regions, has {len(self.regions)}")
        self.verify_extra()
        for r in self.regions:
            r.verify()

    def verify_extra(self) -> None:
        """Constraints the declarations cannot express; raise through `fail`."""

    def fail(self, message: str) -> None:
        raise InvalidIRError(
            f"{self.name}: {message}", hint="the operation is malformed; see its docstring"
        )


class _Accessor:
    """Reads a declared operand/result/attribute/region by name."""

    def __init__(self, kind: type, name: str, index: int) -> None:
        self.kind, self.name, self.index = kind, name, index

    def __get__(self, op: Operation | None, owner: type) -> Any:
        if op is None:
            return self
        if self.kind is AttributeDef:
            return op.attributes.get(self.name)
        if self.kind is RegionDef:
            return op.regions[self.index]
        values = op.operands if self.kind is OperandDef else op.results
        defs = owner.operand_defs if self.kind is OperandDef else owner.result_defs
        if defs[self.index].variadic:
            tail = len(defs) - self.index - 1
            return values[self.index : len(values) - tail]
        return values[self.index] if self.index < len(values) else None


def _renamed(value: Any, key: str) -> Any:
    return type(value)(
        *[getattr(value, f) for f in value.__dataclass_fields__ if f != "name"], name=key
    )


def _check_values(op: Operation, values: Sequence[Value], defs: Sequence[Any], what: str) -> None:
    if not defs:
        return
    fixed = [d for d in defs if not d.variadic]
    if len(fixed) == len(defs) and len(values) != len(defs):
        op.fail(f"expects {len(defs)} {what}s, has {len(values)}")
    if len(values) < len(fixed):
        op.fail(f"expects at least {len(fixed)} {what}s, has {len(values)}")
    index = 0
    for d in defs:
        count = len(values) - len(fixed) if d.variadic else 1
        for v in values[index : index + count]:
            if not isinstance(v.type, d.constraint):
                op.fail(f"{what} '{d.name}' must be {_kind_names(d.constraint)}, not {v.type}")
        index += count


def _check_attribute(op: Operation, adef: AttributeDef) -> None:
    if adef.name not in op.attributes:
        if not adef.optional:
            op.fail(f"missing attribute '{adef.name}'")
        return
    value = op.attributes[adef.name]
    if isinstance(value, bool) and adef.kind in (int, float):
        op.fail(f"attribute '{adef.name}' must be {_kind_names(adef.kind)}, not bool")
    if not isinstance(value, adef.kind):
        op.fail(f"attribute '{adef.name}' must be {_kind_names(adef.kind)}, not {value!r}")
    if adef.one_of is not None and value not in adef.one_of:
        op.fail(f"attribute '{adef.name}' = {value!r} is not one of {list(adef.one_of)}")


def _kind_names(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


class Block:
    """A list of operations with typed arguments; the last op may be a terminator."""

    def __init__(
        self,
        arg_types: Sequence[Type] = (),
        ops: Sequence[Operation] = (),
        arg_names: Sequence[str | None] = (),
    ) -> None:
        names = list(arg_names) + [None] * (len(arg_types) - len(arg_names))
        self.args: list[Value] = [
            Value(t, self, i, n) for i, (t, n) in enumerate(zip(arg_types, names, strict=True))
        ]
        self.ops: list[Operation] = []
        self.parent: Region | None = None
        for op in ops:
            self.append(op)

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Operation) -> Operation:
        op.parent = self
        self.ops.insert(index, op)
        return op

    def remove(self, op: Operation) -> None:
        self.ops.remove(op)
        op.parent = None


class Region:
    """A list of blocks owned by an operation. Values defined above are visible."""

    def __init__(self, blocks: Sequence[Block] = ()) -> None:
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for b in blocks:
            self.add(b)

    def add(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def block(self) -> Block:
        """The first block; a region without blocks is malformed IR."""
        if not self.blocks:
            owner = self.parent.name if self.parent is not None else "a detached op"
            raise InvalidIRError(
                f"{owner}: a region has no block",
                hint="the operation is malformed; see its docstring",
            )
        return self.blocks[0]

    def verify(self) -> None:
        for block in self.blocks:
            for op in block.ops:
                op.verify()


def verify_ssa(root: Operation) -> None:
    """Every operand is defined before its use, in its block or an enclosing one."""
    _verify_scope(root, set())


def _verify_scope(op: Operation, visible: set[int]) -> None:
    for v in op.operands:
        if id(v) not in visible:
            op.fail(f"uses {v.name_hint or 'a value'} before it is defined, or from outside")
    for r in op.regions:
        for block in r.blocks:
            inner = set(visible) | {id(a) for a in block.args}
            for nested in block.ops:
                _verify_scope(nested, inner)
                if nested.is_terminator and nested is not block.ops[-1]:
                    nested.fail("a terminator must end its block")
                inner |= {id(res) for res in nested.results}


def verify(root: Operation) -> None:
    """Full verification: each op's own checks, then SSA visibility."""
    root.verify()
    verify_ssa(root)


@dataclass(frozen=True)
class Dialect:
    """A named set of operation classes; each op's name starts with `name.`."""

    name: str
    ops: Sequence[type[Operation]] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        for op in self.ops:
            if not op.name.startswith(self.name + "."):
                raise ValueError(f"op {op.name} does not belong to dialect {self.name}")


class DialectRegistry:
    """Op name -> class, filled from dialects passed in (never by import side effects)."""

    def __init__(self, dialects: Sequence[Dialect] = ()) -> None:
        self.dialects: dict[str, Dialect] = {}
        self.ops: dict[str, type[Operation]] = {}
        for d in dialects:
            self.register(d)

    def register(self, dialect: Dialect) -> None:
        if dialect.name in self.dialects and self.dialects[dialect.name] is not dialect:
            raise ValueError(f"dialect {dialect.name} is registered twice")
        self.dialects[dialect.name] = dialect
        for op in dialect.ops:
            self.ops[op.name] = op

    def lookup(self, name: str) -> type[Operation] | None:
        return self.ops.get(name)


__all__ = [
    "EFFECTS",
    "PURE",
    "Value",
    "Operation",
    "Block",
    "Region",
    "Dialect",
    "DialectRegistry",
    "operand",
    "result",
    "attribute",
    "region",
    "verify",
    "verify_ssa",
]
