"""The GPU proof's harness, run on the CPU with torch standing in for the kernel: it
finds nothing when the kernel is torch, and finds a one-ulp difference when there
is one (so a proof that passes on the GPU means something)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ppy_cuda.gpu import prove_f32, prove_f64, specials  # noqa: E402


def nudged(fn):
    """`fn`, one ulp off wherever its result is finite and above 0.25."""

    def site(x):
        y = getattr(torch, fn)(x)
        bits = torch.int32 if y.dtype == torch.float32 else torch.int64
        off = (y.view(bits) + (y > 0.25).to(bits)).view(y.dtype)
        return torch.where(torch.isfinite(y), off, y)

    return site


@pytest.mark.parametrize("fn", ["sin", "exp"])
def test_float32_span_equal_and_nudged(fn: str) -> None:
    span = (0x3F000000, 0x3F000000 + (1 << 16))  # [0.5, 0.5078): sin, exp both > 0.47
    ref = getattr(torch, fn)
    assert prove_f32(torch, fn, 1 << 14, site=ref, span=span, device="cpu") == 0
    assert prove_f32(torch, fn, 1 << 14, site=nudged(fn), span=span, device="cpu") > 0
    # the sign-bit half maps through int32 correctly: -0.0 .. negative NaNs
    negative = (0x80000000, 0x80000000 + 4096)
    assert prove_f32(torch, fn, 4096, site=ref, span=negative, device="cpu") == 0


def test_float64_sample_equal_and_nudged() -> None:
    assert prove_f64(torch, "exp", 4096, site=torch.exp, device="cpu") == 0
    assert prove_f64(torch, "exp", 4096, site=nudged("exp"), device="cpu") > 0


def test_specials_hold_signed_zero_inf_nan_subnormal() -> None:
    sp = specials(torch, torch.float32, "cpu")
    assert torch.isnan(sp).any()
    assert torch.isinf(sp).sum() >= 2
    assert (torch.signbit(sp) & (sp == 0)).any()
    assert ((sp != 0) & (sp.abs() < torch.finfo(torch.float32).tiny)).any()
