"""On a GPU: build a `CudaSite` from a `CudaKernel`, and prove kernels bit-equal to
torch's own CUDA ops (`python -m ppy_cuda.gpu prove`).

The proof of a unary function runs every one of the 2^32 float32 bit patterns and a
sample of float64 ones (random bits plus the special values: ±0, ±inf, NaN,
subnormals, the extremes) through the kernel and through torch, and compares the bits
(a NaN equals any NaN: payloads are not part of torch's contract). Only a function
that passes for both dtypes may join `kernel.PROVEN`. Needs torch with CUDA.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from ppy_cuda.codegen import kernel_ir, kernel_name
from ppy_cuda.kernel import LIBDEVICE_UNARY, CudaKernel, KernelBuilder
from ppy_cuda.runtime import CudaSite
from ppy_cuda.target import ARCH_ISA, compile_ptx, find_libdevice


def device_arch(torch: Any) -> str:
    """This GPU's arch, capped at the newest `ARCH_ISA` knows (PTX runs on newer GPUs)."""
    major, minor = torch.cuda.get_device_capability()
    wanted = major * 10 + minor
    known = sorted(int(a[3:]) for a in ARCH_ISA)
    return f"sm_{max(k for k in known if k <= wanted)}"


def gpu_site(kernel: CudaKernel, fallback: Any = None, *, proven_only: bool = True) -> CudaSite:
    """The kernel as a live site on this GPU (fallback: raise, so a miss is loud)."""
    import torch

    libdevice = None
    if kernel.functions():
        libdevice = find_libdevice(torch.version.cuda)
        if libdevice is None:
            raise RuntimeError(f"no libdevice for CUDA {torch.version.cuda} (PPY_CUDA_LIBDEVICE)")
    ptx = compile_ptx(
        kernel_ir(kernel, proven_only=proven_only), device_arch(torch), libdevice=libdevice
    )

    def miss(*args: Any) -> Any:
        raise AssertionError(f"the kernel did not run: {site.ppy_stats()}")

    data = {
        "entry": kernel_name(kernel),
        "dtype": kernel.dtype,
        "leaves": "".join(kernel.leaves),
        "bool": kernel.is_bool(kernel.result),
    }
    site = CudaSite(data, ptx, fallback or miss)
    return site


def _unary(fn: str, dtype: str) -> CudaSite:
    b = KernelBuilder(dtype)  # type: ignore[arg-type]
    x = b.leaf()
    return gpu_site(b.build(b.op("unary", x, fn=fn)), proven_only=False)


def _mismatches(torch: Any, got: Any, want: Any, bits: Any) -> int:
    same = (got.view(bits) == want.view(bits)) | (torch.isnan(got) & torch.isnan(want))
    return int((~same).sum().item())


def prove_f32(
    torch: Any,
    fn: str,
    chunk: int = 1 << 28,
    *,
    site: Any = None,
    span: tuple[int, int] = (0, 1 << 32),
    device: str = "cuda",
) -> int:
    """Mismatches over the float32 bit patterns in `span` (all 2^32 by default)."""
    site, ref = site or _unary(fn, "f32"), getattr(torch, fn)
    bad = 0
    for start in range(span[0], span[1], chunk):
        stop = min(start + chunk, span[1])
        raw = torch.arange(start, stop, device=device, dtype=torch.int64)
        x = (raw - (1 << 32) * (raw >= (1 << 31))).to(torch.int32).view(torch.float32)
        bad += _mismatches(torch, site(x), ref(x), torch.int32)
    return bad


def specials(torch: Any, dtype: Any, device: str = "cuda") -> Any:
    """±0, ±inf, NaN, the smallest subnormal and normal, the largest finite, ±1."""
    info = torch.finfo(dtype)
    values = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1.0, -1.0]
    values += [info.tiny, info.tiny / 2, info.smallest_normal / 2**20, info.max, info.min, info.eps]
    return torch.tensor(values + [-v for v in values], dtype=dtype, device=device)


def prove_f64(
    torch: Any, fn: str, samples: int = 1 << 27, *, site: Any = None, device: str = "cuda"
) -> int:
    """Mismatches over `samples` random float64 bit patterns, a log-uniform sample of
    the range where the function is interesting, and the special values."""
    site, ref = site or _unary(fn, "f64"), getattr(torch, fn)
    gen = torch.Generator(device=device).manual_seed(20261130)
    raw = torch.randint(-(2**63), 2**63 - 1, (samples,), device=device, generator=gen)
    wide = torch.exp2(
        torch.empty(samples, device=device, dtype=torch.float64).uniform_(-60, 12, generator=gen)
    )
    bad = 0
    for x in (raw.view(torch.float64), wide, -wide, specials(torch, torch.float64, device)):
        bad += _mismatches(torch, site(x.contiguous()), ref(x), torch.int64)
    return bad


def prove(functions: list[str]) -> dict[str, dict[str, Any]]:
    """{fn: {f32: mismatches, f64: mismatches, seconds}} for each function."""
    import torch

    out: dict[str, dict[str, Any]] = {}
    with torch.no_grad():
        for fn in functions:
            began = time.perf_counter()
            f32, f64 = prove_f32(torch, fn), prove_f64(torch, fn)
            torch.cuda.synchronize()
            out[fn] = {"f32": f32, "f64": f64, "seconds": round(time.perf_counter() - began, 2)}
            print(
                f"{fn:8s} float32 all 2^32: {f32} differ; float64 sampled: {f64} differ", flush=True
            )
    return out


def main(argv: list[str] | None = None) -> int:
    """`prove [FN ...]` (default: every libdevice function), JSON to --json."""
    parser = argparse.ArgumentParser(prog="python -m ppy_cuda.gpu")
    parser.add_argument("command", choices=["prove"])
    parser.add_argument("functions", nargs="*", default=sorted(LIBDEVICE_UNARY))
    parser.add_argument("--json", default="")
    args = parser.parse_args(argv)
    result = prove(args.functions)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    proven = sorted(fn for fn, r in result.items() if r["f32"] == 0 and r["f64"] == 0)
    print("proven bit-equal to torch (may join kernel.PROVEN):", ", ".join(proven) or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
