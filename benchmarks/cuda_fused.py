"""Fused elementwise kernels on a GPU: PPy's PTX vs torch eager vs torch.compile.

    python benchmarks/cuda_fused.py [--sizes 1e7 1e8] [--reps 20]

Trees: `a*b+c`, `where(a > b, a - c, b)`, and one transcendental tree
`exp(a) * b + c` (its kernel links the libdevice of torch's CUDA; it is fused in
compiled modules only once `python -m ppy_cuda.gpu prove exp` passes, here it runs
anyway to be timed). Float32 and float64, each at every size. A way's time is the
median of `reps` runs between CUDA events after two warm-ups; "bits" says whether
its result equals eager torch's bit for bit (NaN = NaN). torch.compile's Triton
kernels enable FP contraction: a mismatch there is expected, not a measurement error.
Needs torch with CUDA and a GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from typing import Any

import torch

from ppy_cuda.gpu import gpu_site
from ppy_cuda.kernel import KernelBuilder

TREES: dict[str, tuple[Callable[..., int], Callable[..., Any]]] = {
    "a*b+c": (lambda b, x, y, z: b.op("add", b.op("mul", x, y), z), lambda a, b, c: a * b + c),
    "where(a>b, a-c, b)": (
        lambda b, x, y, z: b.op("select", b.op("compare", x, y, pred="gt"), b.op("sub", x, z), y),
        lambda a, b, c: torch.where(a > b, a - c, b),
    ),
    "exp(a)*b+c": (
        lambda b, x, y, z: b.op("add", b.op("mul", b.op("unary", x, fn="exp"), y), z),
        lambda a, b, c: torch.exp(a) * b + c,
    ),
}


def timed(fn: Callable[..., Any], args: tuple[Any, ...], reps: int) -> tuple[float, Any]:
    """(median ms of `fn(*args)`, its last result)."""
    out = fn(*args)
    fn(*args)
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times), out


def same_bits(got: Any, want: Any) -> bool:
    bits = torch.int32 if got.dtype == torch.float32 else torch.int64
    return bool(((got.view(bits) == want.view(bits)) | (got.isnan() & want.isnan())).all())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", type=float, default=[1e7, 1e8])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    if not torch.cuda.is_available():  # run_all reports 77 as "skipped: cannot run here"
        print(f"cuda_fused: no CUDA device for torch {torch.__version__}; nothing to measure")
        sys.exit(77)
    print(
        f"# {torch.cuda.get_device_name()}, torch {torch.__version__} (CUDA {torch.version.cuda})"
    )
    print("| tree | dtype | n | eager ms | ppy ms | bits | torch.compile ms | bits | eager/ppy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (tree, eager) in TREES.items():
        for dtype, tdtype in (("f32", torch.float32), ("f64", torch.float64)):
            b = KernelBuilder(dtype)  # type: ignore[arg-type]
            x, y, z = b.leaf(), b.leaf(), b.leaf()
            site = gpu_site(b.build(tree(b, x, y, z)), proven_only=False)
            compiled = None if args.no_compile else torch.compile(eager)
            for n in map(int, args.sizes):
                gen = torch.Generator(device="cuda").manual_seed(n)
                abc = tuple(
                    torch.randn(n, dtype=tdtype, device="cuda", generator=gen) for _ in range(3)
                )
                with torch.no_grad():
                    t_eager, want = timed(eager, abc, args.reps)
                    t_ppy, got = timed(site, abc, args.reps)
                    row = [
                        name,
                        dtype,
                        f"{n:.0e}",
                        f"{t_eager:.3f}",
                        f"{t_ppy:.3f}",
                        str(same_bits(got, want)),
                    ]
                    if compiled is not None:
                        t_c, got_c = timed(compiled, abc, args.reps)
                        row += [f"{t_c:.3f}", str(same_bits(got_c, want))]
                    else:
                        row += ["-", "-"]
                row.append(f"{t_eager / t_ppy:.2f}x")
                print("| " + " | ".join(row) + " |", flush=True)
                del abc, want, got
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
