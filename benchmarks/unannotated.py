"""Unannotated NumPy code under PPy (a speculative site) against NumPy and Numba, and
what the speculation costs code that never passes an array.

    python benchmarks/unannotated.py [--sizes 1e3,1e6] [--rounds 7] [--out DIR]

The function is written as most NumPy code is, without annotations:

    def f(a, b, c):
        return 2.0*a + 3.0*b*c - a/b

PPy compiles it with `ppy.load` (the module imports NumPy, so its Unknown leaves are
assumed float64 arrays and the guard checks them on every call) and runs it on one
thread. Against, side by side in one run: NumPy as written, and Numba's `@njit` loop
writing into `np.empty_like`. Targets: at 1e3 elements no slower than NumPy, at 1e6
no slower than Numba.

The scalar cost: the same function called with Python floats, in a loop, under PPy
(every call fails the guard's first check and runs the Python path) and under plain
Python; the difference is the per-call overhead a speculative site adds to code that
never sees an array.

Timing and helpers are `numpy_fusion.py`'s (round-robin, best of `--rounds`). Writes
DIR/unannotated.md.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy_fusion as nf

SOURCE = """\
import numpy as np


def f(a, b, c):
    return 2.0*a + 3.0*b*c - a/b
"""
SCALAR_CALLS = 200_000


def load_ppy(folder: Path) -> Any:
    """Compile SOURCE with `ppy.load`; fail loudly unless its one site is speculative."""
    import ppy
    from ppy_core.compiler.cached import compile_file, load_manifest

    (folder / "pyproject.toml").write_text(nf.PYPROJECT)
    path = folder / "ppy_unannotated.py"
    path.write_text(SOURCE)
    (record,) = load_manifest(compile_file(path).entry)["expr_sites"]
    if record.get("unit") is None or record.get("assumed") != ["a", "b", "c"]:
        raise SystemExit(f"the site was not compiled speculatively: {record.get('reasons')}")
    return ppy.load(path, "ppy_unannotated")


def plain_f() -> Callable[..., Any]:
    namespace: dict[str, Any] = {}
    exec(compile(SOURCE, "<numpy>", "exec"), namespace)
    return namespace["f"]


def numba_f() -> Callable[..., Any]:
    import numba

    @numba.njit(cache=False)
    def kernel(a, b, c, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = 2.0 * a[i] + 3.0 * b[i] * c[i] - a[i] / b[i]

    def run(a: Any, b: Any, c: Any) -> Any:
        o = np.empty_like(a)
        kernel(a, b, c, o)
        return o

    return run


def arrays(impls: dict[str, Callable[..., Any]], sizes: list[int], rounds: int) -> list[dict]:
    rows = []
    for n in sizes:
        a, b, c = nf.inputs(n)
        want = impls["NumPy"](a, b, c)
        fns = {name: (lambda: None, functools.partial(fn, a, b, c)) for name, fn in impls.items()}
        times = nf.round_robin(fns, rounds)
        for name, fn in impls.items():
            rows.append(
                {"impl": name, "n": n, "us": times[name], "bits": nf.same_bits(fn(a, b, c), want)}
            )
        print(f"  n={n:>9,d}  " + "  ".join(f"{k}={v:.4g} µs" for k, v in times.items()))
    return rows


def scalar_cost(ppy_f: Callable[..., Any], py_f: Callable[..., Any], rounds: int) -> dict:
    """ns per call of f(1.5, 2.5, 3.5) under PPy (guard fails) and under Python."""

    def loop(fn: Callable[..., Any]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(SCALAR_CALLS):
                fn(1.5, 2.5, 3.5)

        return run

    fns = {"PPy": (lambda: None, loop(ppy_f)), "Python": (lambda: None, loop(py_f))}
    t = nf.round_robin(fns, rounds * 3, sample=0.05)
    ns = {k: v * 1e3 / SCALAR_CALLS for k, v in t.items()}
    same = ppy_f(1.5, 2.5, 3.5) == py_f(1.5, 2.5, 3.5)
    return {**ns, "overhead": ns["PPy"] - ns["Python"], "same": same}


def report(rows: list[dict], scalar: dict, fallbacks: dict, sizes: list[int], command: str) -> str:
    us = {(r["impl"], r["n"]): r["us"] for r in rows}
    lines = [
        "# Unannotated NumPy code: PPy (speculative site) vs NumPy and Numba",
        "",
        f"Machine: {nf.machine()}.",
        f"Command: `{command}` ({time.strftime('%Y-%m-%d %H:%M %Z')}). One thread each.",
        "",
        "`def f(a, b, c): return 2.0*a + 3.0*b*c - a/b` with no annotations, in a module "
        "that imports NumPy. Best µs per call over round-robin repeats; xNumPy is NumPy's "
        "time over this one (higher is faster).",
        "",
        "| implementation | "
        + " | ".join(f"N={n:.0e}: µs · xNumPy" for n in sizes)
        + " | bits = NumPy |",
        "|---|" + "---|" * len(sizes) + "---|",
    ]
    for impl in dict.fromkeys(r["impl"] for r in rows):
        cells = [
            f"{nf._fmt_us(us[(impl, n)])} · {us[('NumPy', n)] / us[(impl, n)]:.2f}" for n in sizes
        ]
        bits = all(r["bits"] for r in rows if r["impl"] == impl)
        lines.append(f"| {impl} | " + " | ".join(cells) + f" | {'yes' if bits else 'no'} |")
    lines += ["", "## Targets", "", "| target | PPy | against | met |", "|---|---|---|---|"]
    for n, other, what in (
        (1000, "NumPy", "N=1e3 ≤ NumPy"),
        (10**6, "Numba @njit", "N=1e6 ≤ Numba @njit"),
    ):
        if n in sizes and (other, n) in us:
            mine, theirs = us[("PPy", n)], us[(other, n)]
            lines.append(
                f"| {what} | {nf._fmt_us(mine)} µs | {nf._fmt_us(theirs)} µs | "
                f"{'yes' if mine <= theirs else 'NO'} |"
            )
    lines += [
        "",
        "## What speculation costs scalar code",
        "",
        f"`f(1.5, 2.5, 3.5)` in a loop of {SCALAR_CALLS:,} calls: every call fails the "
        "guard's first check (a float is no ndarray) and runs the Python path.",
        "",
        "| | ns per call |",
        "|---|---|",
        f"| plain Python | {scalar['Python']:.0f} |",
        f"| PPy (speculative site, guard fails) | {scalar['PPy']:.0f} |",
        f"| overhead | {scalar['overhead']:.0f} |",
        "",
        f"Same answer: {'yes' if scalar['same'] else 'NO'}. Fallbacks counted by "
        f"`ppy.stats()` over all timed rounds: {fallbacks}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e3,1e6")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    command = "python benchmarks/unannotated.py " + " ".join(argv or sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="ppy-bench-") as tmp:
        os.environ.setdefault("PPY_CACHE_DIR", str(Path(tmp) / "cache"))
        print(f"compiling with ppy.load ... ({nf.machine()})", flush=True)
        module = load_ppy(Path(tmp))
        import ppy
        from ppy_numpy._runtime import set_num_threads

        set_num_threads(1)
        impls = {"PPy": module.f, "NumPy": plain_f()}
        try:
            impls["Numba @njit"] = numba_f()
        except ImportError:
            print("numba is not installed: no Numba column (pip install numba)")
        rows = arrays(impls, sizes, args.rounds)
        ppy.reset_stats()
        scalar = scalar_cost(module.f, impls["NumPy"], args.rounds)
        fallbacks = {
            reason: n
            for site, data in ppy.stats().items()
            if site.startswith("ppy_unannotated:")
            for reason, n in data["fallback"].items()
        }
        set_num_threads(os.cpu_count() or 1)
    text = report(rows, scalar, fallbacks, sizes, command.strip())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "unannotated.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
