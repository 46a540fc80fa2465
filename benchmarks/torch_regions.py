"""ATen region vs eager, side by side in one process, one torch thread.

    python benchmarks/torch_regions.py

Shapes: the 8x32 layer (per-call overhead; target: region <= 0.7x eager) and
64x1024 by 1024x1024 (GEMM-bound; target: equal within noise). Rounds are
interleaved so both columns see the same machine; the best round counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from ppy_torch import compile_function


def layer(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.add(torch.matmul(x, weight), bias))


def per_call_us(fn: Callable[..., torch.Tensor], args: tuple[torch.Tensor, ...], n: int) -> float:
    for _ in range(max(n // 100, 3)):
        fn(*args)
    start = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    region = compile_function(layer)
    assert getattr(region, "__ppy_region__", False), "the region did not build"
    print(f"torch {torch.__version__}, 1 thread; us per call, best of 7 interleaved rounds")
    print(f"{'shape':28s}{'eager':>12s}{'region':>12s}{'ratio':>8s}  target")
    for (m, k, o), calls, target in (
        ((8, 32, 32), 20000, "<= 0.70"),
        ((64, 1024, 1024), 40, "~1.00"),
    ):
        args = (torch.randn(m, k), torch.randn(k, o), torch.randn(o))
        assert torch.equal(region(*args), layer(*args))
        eager, fast = [], []
        for _ in range(7):
            eager.append(per_call_us(layer, args, calls))
            fast.append(per_call_us(region, args, calls))
        e, r = min(eager), min(fast)
        print(f"{f'{m}x{k} @ {k}x{o} + b[{o}]':28s}{e:12.2f}{r:12.2f}{r / e:8.2f}  {target}")
    print("fast-path calls:", region.__ppy_stats__()["fast"])


if __name__ == "__main__":
    main()
