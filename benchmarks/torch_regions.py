"""ATen region vs a hand-written C++ extension vs eager, side by side in one process.

    python benchmarks/torch_regions.py [--rounds 150] [--out DIR]

The layer `relu(add(matmul(x, w), b))` three ways, one torch thread:

* eager: the Python function (three torch calls through the Python binding);
* region: the same function compiled by `ppy_torch.compile_function` (guard, argument
  unpacking, the three at:: calls, return path);
* reference: `region_reference/layer.cpp`, a hand-written extension making the same
  three at:: calls, built by the same builder (compiler, flags, precompiled prelude,
  link line) so only the code a call runs differs.

Shapes: 8x32 @ 32x32 (per-call overhead dominates; target: region within 5% of the
reference) and 64x1024 @ 1024x1024 (GEMM-bound; all three equal within noise).
Timing: short blocks of calls, the three ways interleaved block by block, many rounds;
a way's time is its best block, and "region/ref" is also given as the median of the
per-round ratios (each round's blocks ran back to back, so a busy neighbour on a
shared machine slows both alike). Writes DIR/torch_regions.md and .png.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _charts import bar_chart  # noqa: E402  (benchmarks/ is not a package)

WAYS = ("eager", "region", "reference")
#: (m, k, o), calls per block, the most region/reference may be (None: no target)
SHAPES = (((8, 32, 32), 500, 1.05), ((64, 1024, 1024), 3, None))


def layer(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.add(torch.matmul(x, weight), bias))


def block_us(fn: Callable[..., torch.Tensor], args: tuple[torch.Tensor, ...], n: int) -> float:
    """Microseconds per call over one block of `n` calls."""
    x, w, b = args
    start = time.perf_counter()
    for _ in range(n):
        fn(x, w, b)
    return (time.perf_counter() - start) / n * 1e6


def measure(
    fns: dict[str, Callable[..., torch.Tensor]],
    args: tuple[torch.Tensor, ...],
    calls: int,
    rounds: int,
) -> dict[str, list[float]]:
    for fn in fns.values():  # warm up: allocator, caches, branch predictors
        block_us(fn, args, calls * 2)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name].append(block_us(fn, args, calls))
    return times


def _verdict(target: float | None, ratio: float) -> str:
    if target is None:
        return "none (GEMM-bound: equal within noise)"
    return f"<= {target:.2f}: {'met' if ratio <= target else 'NOT met'}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=150, help="interleaved rounds per shape")
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)

    import region_reference

    from ppy_torch import compile_function

    print("building (cached after the first run) ...", flush=True)
    region = compile_function(layer)
    assert getattr(region, "__ppy_region__", False), "the region did not build"
    fns = {"eager": layer, "region": region, "reference": region_reference.load().layer}
    region.ppy_reset()

    lines = [
        f"torch {torch.__version__}, 1 thread, {args.rounds} interleaved rounds; "
        "us per call (best block)",
        "",
        "| shape | eager | region | reference | region/eager | region/ref (best) "
        "| region/ref (median) | ref/eager | target region/ref |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    chart_rows: dict[str, list[float]] = {way: [] for way in WAYS}
    labels = []
    for (m, k, o), calls, target in SHAPES:
        inputs = (torch.randn(m, k), torch.randn(k, o), torch.randn(o))
        want = layer(*inputs)
        for name in ("region", "reference"):
            assert torch.equal(fns[name](*inputs), want), f"{name} differs from eager"
        label = f"{m}x{k} @ {k}x{o} + b[{o}]"
        print(f"timing {label} ...", flush=True)
        times = measure(fns, inputs, calls, args.rounds if m < 64 else max(args.rounds // 5, 5))
        best = {name: min(t) for name, t in times.items()}
        paired = statistics.median(
            r / f for r, f in zip(times["region"], times["reference"], strict=True)
        )
        lines.append(
            f"| {label} | {best['eager']:.2f} | {best['region']:.2f} | {best['reference']:.2f} "
            f"| {best['region'] / best['eager']:.3f} | {best['region'] / best['reference']:.3f} "
            f"| {paired:.3f} | {best['reference'] / best['eager']:.3f} "
            f"| {_verdict(target, paired)} |"
        )
        labels.append(label)
        for way in WAYS:
            chart_rows[way].append(best["eager"] / best[way])
    stats = region.ppy_stats()
    lines += ["", f"region fast-path calls: {stats['fast']}, fallbacks: {stats['fallback'] or 0}"]
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "torch_regions.md").write_text(text, encoding="utf-8")
    bar_chart(
        out / "torch_regions.png",
        "ATen layer: speed relative to eager (higher is faster)",
        labels,
        chart_rows,
    )
    return 0 if not stats["fallback"] else 1


if __name__ == "__main__":
    sys.exit(main())
