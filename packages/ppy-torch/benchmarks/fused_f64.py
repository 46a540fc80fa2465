"""Fused float64 sites over torch tensors: microseconds per call vs torch eager.

    python packages/ppy-torch/benchmarks/fused_f64.py

Builds the kernels with ppy-llvm's public API (`KernelBuilder`, `compile_specs`) and
wraps them in the same dispatcher a compiled module uses (`ppy_torch.fused`), so the
numbers are the site's call cost: guard, allocation, kernel. Best of five rounds;
torch runs with one thread unless PPY_BENCH_THREADS says otherwise.
"""

from __future__ import annotations

import os
import timeit
from collections.abc import Callable
from typing import Any

import torch

from ppy_core.runtime.abi import kernel_address
from ppy_llvm import KernelBuilder, compile_specs
from ppy_torch.fused import dispatcher, make_site
from ppy_torch.fused_build import build_dispatcher


def _site(
    build: Callable[[KernelBuilder, list[int]], int], leaves: str, fallback: Callable[..., Any]
) -> Any:
    b = KernelBuilder()
    ids = [b.leaf("array" if k == "a" else "scalar") for k in leaves]
    kernel = compile_specs([b.build(build(b, ids))], "bench_torch_fused")[0]
    found = kernel_address(kernel)
    assert found is not None
    return make_site(
        dispatcher(build_dispatcher().path), found[0], leaves, fallback, "bench", found[1]
    )


def fma_like(b: KernelBuilder, x: list[int]) -> int:
    return b.op("add", b.op("mul", x[0], x[1]), x[2])


def five_ops(b: KernelBuilder, x: list[int]) -> int:
    num = b.op("sub", b.op("mul", x[0], x[1]), x[3])
    return b.op("add", b.op("div", num, b.op("abs", x[2])), b.op("neg", x[0]))


CASES = [
    ("a * b + c", fma_like, "aaa", lambda a, b, c: a * b + c),
    (
        "(a*b - s) / |c| + -a",
        five_ops,
        "aaas",
        lambda a, b, c, s: (a * b - s) / torch.abs(c) + a.neg(),
    ),
]


def best(fn: Callable[[], Any], n: int) -> float:
    return min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6


def main() -> None:
    torch.set_num_threads(int(os.environ.get("PPY_BENCH_THREADS", "1")))
    print(
        f"# torch {torch.__version__}, {torch.get_num_threads()} thread(s); us per call, best of 5"
    )
    print(f"{'expression':24s} {'n':>9s} {'eager':>9s} {'fused':>9s} {'ratio':>6s} {'miss':>9s}")
    for label, build, leaves, fallback in CASES:
        site = _site(build, leaves, fallback)
        for n in (1_000, 1_000_000):
            args = [torch.randn(n, dtype=torch.float64) for k in leaves if k == "a"]
            args += [0.5] * leaves.count("s")
            assert torch.equal(site(*args), fallback(*args))
            rounds = 20_000 if n <= 1_000 else 40
            eager = best(lambda: fallback(*args), rounds)  # noqa: B023
            fused = best(lambda: site(*args), rounds)  # noqa: B023
            f32 = [a.float() if isinstance(a, torch.Tensor) else a for a in args]
            miss = best(lambda: site(*f32), rounds)  # noqa: B023
            plain32 = best(lambda: fallback(*f32), rounds)  # noqa: B023
            print(
                f"{label:24s} {n:9d} {eager:9.2f} {fused:9.2f} {fused / eager:6.2f} "
                f"{miss - plain32:+9.2f}"
            )
    print(
        "# miss: what a float32 call (the guard fails, the Python expression runs) costs "
        "beyond calling that expression directly"
    )


if __name__ == "__main__":
    main()
