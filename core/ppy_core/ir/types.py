"""IR types: scalars, tensors with dtype and shape refinements, Arrow-like columns.

Textual forms:  f64  i64  i1  none  !unknown  !opaque<"numpy.dtype">
                tensor<?x4x"n"xf64>  tensor<*xf32>  tensor<?xf64, "numpy">
                column<f64>  column<f64, nullable>  column<i1, "pyarrow">
A tensor dimension is an int (known), a str (symbolic, quoted) or None (unknown, `?`);
`shape=None` is an unknown rank (`*`). An integer refined to a range (`RangeType`,
`i64{0..100}`) types values (a pydantic field), never an IR operand: no parser form.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

SCALAR_KINDS: Final = (
    "f64",
    "f32",
    "f16",
    "bf16",
    "i64",
    "i32",
    "i16",
    "i8",
    "u8",
    "u32",
    "i1",
    "index",
    "c128",
    "c64",
)

Dim = int | str | None


class Type:
    """Base of every IR type; concrete types are frozen dataclasses."""

    def text(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True, slots=True)
class ScalarType(Type):
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in SCALAR_KINDS:
            raise ValueError(f"unknown scalar kind {self.kind!r}")

    def text(self) -> str:
        return self.kind

    @property
    def is_float(self) -> bool:
        return self.kind in ("f64", "f32", "f16", "bf16")


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    """`library` names whose array it is ("numpy", "torch"): operators on it are
    answered by that library's plugin. Empty for a library-neutral tensor."""

    element: ScalarType
    shape: tuple[Dim, ...] | None = None
    library: str = ""

    def text(self) -> str:
        lib = f", {json.dumps(self.library)}" if self.library else ""
        if self.shape is None:
            return f"tensor<*x{self.element.text()}{lib}>"
        dims = "".join(f"{_dim_text(d)}x" for d in self.shape)
        return f"tensor<{dims}{self.element.text()}{lib}>"

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)


@dataclass(frozen=True, slots=True)
class ColumnType(Type):
    """An Arrow-like column: values plus validity. `library` names whose column it is
    ("pyarrow", "pandas"), as `TensorType.library` does; empty when library-neutral."""

    value: ScalarType
    nullable: bool = False
    library: str = ""

    def text(self) -> str:
        lib = f", {json.dumps(self.library)}" if self.library else ""
        return f"column<{self.value.text()}{', nullable' if self.nullable else ''}{lib}>"


@dataclass(frozen=True, slots=True)
class NoneType(Type):
    def text(self) -> str:
        return "none"


@dataclass(frozen=True, slots=True)
class UnknownType(Type):
    """What no plugin knows. It is never an error unless `strict = true`."""

    def text(self) -> str:
        return "!unknown"


@dataclass(frozen=True, slots=True)
class OpaqueType(Type):
    """A Python object a plugin names but the IR does not look inside (a module, a dtype)."""

    name: str

    def text(self) -> str:
        return f"!opaque<{json.dumps(self.name)}>"


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    elements: tuple[Type, ...]

    def text(self) -> str:
        return f"tuple<{', '.join(e.text() for e in self.elements)}>"


@dataclass(frozen=True, slots=True)
class RangeType(Type):
    """An integer scalar refined to the closed range [lo, hi] (None: unbounded on that
    side), e.g. a pydantic field declared `Field(ge=0, le=100)`. It is `base` for every
    purpose but the range, which a checker propagates; text `i64{0..100}`, `i64{1..}`."""

    base: ScalarType
    lo: int | None = None
    hi: int | None = None

    def text(self) -> str:
        lo = "" if self.lo is None else str(self.lo)
        hi = "" if self.hi is None else str(self.hi)
        return f"{self.base.text()}{{{lo}..{hi}}}"

    def contains(self, value: int) -> bool:
        """Whether the integer `value` lies in the range."""
        return (self.lo is None or value >= self.lo) and (self.hi is None or value <= self.hi)


@dataclass(frozen=True, slots=True)
class UnionType(Type):
    """A value that is one of `members` (`Tensor | None`, a tensor's `.grad`). It types
    values for `ppy check` (a plugin may answer one), never an IR operand: no parser
    form; nothing converges on it, so a compile leaves such an expression as Python."""

    members: tuple[Type, ...]

    def text(self) -> str:
        return f"union<{', '.join(m.text() for m in self.members)}>"


def _dim_text(dim: Dim) -> str:
    if dim is None:
        return "?"
    if isinstance(dim, str):
        return json.dumps(dim)
    return str(dim)


F64: Final = ScalarType("f64")
F32: Final = ScalarType("f32")
I64: Final = ScalarType("i64")
I1: Final = ScalarType("i1")
INDEX: Final = ScalarType("index")
NONE: Final = NoneType()
UNKNOWN: Final = UnknownType()

__all__ = [
    "Type",
    "ScalarType",
    "TensorType",
    "ColumnType",
    "NoneType",
    "UnknownType",
    "OpaqueType",
    "TupleType",
    "RangeType",
    "UnionType",
    "Dim",
    "SCALAR_KINDS",
    "F64",
    "F32",
    "I64",
    "I1",
    "INDEX",
    "NONE",
    "UNKNOWN",
]
