"""PPy fused NumPy kernels vs NumPy, numexpr (1/2 threads) and Numba, in one run.

    python benchmarks/numpy_fusion.py [--sizes 1e3,1e5,1e7] [--out benchmarks/results]

Writes ``numpy_fusion.md`` (table) and ``numpy_fusion.png`` (chart). PPy rows
drive the kernels through the ppy-llvm backend and the ppy-numpy dispatcher
directly (hand-built kernel specs); `ppy_pipeline_sites` is the hook for the
real ``ppy`` compile path once the core pipeline can compile these functions.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

EXPRS: dict[str, tuple[str, Callable[..., Any]]] = {
    "a*b + c": ("a*b + c", lambda a, b, c: a * b + c),
    "2a + 3bc - a/b": ("2.0*a + 3.0*b*c - a/b", lambda a, b, c: 2.0 * a + 3.0 * b * c - a / b),
    "sin(a)*2 + exp(b)": ("sin(a)*2.0 + exp(b)", lambda a, b, c: np.sin(a) * 2.0 + np.exp(b)),
    "where(a>b, a*c, b-c)": (
        "where(a > b, a*c, b - c)",
        lambda a, b, c: np.where(a > b, a * c, b - c),
    ),
    "sum(a*b)": ("sum(a*b)", lambda a, b, c: np.sum(a * b)),
}
BYTES = {
    "a*b + c": 32,
    "2a + 3bc - a/b": 32,
    "sin(a)*2 + exp(b)": 24,
    "where(a>b, a*c, b-c)": 32,
    "sum(a*b)": 16,
}


def ppy_specs() -> dict[str, Any]:
    """The five expressions as ppy-llvm kernel specs (leaves a, b, c)."""
    from ppy_llvm import KernelBuilder

    out = {}
    for name in EXPRS:
        b = KernelBuilder()
        a, bb, c = b.leaf(), b.leaf(), b.leaf()
        k = b.const
        if name == "a*b + c":
            r, red = b.op("add", b.op("mul", a, bb), c), None
        elif name == "2a + 3bc - a/b":
            r = b.op(
                "sub",
                b.op("add", b.op("mul", k(2.0), a), b.op("mul", b.op("mul", k(3.0), bb), c)),
                b.op("div", a, bb),
            )
            red = None
        elif name == "sin(a)*2 + exp(b)":
            r = b.op(
                "add", b.op("mul", b.op("unary", a, op="sin"), k(2.0)), b.op("unary", bb, op="exp")
            )
            red = None
        elif name == "where(a>b, a*c, b-c)":
            r, red = (
                b.op(
                    "select",
                    b.op("compare", a, bb, pred="gt"),
                    b.op("mul", a, c),
                    b.op("sub", bb, c),
                ),
                None,
            )
        else:
            r, red = b.op("mul", a, bb), "add"
        out[name] = b.build(r, reduce=red)
    return out


def ppy_direct_sites() -> dict[str, Any]:
    """Sites built straight from the backend (no front end)."""
    from ppy_llvm import compile_specs
    from ppy_llvm.loader import kernel_address
    from ppy_numpy._runtime import make_site

    specs = ppy_specs()
    sites = {}
    for (name, _spec), k in zip(
        specs.items(), compile_specs(list(specs.values()), "bench"), strict=True
    ):
        addr, lib = kernel_address(k)  # type: ignore[misc]
        s = k.signature
        sites[name] = make_site(addr, s.kind, s.leaves, s.loops, EXPRS[name][1], name, lib)
    return sites


def ppy_pipeline_sites() -> dict[str, Any] | None:
    """HOOK: the same expressions through ``ppy`` (front end, fusion, backend,
    dispatcher). Returns None until the core pipeline compiles them."""
    try:
        import ppy  # noqa: F401
    except ImportError:
        return None
    return None  # TODO(core): ppy.load() a module with the five functions and return them by name


def numexpr_fns() -> dict[str, Callable[..., Any]]:
    import numexpr as ne

    def make(text: str) -> Callable[..., Any]:
        if text.startswith("sum("):
            return lambda a, b, c: ne.evaluate(text)
        return lambda a, b, c: ne.evaluate(text)

    return {name: make(text) for name, (text, _) in EXPRS.items()}


def numba_fns() -> tuple[dict[str, Callable[..., Any]], dict[str, Callable[..., Any]]]:
    import numba

    @numba.njit
    def k1(a, b, c, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = a[i] * b[i] + c[i]

    @numba.njit
    def k2(a, b, c, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = 2.0 * a[i] + 3.0 * b[i] * c[i] - a[i] / b[i]

    @numba.njit
    def k3(a, b, c, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = np.sin(a[i]) * 2.0 + np.exp(b[i])

    @numba.njit
    def k4(a, b, c, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = a[i] * c[i] if a[i] > b[i] else b[i] - c[i]

    @numba.njit
    def k5(a, b):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in range(a.size):
            s += a[i] * b[i]
        return s

    def into(k: Callable[..., Any]) -> Callable[..., Any]:
        def run(a: Any, b: Any, c: Any) -> Any:
            o = np.empty_like(a)
            k(a, b, c, o)
            return o

        return run

    njit = {
        "a*b + c": into(k1),
        "2a + 3bc - a/b": into(k2),
        "sin(a)*2 + exp(b)": into(k3),
        "where(a>b, a*c, b-c)": into(k4),
        "sum(a*b)": lambda a, b, c: k5(a, b),
    }
    sig = ["float64(float64, float64, float64)"]
    v1 = numba.vectorize(sig)(lambda a, b, c: a * b + c)
    v2 = numba.vectorize(sig)(lambda a, b, c: 2.0 * a + 3.0 * b * c - a / b)
    v3 = numba.vectorize(sig)(lambda a, b, c: np.sin(a) * 2.0 + np.exp(b))
    v4 = numba.vectorize(sig)(lambda a, b, c: a * c if a > b else b - c)
    vec = {"a*b + c": v1, "2a + 3bc - a/b": v2, "sin(a)*2 + exp(b)": v3, "where(a>b, a*c, b-c)": v4}
    return njit, vec


def timeit(fn: Callable[[], Any], budget: float = 0.25) -> float:
    """Best µs per call over batches of ~25 ms (at least 3 batches)."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    number = max(1, int(0.025 / one))
    best, spent = float("inf"), 0.0
    for _ in range(max(3, int(budget / max(one * number, 1e-9)))):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        dt = time.perf_counter() - t0
        best, spent = min(best, dt / number), spent + dt
        if spent > budget * 4:
            break
    return best * 1e6


