"""The `_splat` entry of float64 map kernels (`abi.SPLAT_SUFFIX`, `_codegen`'s ABI).

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
from ppy_core.runtime.abi import ROWS_SUFFIX, SPLAT_SUFFIX
from ppy_llvm import KernelBuilder, KernelSpec, compile_specs
from ppy_llvm._kernels import emit_kernel
from ppy_llvm._lower import default_lowerings

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

_P, _I = ctypes.c_void_p, ctypes.c_int64
#: NAME and NAME_splat: (arrays, scalars, out, begin, end, loops)
KERNEL = ctypes.CFUNCTYPE(None, _P, _P, _P, _I, _I, _P)
#: NAME_rows_nan: (arrays, ext, out, len, nrows, steps, loops) -> its NaN witness
ROWS_KERNEL = ctypes.CFUNCTYPE(_I, _P, _P, _P, _I, _I, _P, _P)


def blend() -> KernelSpec:  # a*s + b*(1.0 - c) with a scalar leaf s
    b = KernelBuilder()
    a, s, y, c = b.leaf(), b.leaf("scalar"), b.leaf(), b.leaf()
    one_minus = b.op("sub", b.const(1.0), c)
    return b.build(b.op("add", b.op("mul", a, s), b.op("mul", y, one_minus)))


def above() -> KernelSpec:  # a - c > 1.0: a bool result
    b = KernelBuilder()
    a, c = b.leaf(), b.leaf()
    return b.build(b.op("compare", b.op("sub", a, c), b.const(1.0), pred="gt"))


def fast_blend() -> KernelSpec:  # blend under fastmath: NaN bits not kept
    b = KernelBuilder()
    a, s, y, c = b.leaf(), b.leaf("scalar"), b.leaf(), b.leaf()
    one_minus = b.op("sub", b.const(1.0), c)
    return b.build(b.op("add", b.op("mul", a, s), b.op("mul", y, one_minus)), fastmath=True)


def sine() -> KernelSpec:  # sin(a) * c: NumPy's loop reads its operand by pointer
    b = KernelBuilder()
    a, c = b.leaf(), b.leaf()
    return b.build(b.op("mul", b.op("unary", a, op="sin"), c))


def test_which_kernels_have_the_entry() -> None:
    """Float64 maps without library loops; not reductions, float32 or loop callers."""
    table = default_lowerings()

    def has(spec: KernelSpec) -> bool:
        return f"@k{SPLAT_SUFFIX}(" in emit_kernel(spec, "k", table, set())

    assert has(blend())
    assert has(above())
    assert not has(sine())
    b = KernelBuilder()
    x = b.leaf()
    assert not has(b.build(b.op("mul", x, x), reduce="add"))
    b = KernelBuilder()
    x = b.leaf()
    assert not has(b.build(b.op("mul", x, x), dtype="f32"))


def test_streaming_thresholds_by_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streaming stores start where the arrays fill half the last-level cache; a cache
    over `SOCKET_LLC` (a server socket's) counts as `SOCKET_SHARE`; a run of rows
    streams from four times that; never below 2^15 elements."""
    from ppy_llvm import _kernel_map as km

    for llc, share in ((32 << 20, 32 << 20), (300 << 20, km.SOCKET_SHARE), (1 << 20, 1 << 20)):
        monkeypatch.setattr(km, "llc_bytes", lambda llc=llc: llc)
        for streams in (2, 3, 4):
            want = max(share // 2 // (8 * streams), 1 << 15)
            assert (km.nt_min(streams), km.rows_nt_min(streams)) == (want, 4 * want)


def test_row_invariants_are_computed_once() -> None:
    """``1.0 - c`` and ``a * s`` (one array leaf each) are computed once per _splat
    call where ``c`` (or ``a``) is broadcast along the row, a copy each; a node over
    two array leaves is not a row invariant, and a kernel without one has no such
    copy."""
    from ppy_llvm._kernel_map import row_invariants

    table = default_lowerings()
    spec = blend()
    assert row_invariants(spec) == {3: (5,), 0: (6,)}  # 1.0 - c, a * s
    assert emit_kernel(spec, "k", table, set()).count("row_invariant") == 4
    b = KernelBuilder()
    x, y = b.leaf(), b.leaf()
    d = b.op("sub", x, y)
    plain = b.build(b.op("unary", b.op("mul", d, d), op="sqrt"))
    assert row_invariants(plain) == {}
    assert "row_invariant:" not in emit_kernel(plain, "k", table, set())


@pytest.fixture(scope="module")
def entries() -> dict[str, tuple[Any, Any, Any]]:
    """name -> (plain entry, _splat entry, _rows_nan entry), the library kept alive."""
    specs = {"blend": blend(), "above": above(), "fast_blend": fast_blend()}
    out: dict[str, Any] = {}
    for (name, _), k in zip(
        specs.items(), compile_specs(list(specs.values()), "splat"), strict=True
    ):
        lib = ctypes.CDLL(k.path)

        def entry(suffix: str, kind: Any, lib: Any = lib, symbol: str = k.symbol) -> Any:
            return kind(ctypes.cast(getattr(lib, symbol + suffix), ctypes.c_void_p).value)

        out[name] = (
            entry("", KERNEL),
            entry(SPLAT_SUFFIX, KERNEL),
            entry(ROWS_SUFFIX, ROWS_KERNEL),
        )
        out[f"{name}:lib"] = lib
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
    stream: bool = False,
) -> None:
    plain, splat, _ = entries[name]
    n = len(arrays[0])
    full = [np.full(n, a[0]) if bc else a for a, bc in zip(arrays, broadcast, strict=True)]
    eights = [np.full(8, a[0]) if bc else a for a, bc in zip(arrays, broadcast, strict=True)]
    masks = np.array([0 if bc else -1 for bc in broadcast], dtype=np.int64).view(np.float64)
    want, got = np.empty(n, out_dtype), np.empty(n, out_dtype)
    _call(plain, full, np.array(scalars, dtype=np.float64), want)
    # then the elision bits (none), the streaming bit and the NaN witness (not asked)
    tail = np.array([0, int(stream), 0], dtype=np.int64).view(np.float64)
    _call(splat, eights, np.concatenate([np.array(scalars, dtype=np.float64), masks, tail]), got)
    assert same_bits(got, want), (name, n, broadcast, stream)


