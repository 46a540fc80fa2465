"""abs of complex128 arrays fused (ppy-llvm's `_complex`): unannotated functions called
with complex arrays compile their `abs(z) > h`, `(np.abs(z) - 1.0) * s + 0.25`,
`np.less(np.absolute(z), h)`, `0.5 <= np.abs(z)` trees through observed signatures,
and a name a loop rebinds to parts of a complex array (`Z = Z[I]`, NPBench's
mandelbrot2) is guessed complex (`ppy_core.compiler.frontend.rebound`). Each answer
equals NumPy's bit for bit (NaN payloads and -0.0 included, compared as raw bytes)
over shapes including empty and 0-d, C, F and strided layouts and special values in
either part; the fast path is asserted where the kernel reads the operand (C- or
F-contiguous, non-empty), and the guard's reason where it does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, outcome_difference, with_reasons
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppy_core.runtime.observed import explain

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def gt(z, h):
    return abs(z) > h


def affine(z, s):
    return (np.abs(z) - 1.0) * s + 0.25


def cheap(z):
    return np.abs(z) * 2.0


def less(z, h):
    return np.less(np.absolute(z), h)


def flipped(z):
    return 0.5 <= np.abs(z)


def fabs(z):
    return np.fabs(z) + 1.0


def shrinking(z, h, n):
    Z = np.array(z, dtype=np.complex128)
    kept = []
    for _ in range(n):
        inside = abs(Z) < h
        kept.append(inside)
        Z = Z[inside]
        Z = Z[Z.real != 0.25]
    return np.concatenate(kept)
"""

#: one part's edge values: signed zeros, infinities, NaNs (with payloads, signalling),
#: subnormals, magnitudes whose squares underflow, ordinary values around the bounds
PARTS = np.concatenate(
    [
        [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 1e-310],
        [2.2250738585072014e-308, 1e-200, 1e-154, 1.0, -1.0, 2.0, -2.0, 1.5, 0.25, 3.0],
        np.array(
            [0x7FF800000000ABCD, 0xFFF80000DEAD0000, 0x7FF0000000000001, 0xFFF0000000000002],
            dtype=np.uint64,
        ).view(np.float64),
    ]
)


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "complex_abs", SOURCE)


@st.composite
def complex_arrays(draw: Any) -> np.ndarray:
    """complex128 arrays of rank 0-3 (some empty), C, F or strided, each part of each
    element random over [-1e300, 1e300] (no |z| overflows) or an edge value."""
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=rank, max_size=rank)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    size = int(np.prod(shape, dtype=np.int64))
    parts = []
    for _ in range(2):
        x = rng.uniform(-1, 1, size) * 10.0 ** rng.uniform(-300, 300, size)
        picks = rng.random(size) < 0.3
        x[picks] = PARTS[rng.integers(0, len(PARTS), int(picks.sum()))]
        parts.append(x)
    z = np.empty(size, np.complex128)
    z.real, z.imag = parts
    z = z.reshape(shape)
    layout = draw(st.sampled_from("CFS"))
    if layout == "F":
        z = np.asfortranarray(z)
    elif layout == "S" and rank:
        z = np.repeat(z, 2, axis=rank - 1)[..., ::2]  # a strided view of the same values
    return z


def _kernel_reads(z: np.ndarray) -> bool:
    return z.ndim > 0 and z.size > 0 and (z.flags.c_contiguous or z.flags.f_contiguous)


def _check(pair: Pair, name: str, args: tuple[Any, ...], fast: bool) -> None:
    before, _ = pair.counts(name)
    got = call(getattr(pair.fast, name), args)
    after, reasons = pair.counts(name)
    want = call(getattr(pair.plain, name), args)
    assert outcome_difference(got, want) is None, (name, outcome_difference(got, want))
    if fast:
        assert after > before, f"{name}: fast path did not run ({with_reasons(reasons)})"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(z=complex_arrays(), h=st.sampled_from([2.0, 0.5, 1e-300, 0.0, -1.0, 1e200]))
def test_abs_trees(pair: Pair, z: np.ndarray, h: float) -> None:
    reads = _kernel_reads(z)
    _check(pair, "gt", (z, h), reads)
    _check(pair, "less", (z, h), reads)
    _check(pair, "flipped", (z,), reads)
    _check(pair, "affine", (z, -0.5), reads)  # |z| <= 1.5e300: no overflow


def test_guard_reasons(pair: Pair) -> None:
    """Where the kernel cannot read the operand, the site says why and Python answers."""
    z = np.arange(8.0) + 1j * np.arange(8.0)[::-1]
    for arg, reason in ((z[::2], "guard: layout"), (z[:0], "guard: empty")):
        _, before = pair.counts("gt")
        _check(pair, "gt", (arg, 2.0), False)
        _, after = pair.counts("gt")
        assert after.get(reason, 0) > before.get(reason, 0), with_reasons(after)


def test_cheap_abs_stays_numpy(pair: Pair) -> None:
    """A whole hypot with one operation around it is no faster than NumPy (E2109):
    its specialization compiles nothing, NumPy answers."""
    z = np.array([1 + 2j, -3j, np.nan])
    before, _ = pair.counts("cheap")
    _check(pair, "cheap", (z,), False)
    assert pair.counts("cheap")[0] == before
    assert any("nothing more compiles" in s for s in explain(pair.fast.cheap))


def test_fabs_of_complex_stays_numpy(pair: Pair) -> None:
    """NumPy's fabs has no complex loop (TypeError): nothing compiled changes that."""
    z = np.array([1 + 2j, -3j])
    _check(pair, "fabs", (z,), False)
    assert call(pair.fast.fabs, (z,)).error is not None


def test_rebound_name_is_guessed_complex(pair: Pair) -> None:
    """`Z = Z[inside]` in a loop: the guess for Z is a complex128 array, fast each time."""
    rng = np.random.default_rng(7)
    z = rng.uniform(-2, 2, 500) + 1j * rng.uniform(-2, 2, 500)
    z[::37] = complex(np.nan, 1.0)
    z[5::41] = complex(0.25, np.inf)
    before, _ = pair.counts("shrinking")
    _check(pair, "shrinking", (z, 1.5, 6), False)
    after, reasons = pair.counts("shrinking")
    assert after - before == 6, with_reasons(reasons)
