"""Fused NumPy sites of other dtypes and of the calls issue 18 (items 4, 6) added.

    python benchmarks/numpy_dtypes.py [--sizes 1e4,1e6] [--rounds 5] [--out DIR]

float32 and int64 arithmetic, bool masks, `np.clip`, `np.arctan2`, `x ** -1.5`:
each expression is compiled once with `ppy.load` (annotated functions, the llvm
backend) and called as a program calls it. NumPy runs the same source. Reported per
size: NumPy's and PPy's best time over `--rounds` round-robin rounds, their ratio,
whether the answers are identical (bits, dtype, shape) and whether the fast path ran
(`ppy.stats()`). Prints the Markdown table and writes DIR/numpy_dtypes.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

F32, I64, F64 = "npt.NDArray[np.float32]", "npt.NDArray[np.int64]", "np.ndarray"
#: name -> (annotation of a, b, c; expression)
EXPRS: dict[str, tuple[str, str]] = {
    "f32 triad+": (F32, "2.5 * a * b + c - 1.0"),
    "f32 where": (F32, "np.where(a > b, a * c, b - c)"),
    "i64 poly": (I64, "3 * a * b - c + 7"),
    "bool mask": (F64, "np.where((a > b) & ~(c < 0.0), a, c)"),
    "clip": (F64, "np.clip(a * b, -0.5, 0.5) + c"),
    "arctan2": (F64, "np.arctan2(a, b) * c"),
    "x ** -1.5": (F64, "c * (a * a + b * b + 0.01) ** -1.5"),
}


def source() -> str:
    lines = ["import numpy as np", "import numpy.typing as npt", ""]
    for i, (ann, expr) in enumerate(EXPRS.values()):
        lines += ["", f"def f{i}(a: {ann}, b: {ann}, c: {ann}):", f"    return {expr}", ""]
    return "\n".join(lines)


def operands(name: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    if name.startswith("i64"):
        return tuple(rng.integers(-(2**40), 2**40, n) for _ in range(3))
    dtype = np.float32 if name.startswith("f32") else np.float64
    return tuple(rng.uniform(-1.0, 1.0, n).astype(dtype) for _ in range(3))


def fast_calls(stats: dict[str, Any], i: int) -> int:
    """Fast-path calls so far of the sites of function f{i}."""
    return sum(int(v["fast"]) for k, v in stats.items() if k.startswith(f"dtypes_bench:f{i}."))


def best(fn: Any, args: tuple[Any, ...], rounds: int, reps: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(reps):
            fn(*args)
        times.append((time.perf_counter() - t) / reps)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e6")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    opts = parser.parse_args()
    import ppy

    folder = Path(tempfile.mkdtemp(prefix="ppy-dtypes-"))
    (folder / "pyproject.toml").write_text('[tool.ppy]\nbackends = ["llvm"]\n')
    path = folder / "dtypes_bench.py"
    path.write_text(source())
    fast = ppy.load(path, "dtypes_bench")
    spec = importlib.util.spec_from_file_location("dtypes_plain", path)
    assert spec is not None
    assert spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    rng = np.random.default_rng(0)
    rows = ["| expression | n | NumPy µs | PPy µs | PPy / NumPy | identical | fast path |"]
    rows.append("| --- | ---: | ---: | ---: | ---: | --- | --- |")
    for size in (int(float(s)) for s in opts.sizes.split(",")):
        reps = max(1, 2_000_000 // size)
        for i, name in enumerate(EXPRS):
            args = operands(name, size, rng)
            f_fast, f_plain = getattr(fast, f"f{i}"), getattr(plain, f"f{i}")
            got, want = f_fast(*args), f_plain(*args)
            same = got.dtype == want.dtype and got.shape == want.shape
            same = same and got.tobytes() == want.tobytes()
            before = fast_calls(ppy.stats(), i)
            t_plain = best(f_plain, args, opts.rounds, reps)
            t_fast = best(f_fast, args, opts.rounds, reps)
            after = fast_calls(ppy.stats(), i)
            rows.append(
                f"| `{EXPRS[name][1]}` ({name}) | {size:.0e} | {t_plain * 1e6:.1f} | "
                f"{t_fast * 1e6:.1f} | {t_fast / t_plain:.2f} | {'yes' if same else 'NO'} | "
                f"{'yes' if after > before else 'no'} |"
            )
    note = (
        f"\nNumPy {np.__version__}, {os.cpu_count()} CPUs, PPY_NUM_THREADS="
        f"{os.environ.get('PPY_NUM_THREADS', 'default')}; best of {opts.rounds} rounds "
        "(a shared, loaded machine: compare the columns, not other runs).\n"
    )
    text = "\n".join(rows) + "\n" + note
    print(text)
    if opts.out is not None:
        opts.out.mkdir(parents=True, exist_ok=True)
        (opts.out / "numpy_dtypes.md").write_text("# numpy_dtypes\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
