"""`ppy.Shape` and `ppy.DType`: refinements written inside `typing.Annotated`.

    def f(x: Annotated[np.ndarray, ppy.Shape("n", 3), ppy.DType("float64")]) -> ...

A dimension is an int (known), a str (symbolic: every dimension of one name is the
same length) or None (unknown). Both are inert values under plain `python`:
hashable, comparable, with a repr that reads as the call that made them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ppy_core.diagnostics import Error

Dim = int | str | None

DTYPE_NAMES: Final[tuple[str, ...]] = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)


def _check_dim(dim: object) -> Dim:
    if dim is None:
        return None
    if isinstance(dim, bool) or not isinstance(dim, int | str):
        raise Error(
            f"ppy.Shape: dimension {dim!r} is not an int, a name, or None",
            hint='write a length (3), a symbolic name ("n"), or None for unknown',
            code="E0020",
        )
    if isinstance(dim, int) and dim < 0:
        raise Error(
            f"ppy.Shape: dimension {dim} is negative",
            hint="a known length is 0 or more; None means unknown",
            code="E0020",
        )
    if isinstance(dim, str) and not dim.isidentifier():
        raise Error(
            f"ppy.Shape: symbolic dimension {dim!r} is not an identifier",
            hint='name symbolic dimensions like variables: "n", "batch"',
            code="E0020",
        )
    return dim


@dataclass(frozen=True, slots=True, init=False)
class Shape:
    """A tensor's shape: `Shape(3, "n", None)` is rank 3, first length 3, second
    symbolic `n`, third unknown. `Shape()` is a scalar (rank 0)."""

    dims: tuple[Dim, ...]

    def __init__(self, *dims: Dim) -> None:
        object.__setattr__(self, "dims", tuple(_check_dim(d) for d in dims))

    @property
    def rank(self) -> int:
        """The number of dimensions."""
        return len(self.dims)

    def __repr__(self) -> str:
        return f"Shape({', '.join(repr(d) for d in self.dims)})"


@dataclass(frozen=True, slots=True)
class DType:
    """An element type by NumPy's name: `DType("float64")`, `DType("int32")`."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in DTYPE_NAMES:
            raise Error(
                f"ppy.DType: {self.name!r} is not a dtype name",
                hint=f"use one of {', '.join(DTYPE_NAMES)}",
                code="E0020",
            )

    def __repr__(self) -> str:
        return f"DType({self.name!r})"


__all__ = ["Shape", "DType", "Dim", "DTYPE_NAMES"]