PAYLOADS = np.array(
    [0x7FF8000000000001, 0xFFF800000000BEEF, 0x7FF4000000000000], dtype=np.uint64
).view(np.float64)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    n=st.sampled_from([1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 71, 255, 257, 1000, 4101, 400_003]),
    broadcast=st.lists(st.booleans(), min_size=3, max_size=3),
    seed=st.integers(0, 2**32 - 1),
    special=st.floats(0.0, 0.6),
    stream=st.booleans(),
)
def test_splat_entry_equals_plain(
    entries: Any, n: int, broadcast: list[bool], seed: int, special: float, stream: bool
) -> None:
    """The _splat entry equals the plain one on NaN payloads and every special value,
    its stores plain or streamed (the bit the _rows_nan entry sets for a large output)."""
    rng = np.random.default_rng(seed)
    values = np.concatenate([SPECIALS, PAYLOADS])

    def arr() -> np.ndarray:
        x = rng.uniform(-3, 3, n)
        mask = rng.random(n) < special
        x[mask] = values[rng.integers(0, len(values), int(mask.sum()))]
        return x

    s = float(values[rng.integers(0, len(values))]) if rng.random() < special else 0.75
    with np.errstate(all="ignore"):
        _compare(entries, "blend", [arr(), arr(), arr()], [s], broadcast, np.float64, stream)
        _compare(entries, "above", [arr(), arr()], [], broadcast[:2], np.bool_, stream)


