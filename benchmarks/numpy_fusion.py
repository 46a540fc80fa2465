"""PPy's fused NumPy expressions against NumPy, numexpr and Numba, side by side.

    python benchmarks/numpy_fusion.py [--sizes 1e3,1e5,1e7] [--rounds 5] [--out DIR]
                                      [--no-thresholds]

The PPy rows are the real `ppy` path: a module holding the five expressions is
compiled once with `ppy.load` (front end, fusion, the llvm backend) and its functions
are called as a program calls them (guard, kernel, FP-flag check through the
dispatcher). Against: NumPy as written; numexpr with 1 and 2 threads; Numba's
`@njit` loop writing into `np.empty_like` and its `@vectorize` ufunc.

Every implementation runs round-robin (`--rounds`) and keeps its best time, so a
busy neighbour on a shared machine costs every column alike. Also measured: the
machine's copy and triad bandwidth (the ceiling for memory-bound loops) and the array
sizes from which PPy's second thread pays off (`ppy_numpy._runtime.PAR_THRESHOLD`).

Writes DIR/numpy_fusion.md (the table, the machine, the command) and
DIR/numpy_fusion.png (speed relative to NumPy).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.metadata
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

#: name -> (Python source (also numexpr's), bytes moved per element, reduction?)
EXPRS: dict[str, tuple[str, int]] = {
    "a*b + c": ("a * b + c", 32),
    "2.0*a + 3.0*b*c - a/b": ("2.0 * a + 3.0 * b * c - a / b", 32),
    "np.sin(a)*2.0 + np.exp(b)": ("np.sin(a) * 2.0 + np.exp(b)", 24),
    "np.where(a > b, a*c, b - c)": ("np.where(a > b, a * c, b - c)", 32),
    "np.sum(a*b)": ("np.sum(a * b)", 16),
}
NUMEXPR = {
    "a*b + c": "a*b + c",
    "2.0*a + 3.0*b*c - a/b": "2.0*a + 3.0*b*c - a/b",
    "np.sin(a)*2.0 + np.exp(b)": "sin(a)*2.0 + exp(b)",
    "np.where(a > b, a*c, b - c)": "where(a > b, a*c, b - c)",
    "np.sum(a*b)": "sum(a*b)",
}
PYPROJECT = '[tool.ppy]\nbackends = ["llvm"]\n'


# -- the implementations --------------------------------------------------------------


def module_source() -> str:
    """The five expressions as annotated functions f0..f4 (what PPy compiles)."""
    lines = ["import numpy as np", ""]
    for i, (src, _b) in enumerate(EXPRS.values()):
        lines += [
            "",
            f"def f{i}(a: np.ndarray, b: np.ndarray, c: np.ndarray):",
            f"    return {src}",
            "",
        ]
    return "\n".join(lines)


def load_ppy(folder: Path, name: str) -> Any:
    """Compile the expressions with `ppy.load` (once) and return the module."""
    import ppy

    (folder / "pyproject.toml").write_text(PYPROJECT)
    path = folder / f"{name}.py"
    path.write_text(module_source())
    return ppy.load(path, name)


def plain_numpy() -> list[Callable[..., Any]]:
    """The same source run by Python (what NumPy does without PPy)."""
    namespace: dict[str, Any] = {}
    exec(compile(module_source(), "<numpy>", "exec"), namespace)
    return [namespace[f"f{i}"] for i in range(len(EXPRS))]


def numba_impls() -> tuple[list[Callable[..., Any]], list[Callable[..., Any] | None]]:
    """Numba: an @njit loop into np.empty_like (a loop summing for the reduction), and
    @vectorize ufuncs (elementwise only)."""
    import numba

    @numba.njit(cache=False)
    def k0(a, b, c, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = a[i] * b[i] + c[i]

    @numba.njit(cache=False)
    def k1(a, b, c, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = 2.0 * a[i] + 3.0 * b[i] * c[i] - a[i] / b[i]

    @numba.njit(cache=False)
    def k2(a, b, c, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = np.sin(a[i]) * 2.0 + np.exp(b[i])

    @numba.njit(cache=False)
    def k3(a, b, c, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = a[i] * c[i] if a[i] > b[i] else b[i] - c[i]

    @numba.njit(cache=False)
    def k4(a, b):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in range(a.size):
            s += a[i] * b[i]
        return s

    def into(k: Any) -> Callable[..., Any]:
        def run(a: Any, b: Any, c: Any) -> Any:
            o = np.empty_like(a)
            k(a, b, c, o)
            return o

        return run

    sig = ["float64(float64, float64, float64)"]
    vec = [
        numba.vectorize(sig)(lambda a, b, c: a * b + c),
        numba.vectorize(sig)(lambda a, b, c: 2.0 * a + 3.0 * b * c - a / b),
        numba.vectorize(sig)(lambda a, b, c: np.sin(a) * 2.0 + np.exp(b)),
        numba.vectorize(sig)(lambda a, b, c: a * c if a > b else b - c),
        None,
    ]
    return [into(k0), into(k1), into(k2), into(k3), lambda a, b, c: k4(a, b)], vec


def implementations(ppy_module: Any) -> dict[str, tuple[Callable[[], None], list[Any]]]:
    """impl name -> (setup run before timing it, one callable per expression)."""
    import numexpr as ne

    from ppy_numpy._runtime import set_num_threads

    njit, vec = numba_impls()
    ppy_fns = [getattr(ppy_module, f"f{i}") for i in range(len(EXPRS))]

    def evaluator(text: str) -> Callable[..., Any]:
        return lambda a, b, c: ne.evaluate(text, local_dict={"a": a, "b": b, "c": c})

    ne_fns = [evaluator(t) for t in NUMEXPR.values()]
    return {
        "NumPy": (lambda: None, plain_numpy()),
        "PPy 1 thread": (lambda: set_num_threads(1), ppy_fns),
        "PPy 2 threads": (lambda: set_num_threads(2), ppy_fns),
        "numexpr 1 thread": (lambda: ne.set_num_threads(1), ne_fns),
        "numexpr 2 threads": (lambda: ne.set_num_threads(2), ne_fns),
        "Numba @njit+empty_like": (lambda: None, njit),
        "Numba @vectorize": (lambda: None, vec),
    }


# -- timing ---------------------------------------------------------------------------


def calibrate(fn: Callable[[], Any], sample: float) -> int:
    """Calls per timing sample (about `sample` seconds)."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    return max(1, int(sample / once))


