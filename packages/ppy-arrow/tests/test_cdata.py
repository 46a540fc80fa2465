"""Lending Arrow arrays through the C Data Interface: the release callback runs
exactly once (on leaving the block, on an exception, never on a second attempt or
after a move), and arrays round-trip through pyarrow's importer and the
`__arrow_c_array__` capsule protocol with their buffers shared."""

from __future__ import annotations

import ctypes
import gc

import pyarrow as pa
import pytest

from ppy_arrow.runtime import Lent, exported, imported
from ppy_arrow.runtime._cdata import ArrowArray

_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))


class Counting:
    """Wraps a lent array's release callback to count its calls (the wrapper stays
    alive as long as this object)."""

    def __init__(self, lent: Lent) -> None:
        self.calls = 0
        self._inner = _RELEASE(lent.array.release)

        def release(struct: ctypes._Pointer) -> None:  # type: ignore[type-arg]
            self.calls += 1
            self._inner(struct)

        self._wrapper = _RELEASE(release)
        lent.array.release = ctypes.cast(self._wrapper, ctypes.c_void_p).value


def test_release_runs_once_at_the_end_of_the_borrow() -> None:
    a = pa.array([1.0, None, 3.0])
    with exported(a) as lent:
        counting = Counting(lent)
        assert lent.array.length == 3
        assert lent.array.null_count == 1
        assert lent.format == "g"
        assert lent.buffer(1) == a.buffers()[1].address  # shared, not copied
        assert not lent.released
    assert counting.calls == 1
    assert lent.released
    lent.release()  # a second attempt does nothing
    assert counting.calls == 1


def test_release_runs_once_on_an_exception() -> None:
    seen: list[tuple[Lent, Counting]] = []

    def borrow_and_fail() -> None:
        with exported(pa.array([True, None])) as lent:
            seen.append((lent, Counting(lent)))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        borrow_and_fail()
    lent, counting = seen[0]
    assert counting.calls == 1
    assert lent.released


def test_a_moved_array_is_released_by_its_new_owner_once() -> None:
    a = pa.array([1.5, 2.5, None, 4.5]).slice(1)
    with exported(a) as lent:
        counting = Counting(lent)
        b = lent.to_pyarrow()  # moves: the structs are left released
        assert lent.released
        with pytest.raises(ValueError, match="released"):
            lent.to_pyarrow()
    assert counting.calls == 0  # the borrow's end did not release a moved struct
    assert b.equals(a)
    assert b.buffers()[1].address == a.buffers()[1].address
    del b
    gc.collect()
    assert counting.calls == 1  # the importing Array released it when freed


def test_round_trip_through_import_from_c_keeps_type_offset_nulls() -> None:
    for array in (
        pa.array([1.0, float("nan"), None, -0.0]),
        pa.array([True, False, None]).slice(1),
        pa.array([], pa.float64()),
        pa.array([None, None], pa.float64()),
    ):
        with exported(array) as lent:
            assert lent.array.offset == array.offset
            back = pa.Array._import_from_c(lent.array_ptr, lent.schema_ptr)
        assert back.type == array.type
        assert (len(back), back.offset, back.null_count) == (
            len(array),
            array.offset,
            array.null_count,
        )
        # the same buffers (so the same bits, NaN payloads and -0.0 included)
        assert [b and b.address for b in back.buffers()] == [
            b and b.address for b in array.buffers()
        ]


def test_round_trip_through_the_capsule_protocol() -> None:
    a = pa.array([1.0, None, 3.0])
    with imported(a) as lent:
        counting = Counting(lent)
        assert lent.format == "g"
        assert lent.array.null_count == 1
        assert lent.buffer(1) == a.buffers()[1].address
    assert counting.calls == 1

    class Producer:
        """Any object of the protocol, here one that lends `a` through `exported`."""

        def __arrow_c_array__(self, requested_schema: object = None) -> tuple:
            return a.__arrow_c_array__(requested_schema)

    assert pa.array(Producer()).equals(a)
    with imported(Producer()) as lent:
        assert lent.to_pyarrow().equals(a)


def test_a_borrow_keeps_the_raw_null_count_and_counts_nothing() -> None:
    """The kernels' structs: an uncounted array stays uncounted (Arrow's bitmap rule
    reads that), and each struct points at the array's own buffers."""
    from ppy_arrow.runtime._cdata import Borrow, state

    base = pa.array([1.0, 2.0, 3.0])
    bitmap = pa.py_buffer(bytes([0b101]))
    uncounted = pa.Array.from_buffers(pa.float64(), 3, [bitmap, base.buffers()[1]], null_count=-1)
    held = Borrow([state(uncounted), state(base.slice(0, 2))])
    first = ArrowArray.from_address(ctypes.c_void_p.from_address(held.table).value)
    assert (first.length, first.null_count, first.offset, first.n_buffers) == (3, -1, 0, 2)
    assert first.buffers[0] == bitmap.address
    assert first.buffers[1] == base.buffers()[1].address
    second = ArrowArray.from_address(ctypes.c_void_p.from_address(held.table + 8).value)
    assert (second.length, second.null_count, second.buffers[0]) == (2, 0, None)
    assert state(uncounted)[2] == -1  # still not counted
