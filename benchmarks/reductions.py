"""PPy's float reductions against NumPy (issue 28: a fast path is never slower).

    python benchmarks/reductions.py [--rounds 7] [--threads] [--out DIR]

Whole-array `np.sum/max/min(x)` (float64, 10 .. 1e7 elements) and row reductions
`np.sum(x, axis=-1)`, `np.max(x, axis=-1, keepdims=True)`, `np.min(x, axis=-1)`
(float64 and float32, rows of 1 .. 1e6 elements) through the real `ppy` path (a
module compiled with `ppy.load`, its functions called as a program calls them).
Each ratio is PPy's best time over NumPy's best (best of `--rounds`), with whether
the bits are equal and whether the fast path ran (``py``: it handed the call to
NumPy). `--threads` also times the large cases with one thread and with two
(`ppy_numpy._runtime.PAR_THRESHOLD`). Writes DIR/reductions.md.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SOURCE = """\
import numpy as np


def whole_sum(x):
    return np.sum(x)


def whole_max(x):
    return np.max(x)


def whole_min(x):
    return np.min(x)


def row_sum(x):
    return np.sum(x, axis=-1)


def row_max(x):
    return np.max(x, axis=-1, keepdims=True)


def row_min(x):
    return np.min(x, axis=-1)
"""
OPS = ("sum", "max", "min")
WHOLE = [(n,) for n in (10, 100, 1000, 10**4, 10**5, 10**6, 10**7)]
#: rows of one element last: NumPy answers them (a shape guard), and a site whose guard
#: failed on 64 calls in a row is retired for a while (`_dispatch.c` RETIRE_AFTER)
ROWS = [(10**5, 2), (10**5, 10), (10**4, 100), (1000, 1000)]
ROWS += [(100, 10**4), (10, 10**5), (10, 10**6)]
ONES = [(10**5, 1)]
THREADED = [(n,) for n in (5 * 10**5, 10**6, 2 * 10**6, 4 * 10**6, 10**7)]
THREADED += [(10, n) for n in (10**5, 2 * 10**5, 4 * 10**5, 10**6)]


def _best(fn: Callable[[Any], Any], x: np.ndarray, rounds: int) -> float:
    inner = max(1, min(2000, 4_000_000 // max(x.size, 1)))
    fn(x)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(inner):
            fn(x)
        best = min(best, (time.perf_counter() - start) / inner)
    return best


def _numpy(kind: str, op: str) -> Callable[[Any], Any]:
    fn = getattr(np, op)
    if kind == "whole":
        return fn
    if op == "max":
        return lambda x: fn(x, axis=-1, keepdims=True)
    return lambda x: fn(x, axis=-1)


def _fast(stats: Callable[[], dict[str, Any]]) -> int:
    return sum(int(s["fast"]) for k, s in stats().items() if k.startswith("reductions_bench:"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", action="store_true")
    parser.add_argument("--out", default="benchmarks/results")
    args = parser.parse_args()
    import ppy
    from ppy_core.compiler.cached import compile_file

    path = Path(tempfile.mkdtemp()) / "reductions_bench.py"
    path.write_text(SOURCE, encoding="utf-8")
    compile_file(path)
    module = ppy.load(path, "reductions_bench")
    rng = np.random.default_rng(1)
    load = os.getloadavg()
    lines = [
        "# Reductions: PPy / NumPy time",
        "",
        f"`python benchmarks/reductions.py --rounds {args.rounds}"
        f"{' --threads' if args.threads else ''}`; load {load[0]:.2f} at the start.",
        "A ratio below 1 is faster than NumPy; `py`: the call ran NumPy (a declined case);",
        "`BITS`: the bits differ (never expected).",
        "",
        "| case | dtype | shape | sum | max | min |",
        "|---|---|---|---|---|---|",
    ]
    cases = [("whole", np.float64, s) for s in WHOLE]
    cases += [("row", dt, s) for dt in (np.float64, np.float32) for s in ROWS]
    lines += _table(module, rng, cases, args.rounds)
    threaded = _threads(module, rng, args.rounds) if args.threads else []
    ones = [("row", dt, s) for dt in (np.float64, np.float32) for s in ONES]
    lines += _table(module, rng, ones, args.rounds)
    lines += threaded
    lines += ["", f"Load {os.getloadavg()[0]:.2f} at the end.", ""]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "reductions.md").write_text("\n".join(lines), encoding="utf-8")


def _table(module: Any, rng: np.random.Generator, cases: list[Any], rounds: int) -> list[str]:
    """One table row a case: PPy / NumPy time of each op."""
    import ppy

    lines = []
    for kind, dtype, shape in cases:
        x = rng.random(shape).astype(dtype) + 0.5
        cells = []
        for op in OPS:
            fast_fn, numpy_fn = getattr(module, f"{kind}_{op}"), _numpy(kind, op)
            same = np.asarray(fast_fn(x)).tobytes() == np.asarray(numpy_fn(x)).tobytes()
            before = _fast(ppy.stats)
            ratio = _best(fast_fn, x, rounds) / _best(numpy_fn, x, rounds)
            ran = _fast(ppy.stats) > before
            cells.append(f"{ratio:.2f}{'' if ran else ' py'}{'' if same else ' BITS'}")
        row = f"| {kind} | {np.dtype(dtype).name} | {shape} | " + " | ".join(cells) + " |"
        print(row, flush=True)
        lines.append(row)
    return lines


def _threads(module: Any, rng: np.random.Generator, rounds: int) -> list[str]:
    """One thread against two where the thresholds could split a reduction."""
    from ppy_numpy._runtime import num_threads, set_num_threads

    lines = [
        "",
        "## One thread vs two (PPy / NumPy time)",
        "",
        "| case | dtype | shape | sum 1T | sum 2T | max 1T | max 2T |",
        "|---|---|---|---|---|---|---|",
    ]
    threads = num_threads()
    cases = [
        ("whole" if len(s) == 1 else "row", dt, s)
        for dt in (np.float64, np.float32)
        for s in THREADED
    ]
    for kind, dtype, shape in cases:
        if kind == "whole" and dtype == np.float32:
            continue  # a float32 whole-array reduction is no site of its own
        x = rng.random(shape).astype(dtype) + 0.5
        cells = []
        for op in ("sum", "max"):
            fast_fn, numpy_fn = getattr(module, f"{kind}_{op}"), _numpy(kind, op)
            base = _best(numpy_fn, x, rounds)
            for count in (1, 2):
                set_num_threads(count)
                cells.append(f"{_best(fast_fn, x, rounds) / base:.2f}")
        set_num_threads(threads)
        row = f"| {kind} | {np.dtype(dtype).name} | {shape} | " + " | ".join(cells) + " |"
        print(row, flush=True)
        lines.append(row)
    return lines


if __name__ == "__main__":
    main()