def round_robin(
    fns: dict[str, tuple[Callable[[], None], Callable[[], Any]]], rounds: int, sample: float = 0.02
) -> dict[str, float]:
    """Best µs per call of each function, timing them in turn `rounds` times. Each
    batch starts with one untimed call: the first call after another function's batch
    pays for regrowing the heap that batch freed (1-4 ms at 1e6), whoever runs it."""
    counts = {}
    for name, (setup, fn) in fns.items():
        setup()
        counts[name] = calibrate(fn, sample)
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, (setup, fn) in fns.items():
            setup()
            k = counts[name]
            fn()
            t0 = time.perf_counter()
            for _ in range(k):
                fn()
            best[name] = min(best[name], (time.perf_counter() - t0) / k)
    return {name: t * 1e6 for name, t in best.items()}


def same_bits(got: Any, want: Any) -> bool:
    g, w = np.asarray(got), np.asarray(want)
    return (
        type(got) is type(want)
        and g.shape == w.shape
        and g.dtype == w.dtype
        and bool(np.array_equal(g.view(np.uint64), w.view(np.uint64)))
    )


def inputs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(12345)
    return rng.uniform(-4, 4, n), rng.uniform(0.5, 2, n), rng.uniform(-1, 1, n)


def measure(
    impls: dict[str, tuple[Callable[[], None], list[Any]]], sizes: list[int], rounds: int
) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        a, b, c = inputs(n)
        for i, name in enumerate(EXPRS):
            want = impls["NumPy"][1][i](a, b, c)
            fns = {}
            for impl, (setup, per_expr) in impls.items():
                fn = per_expr[i]
                if fn is None:
                    continue
                setup()
                fns[impl] = (setup, functools.partial(fn, a, b, c))
                rows.append(
                    {"expr": name, "impl": impl, "n": n, "bits": same_bits(fn(a, b, c), want)}
                )
            times = round_robin(fns, rounds if n < 10**7 else max(3, rounds - 2))
            for row in rows[-len(fns) :]:
                row["us"] = times[row["impl"]]
                row["gbs"] = EXPRS[name][1] * n / row["us"] / 1e3
            print(
                f"  n={n:>9,d}  {name:28s} "
                + "  ".join(
                    f"{k.split()[0]}{k.split()[1][0] if ' ' in k else ''}={v:.4g}"
                    for k, v in times.items()
                ),
                flush=True,
            )
    return rows