def machine_ceiling(n: int) -> dict[str, float]:
    """Copy and fused-triad bandwidth (GB/s) at n elements (NumPy copy, Numba triad)."""
    import numba

    @numba.njit
    def triad(a, b, o):  # type: ignore[no-untyped-def]
        for i in range(a.size):
            o[i] = a[i] + 3.0 * b[i]

    a, b, o = np.random.rand(n), np.random.rand(n), np.empty(n)
    t_copy = timeit(lambda: np.copyto(o, a))
    t_triad = timeit(lambda: triad(a, b, o))
    return {"copy": 16 * n / t_copy / 1e3, "triad": 24 * n / t_triad / 1e3}


def candidates(
    name: str,
    args: tuple[Any, ...],
    sites: dict[str, Any],
    nefn: dict[str, Any],
    numba_fns_: tuple[dict[str, Any], dict[str, Any]],
) -> dict[str, Callable[[], Any]]:
    """Zero-argument callables, one per implementation, over fixed inputs."""
    import numexpr as ne

    from ppy_numpy._runtime import set_num_threads

    njit, vec = numba_fns_

    def threaded(setter: Callable[[int], Any], t: int, f: Callable[..., Any]) -> Callable[[], Any]:
        def call() -> Any:
            setter(t)
            return f(*args)

        return call

    impls: dict[str, Callable[[], Any]] = {"NumPy": lambda: EXPRS[name][1](*args)}
    for t in (1, 2):
        impls[f"PPy {t}t"] = threaded(set_num_threads, t, sites[name])
        impls[f"numexpr {t}t"] = threaded(ne.set_num_threads, t, nefn[name])
    impls["numba @njit empty_like"] = lambda: njit[name](*args)
    if name in vec:
        impls["numba @vectorize"] = lambda: vec[name](*args)
    return impls


