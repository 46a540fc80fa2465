"""The loop tests' copies keep the layout they were given (`layouts`, `outcome`).

`outcome` once copied every array with `a.copy()`: C order, unit strides, a fresh
owner. A test handing it an F-ordered array or a strided view then never ran that
layout's code; these tests fail against such a copy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from loops_harness import outcome

from ppy_numpy.testing import ALIGNMENT, layout_copies, layout_of


def _grid() -> np.ndarray:
    return np.arange(48.0).reshape(6, 8)


#: name -> an array of that layout (each a fresh one)
LAYOUTS: dict[str, Callable[[], np.ndarray]] = {
    "C": _grid,
    "F": lambda: np.asfortranarray(_grid()),
    "column": lambda: _grid()[:, 3],
    "every other": lambda: np.repeat(np.arange(9.0), 2)[::2],
    "offset view": lambda: _grid()[1:5, 2:7],
    "reversed": lambda: _grid()[::-1, ::-2],
    "transposed view": lambda: _grid()[1:, ::3].T,
    "broadcast": lambda: np.broadcast_to(np.arange(4.0), (3, 4)),
    "as_strided": lambda: np.lib.stride_tricks.as_strided(np.arange(10.0), (4, 3), (16, 8)),
    "read-only F": lambda: _frozen(np.asfortranarray(_grid())),
    "odd address": lambda: np.arange(40, dtype=np.uint8)[3:].view(np.int8)[::5],
    "empty": lambda: np.empty((0, 3))[:, ::2],
    "0-d": lambda: np.array(2.5),
}


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


@pytest.mark.parametrize("name", LAYOUTS)
def test_a_copy_has_the_originals_layout_and_bytes(name: str) -> None:
    original = LAYOUTS[name]()
    (copy,), layouts = layout_copies([original])
    assert copy.strides == original.strides  # `a.copy()` fails this for all but "C"
    assert layout_of(copy) == layout_of(original)
    assert copy.tobytes() == original.tobytes()
    assert not np.may_share_memory(copy, original)
    assert _address(copy) % ALIGNMENT == _address(original) % ALIGNMENT
    assert len(layouts.buffer_bytes()) == 1


def test_a_view_stays_a_view_of_a_copy_of_its_whole_buffer() -> None:
    grid = _grid()
    view = grid[1:5, 2:7:2]
    (copy,), layouts = layout_copies([view])
    assert copy.base is not None
    assert not copy.flags.owndata
    (buffer,) = layouts.buffer_bytes()
    assert buffer == grid.tobytes()  # the bytes around the view too
    ((raw, shift),) = layouts.buffers.values()
    assert _address(copy) - (raw.ctypes.data + shift) == _address(view) - _address(grid)


def test_arguments_sharing_a_buffer_share_the_copy() -> None:
    grid = _grid()
    copies, layouts = layout_copies([grid, grid[::2], 3.0, grid])
    assert len(layouts.buffers) == 1
    copies[0][0, 0] = -1.0
    assert copies[1][0, 0] == -1.0
    assert copies[3] is not copies[0]
    assert copies[3][0, 0] == -1.0
    assert copies[2] == 3.0
    assert grid[0, 0] == 0.0  # the original untouched


def _strides(a: np.ndarray) -> tuple[tuple[int, ...], bool, bool]:
    return a.strides, bool(a.flags.f_contiguous), bool(a.flags.writeable)


@pytest.mark.parametrize("name", ["F", "column", "reversed", "read-only F"])
def test_outcome_calls_with_the_layout_asked_for(name: str) -> None:
    """What the function saw is the original's layout (C order under `a.copy()`)."""
    original = LAYOUTS[name]()
    ok, _, text, _, *_ = outcome(lambda a: repr(_strides(a)), original)
    assert ok == "ok"
    assert text == repr(repr(_strides(original)))


def _write_in_view(a: np.ndarray) -> None:
    a[0] = 7.0


def _write_past_view(a: np.ndarray) -> None:
    a[0] = 7.0
    np.lib.stride_tricks.as_strided(a, (2,), (-a.itemsize,))[1] = 9.0  # the element before


def test_outcome_shows_a_write_outside_the_view() -> None:
    """Same view afterwards, another buffer: a compiled loop writing past its view's
    bounds (a stride taken for one) differs from Python's outcome."""
    view = _grid()[2]
    assert outcome(_write_in_view, view) != outcome(_write_past_view, view)
    assert outcome(_write_in_view, view)[3] == outcome(_write_past_view, view)[3]


def test_outcome_gives_each_call_its_own_copy() -> None:
    grid = _grid()
    first = outcome(_write_in_view, grid)
    assert first == outcome(_write_in_view, grid)
    assert grid[0, 0] == 0.0


def test_outcome_keeps_read_only() -> None:
    """A store into a read-only argument raises as in Python (the copy is read-only)."""
    what: Any = outcome(_write_in_view, _frozen(np.zeros(3)))
    assert what[:2] == ("raise", ValueError)