def ceiling(n: int, rounds: int) -> dict[str, float]:
    """Copy and triad bandwidth (GB/s) into preallocated arrays of n elements."""
    import numba

    @numba.njit
    def triad(a, b, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = a[i] + 3.0 * b[i]

    a, b, o = np.random.rand(n), np.random.rand(n), np.empty(n)
    t = round_robin(
        {
            "copy": (lambda: None, lambda: np.copyto(o, a)),
            "triad": (lambda: None, lambda: triad(a, b, o)),
        },
        rounds,
    )
    return {"copy": 16 * n / t["copy"] / 1e3, "triad": 24 * n / t["triad"] / 1e3}


# -- thread thresholds ----------------------------------------------------------------


@contextlib.contextmanager
def always_parallel() -> Iterator[None]:
    """Sites made inside split every call over the threads (threshold 0)."""
    from ppy_numpy import _runtime

    saved = (dict(_runtime.PAR_THRESHOLD), _runtime.PAR_THRESHOLD_LOOPS)
    _runtime.PAR_THRESHOLD.update({k: 0 for k, v in _runtime.PAR_THRESHOLD.items() if v >= 0})
    _runtime.PAR_THRESHOLD_LOOPS = 0
    try:
        yield
    finally:
        _runtime.PAR_THRESHOLD.clear()
        _runtime.PAR_THRESHOLD.update(saved[0])
        _runtime.PAR_THRESHOLD_LOOPS = saved[1]


THRESHOLD_KINDS = {"map": 1, "loops (sin, exp)": 2, "sum": 4}  # expression index
THRESHOLD_SIZES = (5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000)


def thresholds(folder: Path, rounds: int) -> dict[str, tuple[int | None, dict[int, float]]]:
    """Per kernel kind: the size from which 2 threads beat 1 by >= 10% (at that size
    and every larger one measured), and the 1-thread/2-thread time ratio per size."""
    from ppy_numpy._runtime import set_num_threads

    with always_parallel():
        module = load_ppy(folder, "ppy_bench_parallel")
    out: dict[str, tuple[int | None, dict[int, float]]] = {}
    for kind, i in THRESHOLD_KINDS.items():
        fn = getattr(module, f"f{i}")
        ratio = {}
        for n in THRESHOLD_SIZES:
            call = functools.partial(fn, *inputs(n))
            t = round_robin(
                {
                    "1": (functools.partial(set_num_threads, 1), call),
                    "2": (functools.partial(set_num_threads, 2), call),
                },
                rounds + 2,
                sample=0.01,
            )
            ratio[n] = t["1"] / t["2"]
        pays = [
            n for n in THRESHOLD_SIZES if all(ratio[m] >= 1.1 for m in THRESHOLD_SIZES if m >= n)
        ]
        out[kind] = (pays[0] if pays else None, ratio)
        print(
            f"  threads pay off for {kind}: from {out[kind][0]} "
            f"({', '.join(f'{n}: {r:.2f}x' for n, r in ratio.items())})",
            flush=True,
        )
    return out


# -- the report -----------------------------------------------------------------------


def machine() -> str:
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError, StopIteration), open("/proc/cpuinfo") as f:
        model = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    versions = []
    for dist in ("numpy", "numexpr", "numba", "llvmlite"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions.append(f"{dist} {importlib.metadata.version(dist)}")
    return (
        f"{model}, {os.cpu_count()} CPUs, Linux {platform.release()}; Python "
        f"{platform.python_version()}, " + ", ".join(versions)
    )


def _fmt_us(us: float) -> str:
    return f"{us:,.0f}" if us >= 100 else f"{us:.3g}"


def table(rows: list[dict[str, Any]], sizes: list[int]) -> list[str]:
    np_us = {(r["expr"], r["n"]): r["us"] for r in rows if r["impl"] == "NumPy"}
    head = " | ".join(f"N={n:.0e}: µs · GB/s · xNumPy" for n in sizes)
    lines = [
        f"| expression | implementation | {head} | bits = NumPy |",
        "|---|---|" + "---|" * len(sizes) + "---|",
    ]
    by: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["expr"], r["impl"]), {})[r["n"]] = r
    for (expr, impl), per in by.items():
        cells = [
            (
                f"{_fmt_us(per[n]['us'])} · {per[n]['gbs']:.1f} · "
                f"{np_us[(expr, n)] / per[n]['us']:.2f}"
            )
            if n in per
            else "-"
            for n in sizes
        ]
        bits = "yes" if all(r["bits"] for r in per.values()) else "no"
        lines.append(f"| `{expr}` | {impl} | " + " | ".join(cells) + f" | {bits} |")
    return lines


