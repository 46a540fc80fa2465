"""The `_splat` entry of float64 map kernels (`_kernels.SPLAT`, `_codegen`'s ABI).

It reads array j at index ``i & m_j`` (``m_j`` after the scalars): an operand whose
mask is 0 is a buffer of 8 copies of one value. Its results must be the plain entry's
bit for bit over the same values spelled out as whole arrays, for every length (vector
body, scalar tail, streaming stores) and any operands, NaN payloads included.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SPECIALS, same_bits
from ppy_llvm import KernelBuilder, KernelSpec, compile_specs
from ppy_llvm._kernels import SPLAT, emit_kernel
from ppy_llvm._lower import default_lowerings

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

KERNEL = ctypes.CFUNCTYPE(
    None,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_int64,
    ctypes.c_int64,
    ctypes.c_void_p,
)


def blend() -> KernelSpec:  # a*s + b*(1.0 - c) with a scalar leaf s
    b = KernelBuilder()
    a, s, y, c = b.leaf(), b.leaf("scalar"), b.leaf(), b.leaf()
    one_minus = b.op("sub", b.const(1.0), c)
    return b.build(b.op("add", b.op("mul", a, s), b.op("mul", y, one_minus)))


def above() -> KernelSpec:  # a - c > 1.0: a bool result
    b = KernelBuilder()
    a, c = b.leaf(), b.leaf()
    return b.build(b.op("compare", b.op("sub", a, c), b.const(1.0), pred="gt"))


def sine() -> KernelSpec:  # sin(a) * c: NumPy's loop reads its operand by pointer
    b = KernelBuilder()
    a, c = b.leaf(), b.leaf()
    return b.build(b.op("mul", b.op("unary", a, op="sin"), c))


def test_which_kernels_have_the_entry() -> None:
    """Float64 maps without library loops; not reductions, float32 or loop callers."""
    table = default_lowerings()

    def has(spec: KernelSpec) -> bool:
        return f"@k{SPLAT}(" in emit_kernel(spec, "k", table, set())

    assert has(blend())
    assert has(above())
    assert not has(sine())
    b = KernelBuilder()
    x = b.leaf()
    assert not has(b.build(b.op("mul", x, x), reduce="add"))
    b = KernelBuilder()
    x = b.leaf()
    assert not has(b.build(b.op("mul", x, x), dtype="f32"))


@pytest.fixture(scope="module")
def entries() -> dict[str, tuple[Any, Any, Any]]:
    """name -> (plain entry, _splat entry, library handle)."""
    specs = {"blend": blend(), "above": above()}
    out = {}
    for (name, _), k in zip(
        specs.items(), compile_specs(list(specs.values()), "splat"), strict=True
    ):
        lib = ctypes.CDLL(k.path)
        plain = KERNEL(ctypes.cast(getattr(lib, k.symbol), ctypes.c_void_p).value)
        splat = KERNEL(ctypes.cast(getattr(lib, k.symbol + SPLAT), ctypes.c_void_p).value)
        out[name] = (plain, splat, lib)
    return out


def _call(fn: Any, arrays: list[np.ndarray], scalars: np.ndarray, out: np.ndarray) -> None:
    ptrs = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
    fn(ptrs, scalars.ctypes.data, out.ctypes.data, 0, len(out), None)


def _compare(
    entries: Any,
    name: str,
    arrays: list[np.ndarray],
    scalars: list[float],
    broadcast: list[bool],
    out_dtype: Any,
) -> None:
    plain, splat, _ = entries[name]
    n = len(arrays[0])
    full = [np.full(n, a[0]) if bc else a for a, bc in zip(arrays, broadcast, strict=True)]
    eights = [np.full(8, a[0]) if bc else a for a, bc in zip(arrays, broadcast, strict=True)]
    masks = np.array([0 if bc else -1 for bc in broadcast], dtype=np.int64).view(np.float64)
    want, got = np.empty(n, out_dtype), np.empty(n, out_dtype)
    _call(plain, full, np.array(scalars, dtype=np.float64), want)
    _call(splat, eights, np.concatenate([np.array(scalars, dtype=np.float64), masks]), got)
    assert same_bits(got, want), (name, n, broadcast)


PAYLOADS = np.array(
    [0x7FF8000000000001, 0xFFF800000000BEEF, 0x7FF4000000000000], dtype=np.uint64
).view(np.float64)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    n=st.sampled_from([1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 71, 255, 257, 1000, 4101, 400_003]),
    broadcast=st.lists(st.booleans(), min_size=3, max_size=3),
    seed=st.integers(0, 2**32 - 1),
    special=st.floats(0.0, 0.6),
)
def test_splat_entry_equals_plain(
    entries: Any, n: int, broadcast: list[bool], seed: int, special: float
) -> None:
    rng = np.random.default_rng(seed)
    values = np.concatenate([SPECIALS, PAYLOADS])

    def arr() -> np.ndarray:
        x = rng.uniform(-3, 3, n)
        mask = rng.random(n) < special
        x[mask] = values[rng.integers(0, len(values), int(mask.sum()))]
        return x

    s = float(values[rng.integers(0, len(values))]) if rng.random() < special else 0.75
    with np.errstate(all="ignore"):
        _compare(entries, "blend", [arr(), arr(), arr()], [s], broadcast, np.float64)
        _compare(entries, "above", [arr(), arr()], [], broadcast[:2], np.bool_)
