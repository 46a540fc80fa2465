"""The Arrow C Data Interface, as ctypes structs: lending an `Array` to native code.

`exported(array)` fills an `ArrowArray`/`ArrowSchema` pair with pyarrow's own
exporter (buffers shared, no PyObject in the structs) and releases it exactly once
when the borrow ends: on leaving the `with` block, on an exception too, and never
again (a released struct has `release == NULL`, and a consumer that moved the struct
out nulled it). `from_capsules` takes the pair out of `__arrow_c_array__` capsules
the same way (a move: the capsule's struct is left released).

Imports no compiler code; PyArrow only inside the functions that need it.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final


class ArrowSchema(ctypes.Structure):
    """`struct ArrowSchema` (CDataInterface.rst)."""


ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]


class ArrowArray(ctypes.Structure):
    """`struct ArrowArray` (CDataInterface.rst)."""


ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]

_RELEASE_ARRAY: Final = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))
_RELEASE_SCHEMA: Final = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))


def release_array(struct: ArrowArray) -> bool:
    """Call the struct's release callback if it is not released; whether it did."""
    if not struct.release:
        return False
    _RELEASE_ARRAY(struct.release)(ctypes.byref(struct))
    return True


def release_schema(struct: ArrowSchema) -> bool:
    """Call the struct's release callback if it is not released; whether it did."""
    if not struct.release:
        return False
    _RELEASE_SCHEMA(struct.release)(ctypes.byref(struct))
    return True


class Lent:
    """An Arrow array lent to native code: the `array` and `schema` structs (their
    addresses `array_ptr`/`schema_ptr` are what a C function takes), released once."""

    __slots__ = ("array", "schema")

    def __init__(self) -> None:
        self.array = ArrowArray()
        self.schema = ArrowSchema()

    @property
    def array_ptr(self) -> int:
        return ctypes.addressof(self.array)

    @property
    def schema_ptr(self) -> int:
        return ctypes.addressof(self.schema)

    @property
    def released(self) -> bool:
        """Both structs released (or moved out by a consumer)."""
        return not self.array.release and not self.schema.release

    @property
    def format(self) -> str:
        """The schema's format string (`g` float64, `b` boolean, `l` int64 ...)."""
        return (self.schema.format or b"").decode()

    def buffer(self, index: int) -> int:
        """The address of buffer `index` (0 for an absent validity bitmap)."""
        if not 0 <= index < self.array.n_buffers:
            raise IndexError(f"buffer {index} of an array with {self.array.n_buffers}")
        return int(self.array.buffers[index] or 0)

    def release(self) -> None:
        """Release both structs; a second call (or one after a move) does nothing."""
        release_array(self.array)
        release_schema(self.schema)

    def to_pyarrow(self) -> Any:
        """Move the lent array into a `pyarrow.Array` (the structs are left released;
        the array's buffers are released when that Array is freed)."""
        import pyarrow as pa

        if self.released:
            raise ValueError("the lent Arrow array was released already")
        return pa.Array._import_from_c(self.array_ptr, self.schema_ptr)


@contextmanager
def exported(array: Any) -> Iterator[Lent]:
    """Lend `array` (a `pyarrow.Array`, or any object with `_export_to_c`) as a C Data
    Interface pair for the `with` block; released exactly once when it ends."""
    lent = Lent()
    array._export_to_c(lent.array_ptr, lent.schema_ptr)
    try:
        yield lent
    finally:
        lent.release()


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def from_capsules(schema_capsule: object, array_capsule: object) -> Lent:
    """Move the structs out of `__arrow_c_array__`'s capsules into a `Lent` (the
    capsules' structs are left released, so their destructors do nothing)."""
    lent = Lent()
    schema_at = _capsule_pointer(schema_capsule, b"arrow_schema")
    array_at = _capsule_pointer(array_capsule, b"arrow_array")
    ctypes.memmove(lent.schema_ptr, schema_at, ctypes.sizeof(ArrowSchema))
    ctypes.memmove(lent.array_ptr, array_at, ctypes.sizeof(ArrowArray))
    ArrowSchema.from_address(schema_at).release = None
    ArrowArray.from_address(array_at).release = None
    return lent


@contextmanager
def imported(obj: Any) -> Iterator[Lent]:
    """Borrow any object of the `__arrow_c_array__` protocol (a pyarrow Array, a
    polars Series, ...) as a C Data Interface pair, released once when the block ends."""
    schema_capsule, array_capsule = obj.__arrow_c_array__()
    lent = from_capsules(schema_capsule, array_capsule)
    try:
        yield lent
    finally:
        lent.release()


_NOOP_RELEASE: Final = _RELEASE_ARRAY(lambda _struct: None)
_NOOP: Final = ctypes.cast(_NOOP_RELEASE, ctypes.c_void_p).value or 0
_ARRAY_LAYOUT: Final = struct.Struct("<qqqqqQQQQQ")  # `struct ArrowArray`, field by field
assert _ARRAY_LAYOUT.size == ctypes.sizeof(ArrowArray)


class Borrow:
    """ArrowArray structs describing arrays *as they stand* for one native call, and
    the table of their addresses (`table`). They own nothing: each shares its array's
    buffers, keeps the array's raw null count (-1 when Arrow has not counted it; the
    exporter would count it first, and that count decides Arrow's bitmaps) and has a
    release callback that does nothing. Valid while this object lives. `states` are
    the arrays' `state(array)`."""

    __slots__ = ("_memory", "_states", "table")

    def __init__(self, states: list[tuple[Any, ...]]) -> None:
        k = len(states)
        self._states = states
        layout = _borrow_layout(k)
        self._memory = (ctypes.c_char * max(layout.size, 8))()
        base = ctypes.addressof(self._memory)
        structs = base + 8 * k  # then the k structs, then each one's 2 buffer pointers
        pointers = structs + _ARRAY_LAYOUT.size * k
        fields: list[int] = [structs + _ARRAY_LAYOUT.size * i for i in range(k)]
        for i, (_type, length, nulls, offset, _buffers, _children, _dict) in enumerate(states):
            fields += (length, nulls, offset, 2, 0, pointers + 16 * i, 0, 0, _NOOP, 0)
        for state in states:
            first, second = state[4][0], state[4][1]
            fields.append(first.address if first is not None else 0)
            fields.append(second.address if second is not None else 0)
        layout.pack_into(self._memory, 0, *fields)  # one pack: ~3x faster than one per field
        self.table = base


_LAYOUTS: dict[int, struct.Struct] = {}


def _borrow_layout(k: int) -> struct.Struct:
    """A Borrow's memory for k arrays: the table, the structs, their buffer pointers."""
    if k not in _LAYOUTS:
        _LAYOUTS[k] = struct.Struct("<" + "Q" * k + _ARRAY_LAYOUT.format[1:] * k + "QQ" * k)
    return _LAYOUTS[k]


def state(array: Any) -> tuple[Any, ...]:
    """(type, length, raw null count, offset, buffers, children, dictionary) of an
    array as it stands: pyarrow's pickling state, read without counting its nulls."""
    return array.__reduce__()[1][0]  # type: ignore[no-any-return]


__all__ = [
    "Borrow",
    "state",
    "ArrowArray",
    "ArrowSchema",
    "Lent",
    "exported",
    "from_capsules",
    "imported",
    "release_array",
    "release_schema",
]
