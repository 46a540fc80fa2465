"""The adapter's description of an exact ndarray in a call's signature (what a
specializing dispatcher computes for every array argument of every call) comes from
the C extension (`_dispatch.describe`) and must be the Python describer's tuple, item
for item and type for type: dtypes (native, swapped, equivalent type numbers, ones no
element kind names), ranks, layouts and writeability."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from ppy_core.runtime.signatures import describe
from ppy_numpy._runtime import NumpyAdapter, _element_kinds, python_describer

_dispatch = pytest.importorskip("ppy_numpy._runtime._dispatch")

DTYPES = [
    *("f8", "f4", "f2", "i8", "i4", "i2", "i1", "u1", "u4", "?", "c16", "c8"),
    *("u2", "u8", ">f8", "<f8", ">i4", np.longlong, np.intc, "M8[s]", "m8[ms]", "O", "U3"),
    np.dtype([("x", "f8"), ("y", "i4")]),
    np.dtype("f8", metadata={"unit": "m"}),
]


def _layouts(a: np.ndarray) -> list[np.ndarray]:
    """`a` and views of it in other layouts (F, strided, reversed, read-only, empty)."""
    out = [a, np.asfortranarray(a)]
    if a.ndim:
        out += [a[::2], a[::-1], a[:0], a[..., :1], a[None]]
    if a.ndim > 1:
        out += [a.T, a[:, ::2], np.swapaxes(a, 0, -1)]
    frozen = a.copy()
    frozen.flags.writeable = False
    return [*out, frozen]


def _arrays() -> list[np.ndarray]:
    found = []
    for dtype, shape in itertools.product(DTYPES, [(), (5,), (4, 6), (3, 1, 4), (2, 3, 2, 2)]):
        base = np.zeros(shape, dtype=dtype)
        found.extend(_layouts(base))
    return found


def test_c_describer_is_the_adapters() -> None:
    assert NumpyAdapter().describer(np.ndarray) is _dispatch.describe


def test_c_description_equals_python() -> None:
    python = python_describer(_element_kinds(np))
    arrays = _arrays()
    assert len(arrays) > 1000
    for a in arrays:
        got, want = _dispatch.describe(a), python(a)
        where = (a.dtype.str, a.shape, a.strides)
        assert got == want, where
        assert [type(x) for x in got] == [type(x) for x in want], where
        assert describe(a) == want, where  # what the signatures ask, through the registry


class Sub(np.ndarray):
    """An ndarray subclass: the adapter does not describe it (it stays its class)."""


@pytest.mark.parametrize("value", [np.ones(3).view(Sub), np.float64(1.0), [1.0], None, 2])
def test_only_exact_arrays(value: Any) -> None:
    with pytest.raises(TypeError, match=r"exact numpy\.ndarray"):
        _dispatch.describe(value)
