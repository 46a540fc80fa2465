"""complex128 leaves (`ppy_llvm._complex`): ``abs(z)`` computed in a float64 kernel
with NumPy's SIMD hypot bits, proven per build, and refused (E2047) wherever a
complex128 array would meet anything but abs."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppy_llvm import KernelBuilder, KernelSpec, compile_specs
from ppy_llvm._complex import PROOF_NAME, complex_refusal, run_complex_proof
from ppy_llvm._errors import LlvmBackendError
from ppy_llvm._exp import host_has_fma

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

#: one part's edge values: signed zeros, infinities, NaNs (payloads, signalling),
#: subnormals, the overflow edge, squares that underflow or overflow
PARTS = np.concatenate(
    [
        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, 2.2250738585072014e-308],
        [1.7976931348623157e308, 1e154, 1e-154, 1e-200, 1.0, -1.0, 2.0, 3.0, 4.0, 0.5, -7.25],
        np.array(
            [0x7FF800000000ABCD, 0xFFF80000DEAD0000, 0x7FF0000000000001, 0xFFF8000000000000],
            dtype=np.uint64,
        ).view(np.float64),
    ]
)


def _spec(shape: str) -> KernelSpec:
    b = KernelBuilder()
    z, h = b.leaf("complex"), b.leaf("scalar")
    cabs = b.op("cabs", z)
    if shape == "abs":
        return b.build(cabs)
    if shape == "gt":
        return b.build(b.op("compare", cabs, h, pred="gt"))
    return b.build(b.op("add", b.op("mul", cabs, h), b.const(1.0)))


@functools.cache
def _sites() -> dict[str, Any]:
    from ppy_core.runtime.abi import kernel_address
    from ppy_numpy._runtime import make_site

    shapes = ("abs", "gt", "affine")
    kernels = compile_specs([_spec(s) for s in shapes], "test-complex")
    out = {}
    for shape, kernel in zip(shapes, kernels, strict=True):
        address, keep = kernel_address(kernel)  # type: ignore[misc]
        sig = kernel.signature
        out[shape] = make_site(
            address, sig.kind, sig.leaves, sig.loops, lambda *a: None, shape, keep
        )
    return out


REFERENCE = {
    "abs": lambda z, h: np.abs(z),
    "gt": lambda z, h: np.abs(z) > h,
    "affine": lambda z, h: np.abs(z) * h + 1.0,
}


def _complex(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    z = np.empty(re.shape, np.complex128)
    z.real, z.imag = re, im
    return z


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    return got.dtype == want.dtype and np.array_equal(
        np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8)
    )


def test_every_pair_of_edge_parts() -> None:
    """Every (real, imaginary) pair of edge values, at lengths covering the vector body
    and the scalar tail: NumPy's bits, NaN payloads included."""
    re, im = np.meshgrid(PARTS, PARTS)
    z = _complex(re.ravel(), im.ravel())
    for n in (1, 7, 8, 9, 17, z.size):
        for shape, site in _sites().items():
            with np.errstate(all="ignore"):
                got, want = site(z[:n], 2.0), REFERENCE[shape](z[:n], 2.0)
            assert got is not None, shape
            assert _same(got, want), (shape, n)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 300),
    order=st.sampled_from("CF"),
    h=st.sampled_from([2.0, 0.5, 0.0, -1.0, np.inf, np.nan, 1e300]),
)
def test_random_arrays(seed: int, n: int, order: str, h: float) -> None:
    rng = np.random.default_rng(seed)
    parts = []
    for _ in range(2):
        x = rng.standard_normal(2 * n) * 10.0 ** rng.uniform(-300, 300, 2 * n)
        picks = rng.random(2 * n) < 0.2
        x[picks] = PARTS[rng.integers(0, len(PARTS), int(picks.sum()))]
        parts.append(x.reshape(2, n))
    z = np.asarray(_complex(*parts), order=order)
    for shape, site in _sites().items():
        with np.errstate(all="ignore"):
            got, want = site(z, h), REFERENCE[shape](z, h)
        assert got is not None
        assert got.flags.f_contiguous == want.flags.f_contiguous
        assert _same(got, want), shape


def test_layouts_the_kernel_cannot_read_fall_back() -> None:
    """Strided (and empty) complex operands: the site answers from Python."""
    z = _complex(np.arange(12.0), np.arange(12.0) - 5.0)
    site = _sites()["gt"]
    assert site(z[::2], 2.0) is None
    assert site(z.reshape(3, 4)[:, 1:], 2.0) is None
    assert site(z[:0], 2.0) is None
    assert site(z, 2.0) is not None


def test_the_proof_accepts_this_build() -> None:
    """The adapter's experiment on complex inputs (skipped where NumPy's hypot is not
    fused: the proof must then refuse)."""
    verdict = run_complex_proof("numpy")
    if not host_has_fma():
        assert verdict[PROOF_NAME] != "ok"
        return
    assert verdict == {PROOF_NAME: "ok"}


