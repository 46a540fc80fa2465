"""End to end: build the test regions once, compare with eager bit for bit, try guards."""

from __future__ import annotations

from typing import Any

import pytest
import regions
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.needs_cc


def fast(fn: Any) -> int:
    return int(fn.__ppy_stats__()["fast"])


def _bits(t: torch.Tensor) -> torch.Tensor:
    flat = t.detach().contiguous().reshape(-1)
    return flat.view(torch.uint8) if flat.is_floating_point() else flat


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same dtype, shape, strides and bits (NaN payloads and -0.0 included)."""
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and a.stride() == b.stride()
        and torch.equal(_bits(a), _bits(b))
    )


def test_region_is_active_and_agrees(compiled: dict[str, Any]) -> None:
    layer = compiled["layer"]
    assert layer.__ppy_region__ is True
    assert layer.__name__ == "layer"
    assert layer.__wrapped__ is regions.layer
    x, w, b = torch.randn(8, 32), torch.randn(32, 32), torch.randn(32)
    before = fast(layer)
    assert same(layer(x, w, b), regions.layer(x, w, b))
    assert same(layer(x, weight=w, bias=b), regions.layer(x, w, b))
    assert fast(layer) == before + 2


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 6),
    st.sampled_from([torch.float32, torch.float64]),
    st.sampled_from([0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e-38]),
)
def test_residual_matches_eager(
    compiled: dict[str, Any], n: int, m: int, dtype: torch.dtype, special: float
) -> None:
    x, y = torch.randn(n, m, dtype=dtype), torch.randn(n, m, dtype=dtype)
    x[0, 0] = special
    assert same(compiled["residual"](x, y), regions.residual(x, y))


def test_autograd_grads_are_bitwise_equal(compiled: dict[str, Any]) -> None:
    torch.manual_seed(0)
    args = [
        torch.randn(4, 16),
        torch.randn(16),
        torch.randn(16),
        torch.randn(16, 16),
        torch.randn(16),
    ]
    eager = [a.clone().requires_grad_() for a in args]
    region = [a.clone().requires_grad_() for a in args]
    before = fast(compiled["block"])
    regions.block(*eager).pow(2).sum().backward()
    out = compiled["block"](*region)
    assert out.grad_fn is not None
    assert fast(compiled["block"]) == before + 1
    out.pow(2).sum().backward()
    for e, r in zip(eager, region, strict=True):
        assert e.grad is not None
        assert r.grad is not None
        assert same(e.grad, r.grad)


def test_residual_backward_fills_grad(compiled: dict[str, Any]) -> None:
    tracked = torch.randn(4, 8, requires_grad=True)
    compiled["residual"](tracked, tracked).sum().backward()
    expect = torch.randn(4, 8).copy_(tracked.detach()).requires_grad_()
    regions.residual(expect, expect).sum().backward()
    assert same(tracked.grad, expect.grad)


def test_tuple_return_and_int_parameter(compiled: dict[str, Any]) -> None:
    x = torch.randn(2, 5, 12)
    got = compiled["split_heads"](x, 3)
    want = regions.split_heads(x, 3)
    assert type(got) is tuple
    assert len(got) == 2
    assert all(same(g, w) for g, w in zip(got, want, strict=True))
    pair = compiled["reductions"](x)
    assert all(same(g, w) for g, w in zip(pair, regions.reductions(x), strict=True))


def test_operators_and_attention(compiled: dict[str, Any]) -> None:
    x, y = torch.randn(3, 3), torch.randn(3, 3)
    assert same(compiled["operators"](x, y), regions.operators(x, y))
    q, k, v = (torch.randn(1, 2, 5, 4) for _ in range(3))
    assert same(compiled["attention"](q, k, v), regions.attention(q, k, v))


def test_write_through_parameter(compiled: dict[str, Any]) -> None:
    out, src = torch.zeros(4, 3), torch.ones(2, 3)
    result = compiled["write_rows"](out, src)
    assert result is out
    assert out[:2].eq(1).all()
    assert out[2:].eq(0).all()


class Sub(torch.Tensor):
    pass


class Mode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda x: x.as_subclass(Sub), "type"),
        (lambda x: x.to("meta"), "device"),
        (lambda x: x.numpy(), "type"),
    ],
)
def test_guard_failures_run_python(compiled: dict[str, Any], make: Any, reason: str) -> None:
    layer = compiled["layer"]
    x, w, b = torch.randn(8, 32), torch.randn(32, 32), torch.randn(32)
    odd = make(x)
    before = layer.__ppy_stats__()[reason]
    try:
        expected = regions.layer(
            odd,
            w.to(odd.device) if reason == "device" else w,
            b.to(odd.device) if reason == "device" else b,
        )
    except Exception as exc:
        with pytest.raises(type(exc)):
            layer(odd, w, b)
    else:
        got = layer(
            odd,
            w.to(odd.device) if reason == "device" else w,
            b.to(odd.device) if reason == "device" else b,
        )
        assert type(got) is type(expected)
    assert layer.__ppy_stats__()[reason] == before + 1


def test_torch_function_mode_runs_python(compiled: dict[str, Any]) -> None:
    layer = compiled["layer"]
    x, w, b = torch.randn(8, 32), torch.randn(32, 32), torch.randn(32)
    before = layer.__ppy_stats__()["torch_function"]
    with Mode():
        layer(x, w, b)
    assert layer.__ppy_stats__()["torch_function"] == before + 1


def test_error_inside_region_raises_pythons_error(compiled: dict[str, Any]) -> None:
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        compiled["layer"](torch.randn(8, 3), torch.randn(32, 32), torch.randn(32))
    assert compiled["layer"].__ppy_stats__()["error"] >= 1
