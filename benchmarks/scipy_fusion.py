"""PPy's fused `scipy.special` expressions against SciPy eager and Numba, side by side.

    python benchmarks/scipy_fusion.py [--sizes 1e3,1e6,1e7] [--rounds 5] [--out DIR]

One thread everywhere (``PPY_NUM_THREADS=1``, set before PPy loads; SciPy's ufuncs
are single-threaded; Numba's `@njit` is serial). The PPy rows are the real `ppy`
path: a module holding the expressions is compiled once with `ppy.load` and its
functions are called as a program calls them (guard, one fused loop that calls
SciPy's own inner loops blockwise, FP-flag check). Every PPy result is checked bit
for bit against SciPy's before it is timed, and the fast path is asserted.

The "SciPy loops alone" column runs only the special functions' own loops into
preallocated outputs (`special.erf(x, out=a)`...): what any program that keeps
SciPy's bits by calling SciPy's loops must spend, so eager / that is the most
fusion can gain ("ceiling"). Times are the calling thread's CPU time
(`time.thread_time`), best of the rounds: every implementation runs on one thread,
and CPU time is what other processes on a loaded machine disturb least.

Numba has no `scipy.special` (that needs the separate numba-scipy package, not
used here): its column uses `math.erf`/`math.lgamma`, with `expit` and `xlogy`
written out, so it computes the same functions by other code, not SciPy's bits
(marked "≈"). Where Numba has no such function at all (`ndtr`, `log_ndtr`) the cell
says "n/a".
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("PPY_NUM_THREADS", "1")

import numpy as np
import scipy
import scipy.special as sc

EXPRS: dict[str, str] = {
    "erf(x)*2 + expit(y)": "special.erf(x) * 2.0 + special.expit(y)",
    "gammaln(x) - xlogy(x, y)": "special.gammaln(x) - special.xlogy(x, y)",
    "ndtr(x)*y + log_ndtr(y)": "special.ndtr(x) * y + special.log_ndtr(y)",
}
#: the special-function calls of each expression: (function, its argument names)
LOOPS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "erf(x)*2 + expit(y)": (("erf", ("x",)), ("expit", ("y",))),
    "gammaln(x) - xlogy(x, y)": (("gammaln", ("x",)), ("xlogy", ("x", "y"))),
    "ndtr(x)*y + log_ndtr(y)": (("ndtr", ("x",)), ("log_ndtr", ("y",))),
}
PYPROJECT = '[project]\nname = "scipy-bench"\n\n[tool.ppy]\nbackends = ["llvm"]\n'


def module_source() -> str:
    lines = ["import numpy as np", "from scipy import special", ""]
    for i, src in enumerate(EXPRS.values()):
        lines += ["", f"def f{i}(x: np.ndarray, y: np.ndarray):", f"    return {src}", ""]
    return "\n".join(lines)


def load_ppy(folder: Path) -> Any:
    import ppy

    (folder / "pyproject.toml").write_text(PYPROJECT)
    path = folder / "scipy_bench.py"
    path.write_text(module_source())
    return ppy.load(path, "scipy_bench")


def scipy_eager() -> list[Callable[[Any, Any], Any]]:
    ns: dict[str, Any] = {"special": sc, "np": np}
    return [eval(f"lambda x, y: {src}", ns) for src in EXPRS.values()]


def loops_alone(name: str, n: int) -> Callable[[Any, Any], Any]:
    """Only the expression's special-function loops, each into its own preallocated
    output (no temporaries, no arithmetic): the floor under any SciPy-bit-exact run."""
    outs = [np.empty(n) for _ in LOOPS[name]]
    calls = [(getattr(sc, f), args, out) for (f, args), out in zip(LOOPS[name], outs, strict=True)]

    def run(x: Any, y: Any) -> Any:
        env = {"x": x, "y": y}
        for f, args, out in calls:
            f(*(env[a] for a in args), out=out)
        return outs

    return run


def numba_kernels() -> list[Callable[[Any, Any], Any] | None]:
    try:
        import math

        import numba
    except ImportError:
        return [None, None, None]

    @numba.njit(cache=False)
    def erf_expit(x: Any, y: Any) -> Any:
        out = np.empty_like(x)
        for i in range(x.size):
            out[i] = math.erf(x[i]) * 2.0 + 1.0 / (1.0 + math.exp(-y[i]))
        return out

    @numba.njit(cache=False)
    def gammaln_xlogy(x: Any, y: Any) -> Any:
        out = np.empty_like(x)
        for i in range(x.size):
            xl = 0.0 if x[i] == 0.0 and not math.isnan(y[i]) else x[i] * math.log(y[i])
            out[i] = math.lgamma(x[i]) - xl
        return out

    return [erf_expit, gammaln_xlogy, None]


def best(
    fns: list[Callable[[Any, Any], Any]], x: Any, y: Any, rounds: int, budget: float
) -> list[float]:
    """Best seconds per call of each of `fns` over `rounds` rounds of as many calls as
    fit `budget`; the functions take turns within each round, so a burst of load from
    other processes falls on all of them alike."""
    clock = time.thread_time
    reps = []
    for fn in fns:
        fn(x, y)
        t0 = clock()
        fn(x, y)
        reps.append(max(1, min(10_000, int(budget / max(clock() - t0, 1e-6)))))
    out = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            t0 = clock()
            for _ in range(reps[k]):
                fn(x, y)
            out[k] = min(out[k], (clock() - t0) / reps[k])
    return out


def fmt(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e3,1e6,1e7")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="")
    args = parser.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    import ppy

    with tempfile.TemporaryDirectory(prefix="scipy-bench-") as tmp:
        fast = load_ppy(Path(tmp))
        eager, jit = scipy_eager(), numba_kernels()
        rows = [
            "| expression | n | SciPy eager | PPy fused | PPy speedup | SciPy loops alone "
            "| ceiling | Numba (math.*) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        rng = np.random.default_rng(0)
        for n in sizes:
            x, y = rng.uniform(0.1, 8.0, n), rng.uniform(0.1, 8.0, n)
            for i, name in enumerate(EXPRS):
                f = getattr(fast, f"f{i}")
                ppy.reset_stats()
                got, want = f(x, y), eager[i](x, y)
                if not np.array_equal(got.view(np.uint64), want.view(np.uint64)):
                    raise SystemExit(f"{name} n={n}: PPy's bits differ from SciPy's")
                if not any(d["fast"] for d in ppy.stats().values()):
                    raise SystemExit(f"{name} n={n}: the fast path did not run: {ppy.stats()}")
                budget = 0.2 if n < 10**7 else 0.5
                nb = jit[i]
                fns = [eager[i], f, loops_alone(name, n), *([nb] if nb else [])]
                t_sc, t_pp, t_lo, *t_jit = best(fns, x, y, args.rounds, budget)
                t_nb = fmt(t_jit[0]) + " ≈" if t_jit else "n/a"
                rows.append(
                    f"| `{name}` | {n:.0e} | {fmt(t_sc)} | {fmt(t_pp)} | {t_sc / t_pp:.2f}x "
                    f"| {fmt(t_lo)} | {t_sc / t_lo:.2f}x | {t_nb} |"
                )
                print(rows[-1], flush=True)
    machine = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"Python {sys.version.split()[0]}, NumPy {np.__version__}, SciPy {scipy.__version__}; "
        f"PPY_NUM_THREADS={os.environ['PPY_NUM_THREADS']}; thread CPU time, best of "
        f"{args.rounds} rounds"
    )
    text = "\n".join(["# scipy_fusion", "", machine, "", *rows, ""])
    print("\n" + text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "scipy_fusion.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