def run(sizes: list[int], out: Path) -> None:
    """Measure every implementation at every size; write the report."""
    from ppy_numpy._runtime import num_threads, set_num_threads

    rng = np.random.default_rng(12345)
    sites = ppy_pipeline_sites() or ppy_direct_sites()
    nefn = numexpr_fns()
    nb = numba_fns()
    threads0 = num_threads()
    rows: list[tuple[str, str, int, float, float, str]] = []
    for n in sizes:
        a, b, c = rng.uniform(-4, 4, n), rng.uniform(0.5, 2, n), rng.uniform(-1, 1, n)
        for name, (_, ref) in EXPRS.items():
            want = ref(a, b, c)
            impls = candidates(name, (a, b, c), sites, nefn, nb)
            base = None
            for impl, fn in impls.items():
                got = fn()
                same = np.array_equal(
                    np.asarray(got).view(np.uint64), np.asarray(want).view(np.uint64)
                )
                us = timeit(fn)
                base = base or us
                rows.append(
                    (name, impl, n, us, BYTES[name] * n / us / 1e3, "=" if same else "differs")
                )
            print(f"done {name} n={n}", flush=True)
    set_num_threads(threads0)
    ceil = machine_ceiling(max(sizes))
    write_report(rows, ceil, sizes, out)


def write_report(
    rows: list[tuple[str, str, int, float, float, str]],
    ceil: dict[str, float],
    sizes: list[int],
    out: Path,
) -> None:
    """Markdown table + PNG chart."""
    out.mkdir(parents=True, exist_ok=True)
    np_us = {(r[0], r[2]): r[3] for r in rows if r[1] == "NumPy"}
    lines = [
        f"# NumPy fusion benchmark ({os.cpu_count()} CPUs)",
        "",
        f"ceiling at N={max(sizes):.0e}: copy {ceil['copy']:.1f} GB/s, "
        f"triad {ceil['triad']:.1f} GB/s",
        "",
        "| expr | impl | " + " | ".join(f"N={n:.0e} µs (GB/s, xNP)" for n in sizes) + " | bits |",
        "|---|---|" + "---|" * len(sizes) + "---|",
    ]
    order: dict[tuple[str, str], dict[int, tuple[float, float, str]]] = {}
    for name, impl, n, us, gbs, same in rows:
        order.setdefault((name, impl), {})[n] = (us, gbs, same)
    for (name, impl), per in order.items():
        cells = [
            f"{per[n][0]:.2f} ({per[n][1]:.1f}, {np_us[(name, n)] / per[n][0]:.2f}x)"
            for n in sizes
            if n in per
        ]
        bits = "=" if all(v[2] == "=" for v in per.values()) else "differs"
        lines.append(f"| {name} | {impl} | " + " | ".join(cells) + f" | {bits} |")
    (out / "numpy_fusion.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 5), squeeze=False)
    impls = list(dict.fromkeys(r[1] for r in rows))
    names = list(EXPRS)
    for ax, n in zip(axes[0], sizes, strict=True):
        width = 0.8 / len(impls)
        for k, impl in enumerate(impls):
            ys = [
                np_us[(nm, n)] / order[(nm, impl)][n][0] if (nm, impl) in order else 0
                for nm in names
            ]
            ax.bar(np.arange(len(names)) + k * width, ys, width, label=impl)
        ax.set_xticks(np.arange(len(names)) + 0.4, names, rotation=30, ha="right", fontsize=8)
        ax.set_title(f"N={n:.0e}: speed vs NumPy (higher is better)")
        ax.axhline(1.0, color="k", lw=0.5)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "numpy_fusion.png", dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1e3,1e5,1e7")
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    run([int(float(s)) for s in args.sizes.split(",")], Path(args.out))


if __name__ == "__main__":
    main()
