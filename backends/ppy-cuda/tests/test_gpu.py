"""On a GPU (`gpu` marker; skipped elsewhere): the kernels run through the driver in
torch's context and stream and equal torch's CUDA results bit for bit, on ordinary
and special inputs."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

from ppy_cuda.gpu import gpu_site, specials  # noqa: E402
from ppy_cuda.kernel import KernelBuilder  # noqa: E402

DT = {"f32": torch.float32, "f64": torch.float64}


def inputs(dtype: str, n: int = 1 << 20, k: int = 3) -> list[Any]:
    """Random normals, with the special values and subnormals spliced in."""
    gen = torch.Generator(device="cuda").manual_seed(n + k)
    out = []
    for j in range(k):
        x = torch.randn(n, dtype=DT[dtype], device="cuda", generator=gen) * 10.0 ** (j - 1)
        sp = specials(torch, DT[dtype])
        x[: sp.numel()] = sp.roll(j)
        out.append(x)
    return out


def same_bits(got: Any, want: Any) -> bool:
    if got.dtype == torch.bool:
        return torch.equal(got, want)
    bits = torch.int32 if got.dtype == torch.float32 else torch.int64
    nan = torch.isnan(got) & torch.isnan(want)
    return bool(((got.view(bits) == want.view(bits)) | nan).all())


CASES = {
    "a*b+c": (lambda b, x, y, z: b.op("add", b.op("mul", x, y), z), lambda a, b, c: a * b + c),
    "where": (
        lambda b, x, y, z: b.op("select", b.op("compare", x, y, pred="gt"), b.op("sub", x, z), y),
        lambda a, b, c: torch.where(a > b, a - c, b),
    ),
    "add alpha": (
        lambda b, x, y, z: b.op("add", x, y, alpha=0.3),
        lambda a, b, c: torch.add(a, b, alpha=0.3),
    ),
    "sub alpha": (
        lambda b, x, y, z: b.op("sub", x, y, alpha=1.7),
        lambda a, b, c: torch.sub(a, b, alpha=1.7),
    ),
    "maximum": (lambda b, x, y, z: b.op("maximum", x, y), lambda a, b, c: torch.maximum(a, b)),
    "minimum": (lambda b, x, y, z: b.op("minimum", x, y), lambda a, b, c: torch.minimum(a, b)),
    "div": (lambda b, x, y, z: b.op("div", x, y), lambda a, b, c: a / b),
    "sqrt abs": (
        lambda b, x, y, z: b.op("unary", b.op("unary", x, fn="abs"), fn="sqrt"),
        lambda a, b, c: a.abs().sqrt(),
    ),
    "recip floor": (
        lambda b, x, y, z: b.op("unary", b.op("unary", x, fn="reciprocal"), fn="floor"),
        lambda a, b, c: a.reciprocal().floor(),
    ),
    "ne": (lambda b, x, y, z: b.op("compare", x, y, pred="ne"), lambda a, b, c: a != b),
    # unproven until these pass (kernel.FUSED_OPS): torch's own nvcc-contracted kernels
    "addcmul": (
        lambda b, x, y, z: b.op("addcmul", x, y, z, value=0.3),
        lambda a, b, c: torch.addcmul(a, b, c, value=0.3),
    ),
    "lerp tensor weight": (
        lambda b, x, y, z: b.op("lerp", x, y, z),
        lambda a, b, c: torch.lerp(a, b, c),
    ),
}


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_equals_torch_bit_for_bit(case: str, dtype: str) -> None:
    tree, eager = CASES[case]
    b = KernelBuilder(dtype)  # type: ignore[arg-type]
    x, y, z = b.leaf(), b.leaf(), b.leaf()
    site = gpu_site(b.build(tree(b, x, y, z)), proven_only=False)
    a, bb, c = inputs(dtype)
    got = site(a, bb, c)
    assert site.ppy_stats()["launches"] == 1
    assert same_bits(got, eager(a, bb, c))


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("s", [3.0, 0.1, -7.25, 1e-30, 3e38])
def test_division_and_product_by_python_scalar(dtype: str, s: float) -> None:
    b = KernelBuilder(dtype)  # type: ignore[arg-type]
    x, k = b.leaf(), b.leaf("s")
    div, mul = gpu_site(b.build(b.op("div", x, k))), None
    b2 = KernelBuilder(dtype)  # type: ignore[arg-type]
    x2, k2 = b2.leaf(), b2.leaf("s")
    mul = gpu_site(b2.build(b2.op("mul", x2, k2)))
    (a,) = inputs(dtype, k=1)
    assert same_bits(div(a, s), a / s)
    assert same_bits(mul(a, s), a * s)


def test_empty_and_non_default_stream() -> None:
    b = KernelBuilder("f32")
    x, y = b.leaf(), b.leaf()
    site = gpu_site(b.build(b.op("mul", x, y)))
    empty = torch.empty(0, device="cuda")
    assert site(empty, empty).shape == (0,)
    assert site.ppy_stats()["launches"] == 0
    stream = torch.cuda.Stream()
    a, bb = inputs("f32", k=2)
    with torch.cuda.stream(stream):
        got = site(a, bb)
    stream.synchronize()
    assert same_bits(got, a * bb)
    assert site.ppy_stats()["launches"] == 1


def test_cpu_and_autograd_tensors_run_torch() -> None:
    b = KernelBuilder("f32")
    x, y = b.leaf(), b.leaf()
    site = gpu_site(b.build(b.op("mul", x, y)), fallback=lambda p, q: p * q)
    a = torch.randn(8, device="cuda", requires_grad=True)
    assert site(a, a).requires_grad
    site(torch.randn(4), torch.randn(4))
    assert site.ppy_stats()["fallback"] == {"grad": 1, "device": 1}


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("w", [0.25, 0.5, 0.75, -0.3, 1.5])
def test_lerp_with_python_weight(dtype: str, w: float) -> None:
    b = KernelBuilder(dtype)  # type: ignore[arg-type]
    s, e, k = b.leaf(), b.leaf(), b.leaf("s")
    site = gpu_site(b.build(b.op("lerp", s, e, k)), proven_only=False)
    x, y = inputs(dtype, k=2)
    assert same_bits(site(x, y, w), torch.lerp(x, y, w))