@pytest.mark.parametrize(
    ("n", "large"),
    [(n, False) for n in (64, 65, 71, 72, 79, 80, 129, 1000)] + [(n, True) for n in (64, 71, 1000)],
)
def test_rows_entry_at_every_alignment(entries: Any, n: int, large: bool) -> None:
    """The `_rows_nan` entry over rows at any byte step, each output row starting 0..7
    elements past a cache line (the aligned loop's edge vectors and peel), a column
    broadcast along the rows read from its row's first element: NumPy's own
    ``a*s + y*(1-c)``, bit for bit (finite values, -0.0, subnormals, huge: no NaN,
    whose order `test_splat_entry_equals_plain` holds). `large`: rows enough for the
    entry to stream their stores (`_kernel_map.rows_nt_min`)."""
    from ppy_llvm._kernel_map import rows_nt_min

    rows = entries["blend"][2]
    rng = np.random.default_rng(n)
    nrows, s = -(-rows_nt_min(4) // n) if large else 5, 0.75
    values = np.array([0.0, -0.0, 5e-324, -1e-310, 1e300, 2.5])
    for offset in range(0, 8, 3) if large else range(8):
        a = rng.uniform(-3, 3, (nrows, n + 9))[:, 1 : n + 1]
        y = rng.uniform(-3, 3, (nrows, n))
        a[rng.random(a.shape) < 0.2] = -0.0
        y[:, ::7] = values[rng.integers(0, len(values), y[:, ::7].shape)]
        c = rng.uniform(-1, 1, (nrows, 1))
        c[1, 0], c[3, 0] = -0.0, 5e-324
        wide = np.empty(nrows * (n + 8) + 16)
        start = (-wide.ctypes.data % 64) // 8 + offset
        out = wide[start : start + nrows * (n + 8)].reshape(nrows, n + 8)[:, :n]
        ptrs = (ctypes.c_void_p * 3)(a.ctypes.data, y.ctypes.data, c.ctypes.data)
        steps = np.array([a.strides[0], y.strides[0], c.strides[0], out.strides[0]], np.int64)
        masks = np.array([-1, -1, 0], dtype=np.int64).view(np.float64)
        ext = np.concatenate([[s], masks, [0.0, 0.0, 0.0]])  # elision, stream, witness
        seen = rows(ptrs, ext.ctypes.data, out.ctypes.data, n, nrows, steps.ctypes.data, None)
        assert same_bits(out.copy(), a * s + y * (1.0 - c)), (n, offset)
        assert seen == 0


@pytest.mark.parametrize("n", [13, 64, 1001])
def test_rows_entry_tells_nan_results(entries: Any, n: int) -> None:
    """The `_rows_nan` entry's witness: 1 where a row stored a NaN (with the caller's
    witness slot set, the rows after it left unwritten; without, every row written,
    the NaN rows by the exact copy: NumPy's bits for a call per row), 0 where none
    did; a bool result
    never depends on NaN bits (0); a fastmath kernel cannot tell (-1)."""
    rng = np.random.default_rng(n)
    nrows, s = 6, 0.75
    a, y = rng.uniform(-3, 3, (nrows, n)), rng.uniform(-3, 3, (nrows, n))
    c = rng.uniform(-1, 1, (nrows, 1))
    steps = np.array([8 * n, 8 * n, 8, 8 * n], np.int64)
    masks = np.array([-1, -1, 0], dtype=np.int64).view(np.float64)
    want = a * s + y * (1.0 - c)

    def run(name: str, stop: int, out: np.ndarray) -> int:
        ptrs = (ctypes.c_void_p * 3)(a.ctypes.data, y.ctypes.data, c.ctypes.data)
        tail = np.array([0, 0, stop], dtype=np.int64).view(np.float64)
        ext = np.concatenate([[s], masks, tail])
        return int(
            entries[name][2](
                ptrs, ext.ctypes.data, out.ctypes.data, n, nrows, steps.ctypes.data, None
            )
        )

    out = np.full((nrows, n), 7.0)
    assert (run("blend", 1, out), same_bits(out, want)) == (0, True)
    a[2, n - 1], y[2, n - 1] = PAYLOADS[:2]  # both NaN: NumPy's operand order decides
    a[4, 0] = np.nan
    # each row as one NumPy call of its own (the rows' order; NumPy's 2-D calls span
    # rows of a length not a multiple of 8, and its scalar tails fall elsewhere)
    want = np.array([a[r] * s + y[r] * (1.0 - np.full(n, c[r, 0])) for r in range(nrows)])
    out = np.full((nrows, n), 7.0)
    assert run("blend", 1, out) == 1
    assert same_bits(out[:3], want[:3])
    assert (out[3:] == 7.0).all()
    out = np.full((nrows, n), 7.0)
    assert run("blend", 0, out) == 1
    assert same_bits(out, want)
    assert run("fast_blend", 1, np.empty((nrows, n))) == -1
    above_rows = entries["above"][2]
    ptrs = (ctypes.c_void_p * 2)(a.ctypes.data, c.ctypes.data)
    ext = np.concatenate([np.array([-1, 0, 0, 0, 1], dtype=np.int64).view(np.float64)])
    flags = np.empty((nrows, n), np.bool_)
    bool_steps = np.array([8 * n, 8, n], np.int64)
    got = above_rows(
        ptrs, ext.ctypes.data, flags.ctypes.data, n, nrows, bool_steps.ctypes.data, None
    )
    with np.errstate(invalid="ignore"):
        assert (got, (flags == (a - c > 1.0)).all()) == (0, True)
