"""Wrapping a kernel's answer as a pandas Series, without a copy, fast.

`pd.Series(values, index=index, name=name, copy=False)` costs ~20 us a call (it
sanitizes, infers and validates what the kernel already knows), a tenth of a fused
site's time at 1e5 rows. pandas builds its own operators' answers from a block
manager instead (`Series._from_mgr(SingleBlockManager.from_array(...))`, ~6 us);
`series_maker` takes that road where this pandas has it (2.1 and later) and it
builds exactly what the public constructor builds: checked once per process on
probes of both backings (type, dtype, values object, index object, name, flags,
attrs, and what a write into the answer does to a view of it, a Series derived from
it and the array it wraps: copy-on-write's rules, whichever the version has).
Anything else, a pandas without those names included, gets the public constructor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Maker = Callable[[Any, Any, Any], Any]  # (values, index, name) -> pd.Series


def public_maker(pd: Any) -> Maker:
    """pandas' public constructor, wrapping `values` without a copy."""
    series = pd.Series

    def make(values: Any, index: Any, name: Any) -> Any:
        return series(values, index=index, name=name, copy=False)

    return make


def manager_maker(pd: Any) -> Maker | None:
    """The block-manager constructor pandas' own operators use; None where this
    pandas lacks one of its names."""
    try:
        from pandas.core.internals import SingleBlockManager

        from_mgr = pd.Series._from_mgr
        from_array = SingleBlockManager.from_array
    except (ImportError, AttributeError):
        return None

    def make(values: Any, index: Any, name: Any) -> Any:
        out = from_mgr(from_array(values, index), [index])
        out.name = name  # None too: a Series made so has no name until it is set
        return out

    return make


def _probes(pd: Any) -> list[tuple[Callable[[], Any], Any, Any]]:
    """(fresh values, index, name) on both backings, names of each kind."""
    import numpy as np
    import pyarrow as pa

    def arrow() -> Any:
        return pd.arrays.ArrowExtensionArray(pa.array([True, None, False]))

    return [
        (lambda: np.array([1.5, np.nan, -0.0]), pd.RangeIndex(3), None),
        (lambda: np.array([True, False, True]), pd.Index([7, 8, 9], name="i"), "x"),
        (arrow, pd.Index([4, 5, 6]), 3),
        (lambda: pd.arrays.ArrowExtensionArray(pa.array([1.0, None, 2.0])), pd.RangeIndex(3), "y"),
    ]


def _same(got: Any, want: Any, values: Any, index: Any) -> bool:
    """Whether two answers are one answer in every respect pandas exposes."""
    if type(got) is not type(want) or got.dtype != want.dtype:
        return False
    if got.index is not index or want.index is not index or got.name != want.name:
        return False
    for answer in (got, want):  # both wrap the very values given: the same data
        if answer.array is not values and answer._values is not values:
            return False
    return got.attrs == want.attrs and got.flags.allows_duplicate_labels is True


def _after_writes(pd: Any, make: Maker) -> tuple[float, ...]:
    """What an answer, a view of it, a Series derived from it and the array it wraps
    hold after a write into the answer (copy-on-write decides, per pandas version)."""
    import numpy as np

    values = np.array([1.0, 2.0, 3.0])
    out = make(values, pd.RangeIndex(3), None)
    view, derived = out[:], out * 1.0
    out.iloc[0] = 9.0
    return float(out.iloc[0]), float(view.iloc[0]), float(derived.iloc[0]), float(values[0])


_CHOSEN: dict[int, Maker] = {}


def series_maker(pd: Any) -> Maker:
    """The fastest constructor that builds pandas' own answer (see the module
    docstring); the public one when the manager road differs in any probe. Chosen
    once per pandas module."""
    if id(pd) not in _CHOSEN:
        _CHOSEN[id(pd)] = _choose(pd)
    return _CHOSEN[id(pd)]


def _choose(pd: Any) -> Maker:
    fast = manager_maker(pd)
    if fast is None:
        return public_maker(pd)
    public = public_maker(pd)
    try:
        for fresh, index, name in _probes(pd):
            values = fresh()
            if not _same(fast(values, index, name), public(values, index, name), values, index):
                return public
        if _after_writes(pd, fast) != _after_writes(pd, public):
            return public
    except Exception:  # a pandas whose internals moved: its public constructor
        return public
    return fast


__all__ = ["Maker", "manager_maker", "public_maker", "series_maker"]