def test_a_wrong_formula_fails_the_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proof can fail: libm's hypot-like formula without the fma differs."""
    from ppy_llvm import _complex

    def unfused(ctx: Any, a: str, b: str, c: str) -> str:
        return ctx.binop("fadd", ctx.binop("fmul", a, b, ordered=False), c, ordered=False)

    monkeypatch.setattr(_complex, "_fma", unfused)
    verdict = run_complex_proof("numpy")
    assert verdict[PROOF_NAME].startswith("bits differ"), verdict


@pytest.mark.parametrize(
    ("build", "detail"),
    [
        (lambda b, z: b.op("mul", z, z), "under mul"),
        (lambda b, z: z, "as the result"),
        (lambda b, z: b.op("unary", b.op("cabs", z), op="sin"), "loop calls"),
    ],
)
def test_complex_meets_only_abs(build: Any, detail: str) -> None:
    b = KernelBuilder()
    z = b.leaf("complex")
    spec = b.build(build(b, z))
    with pytest.raises(LlvmBackendError, match=detail) as info:
        complex_refusal(spec)
    assert info.value.code == "E2047"


def test_no_reduction_of_complex() -> None:
    b = KernelBuilder()
    z = b.leaf("complex")
    with pytest.raises(LlvmBackendError, match="reduction") as info:
        complex_refusal(b.build(b.op("cabs", z), reduce="add"))
    assert info.value.code == "E2047"


@functools.cache
def _compare_sites() -> dict[tuple[str, bool], Any]:
    """``abs(z) pred h`` and ``h pred abs(z)`` for every predicate (`bounded_compare`)."""
    from ppy_core.runtime.abi import kernel_address
    from ppy_numpy._runtime import make_site

    keys, specs = [], []
    for pred in ("lt", "le", "gt", "ge", "eq", "ne"):
        for flipped in (False, True):
            b = KernelBuilder()
            z, h = b.leaf("complex"), b.leaf("scalar")
            cabs = b.op("cabs", z)
            args = (h, cabs) if flipped else (cabs, h)
            specs.append(b.build(b.op("compare", *args, pred=pred)))
            keys.append((pred, flipped))
    out = {}
    for key, kernel in zip(keys, compile_specs(specs, "test-complex-compare"), strict=True):
        address, keep = kernel_address(kernel)  # type: ignore[misc]
        sig = kernel.signature
        out[key] = make_site(address, sig.kind, sig.leaves, sig.loops, lambda *a: None, "c", keep)
    return out


COMPARE = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
COMPARE |= {"eq": np.equal, "ne": np.not_equal}


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    h=st.sampled_from([2.0, 1.0, 0.1, 3e-200, 7e250, 2.0**-300, 2.0**300, 0.0, -2.0, np.inf]),
)
def test_compare_near_the_bound(seed: int, h: float) -> None:
    """|z| within a few ulps of h (where only NumPy's own hypot decides), far from it,
    and edge values: every predicate, either operand order, NumPy's bools."""
    rng = np.random.default_rng(seed)
    n = 300
    theta = rng.uniform(0, 2 * np.pi, n)
    radius = abs(h) * (1.0 + rng.integers(-24, 25, n) * 2.0**-52)
    radius[::3] = abs(h) * 10.0 ** rng.uniform(-5, 5, radius[::3].size)
    z = _complex(radius * np.cos(theta), radius * np.sin(theta))
    z[::7] = _complex(*(PARTS[rng.integers(0, len(PARTS), z[::7].size)] for _ in range(2)))
    for (pred, flipped), site in _compare_sites().items():
        with np.errstate(all="ignore"):
            got = site(z, h)
            want = COMPARE[pred](h, np.abs(z)) if flipped else COMPARE[pred](np.abs(z), h)
        assert got is not None
        assert _same(got, want), (pred, flipped, h)


def test_cost_rule() -> None:
    """A whole hypot with two operations or fewer around it is refused (E2109's
    detail); a bounded compare, or more arithmetic, builds."""
    from ppy_llvm._cost import cost_refusal

    def spec(build: Any) -> KernelSpec:
        b = KernelBuilder()
        z, h = b.leaf("complex"), b.leaf("scalar")
        return b.build(build(b, b.op("cabs", z), h))

    cheap = spec(lambda b, c, h: b.op("mul", c, h))
    assert "NumPy's SIMD abs is as fast" in str(cost_refusal(cheap))
    assert cost_refusal(spec(lambda b, c, h: b.op("compare", c, h, pred="gt"))) is None
    more = spec(lambda b, c, h: b.op("add", b.op("mul", b.op("sub", c, h), h), h))
    assert cost_refusal(more) is None