def targets(rows: list[dict[str, Any]], sizes: list[int]) -> list[str]:
    """The issue's targets, checked on this run."""
    us = {(r["expr"], r["impl"], r["n"]): r["us"] for r in rows}
    lines = ["| expression | target | PPy | against | met |", "|---|---|---|---|---|"]
    checks = []
    if 10**7 in sizes:
        checks += [
            (
                "N=1e7, 1 thread ≤ Numba @njit+empty_like",
                10**7,
                "PPy 1 thread",
                "Numba @njit+empty_like",
                1.0,
            ),
            (
                "N=1e7, 2 threads < numexpr 2 threads",
                10**7,
                "PPy 2 threads",
                "numexpr 2 threads",
                1.0,
            ),
        ]
    if 1000 in sizes:
        checks.append(("N=1e3 ≤ NumPy", 1000, "PPy 1 thread", "NumPy", 1.0))
    for expr in EXPRS:
        for what, n, mine, other, factor in checks:
            a, b = us[(expr, mine, n)], us[(expr, other, n)]
            lines.append(
                f"| `{expr}` | {what} | {_fmt_us(a)} µs | {_fmt_us(b)} µs | "
                f"{'yes' if a <= b * factor else 'NO'} |"
            )
    return lines


def write_report(
    out: Path,
    rows: list[dict[str, Any]],
    sizes: list[int],
    ceil: dict[str, float],
    thr: dict[str, Any] | None,
    command: str,
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# NumPy fusion: PPy vs NumPy, numexpr, Numba",
        "",
        f"Machine: {machine()}.",
        f"Command: `{command}` ({time.strftime('%Y-%m-%d %H:%M %Z')}).",
        f"Ceiling at N={max(sizes):.0e} (preallocated output): copy {ceil['copy']:.1f} GB/s, "
        f"triad {ceil['triad']:.1f} GB/s.",
        "",
        "Best time per call over round-robin repeats; GB/s counts each input read and the "
        "output written once; xNumPy is NumPy's time over this one (higher is faster). "
        "PPy is the real `ppy.load` path (guard, kernel, FP-flag check per call).",
        "",
        *table(rows, sizes),
        "",
        "## Targets",
        "",
        *targets(rows, sizes),
    ]
    if thr:
        lines += [
            "",
            "## Where a second thread pays off (PPy, 2 threads vs 1)",
            "",
            "| kernel | from N | " + " | ".join(f"{n:,}" for n in THRESHOLD_SIZES) + " |",
            "|---|---|" + "---|" * len(THRESHOLD_SIZES),
        ]
        for kind, (start, ratio) in thr.items():
            lines.append(
                f"| {kind} | {start or 'never'} | "
                + " | ".join(f"{ratio[n]:.2f}x" for n in THRESHOLD_SIZES)
                + " |"
            )
    (out / "numpy_fusion.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    chart(out / "numpy_fusion.png", rows, sizes)


def chart(path: Path, rows: list[dict[str, Any]], sizes: list[int]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart")
        return
    np_us = {(r["expr"], r["n"]): r["us"] for r in rows if r["impl"] == "NumPy"}
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    names = list(EXPRS)
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 5), squeeze=False)
    for ax, n in zip(axes[0], sizes, strict=True):
        width = 0.8 / len(impls)
        for k, impl in enumerate(impls):
            per = {r["expr"]: r["us"] for r in rows if r["impl"] == impl and r["n"] == n}
            ys = [np_us[(e, n)] / per[e] if e in per else 0.0 for e in names]
            ax.bar(np.arange(len(names)) + k * width, ys, width, label=impl)
        ax.set_xticks(np.arange(len(names)) + 0.4, names, rotation=25, ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_title(f"N = {n:.0e}: speed relative to NumPy (higher is faster)", fontsize=9)
        ax.axhline(1.0, color="k", lw=0.6)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e3,1e5,1e7")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    parser.add_argument("--no-thresholds", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    command = "python benchmarks/numpy_fusion.py " + " ".join(argv or sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="ppy-bench-") as tmp:
        folder = Path(tmp)
        os.environ.setdefault("PPY_CACHE_DIR", str(folder / "cache"))
        print(f"compiling with ppy.load ... ({machine()})", flush=True)
        module = load_ppy(folder, "ppy_bench")
        impls = implementations(module)
        rows = measure(impls, sizes, args.rounds)
        import ppy

        missing = [
            s for s, d in ppy.stats().items() if s.startswith("ppy_bench:") and not d["fast"]
        ]
        if missing:
            print(f"warning: these sites never took the fast path: {missing}")
        ceil = ceiling(max(sizes), args.rounds)
        thr = None if args.no_thresholds else thresholds(folder, args.rounds)
        from ppy_numpy._runtime import set_num_threads

        set_num_threads(os.cpu_count() or 1)
    write_report(Path(args.out), rows, sizes, ceil, thr, command.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
