"""Real NumPy programs, unannotated, under PPy against NumPy and Numba `@njit`.

    python benchmarks/numpy_programs.py [--scale 1.0] [--rounds 5] [--out DIR]

Thirteen small programs written as NumPy code usually is (no annotations; stencils on
shifted views, broadcasting against row and column vectors, a time-step loop, a small
network's forward pass, NumPy calls around the arithmetic). Each runs three ways on
the same inputs: as written (NumPy), compiled by PPy (`ppy.load`, one thread), and
through Numba's `numba.njit` applied to the same unmodified function. Reported: whether
each answer equals NumPy's bit for bit, whether PPy's fast path ran on every site the
program called (`ppy.stats()`: fast calls and no fallback), and best times.

Timing and helpers are `numpy_fusion.py`'s (round-robin, best of `--rounds`). Writes
DIR/numpy_programs.md.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
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


def jacobi(A):
    return 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])


def heat(u, alpha):
    return u[1:-1] + alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2])


def leapfrog(x, v, f, dt):
    return x + dt * v + 0.5 * dt * dt * f


def standardize(x):
    mu = x.mean(axis=0)
    sd = x.std(axis=0)
    return (x - mu) / (sd + 1e-8)


def layer_norm(x, g, b):
    mu = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def mlp(x, w1, b1, w2, b2):
    h = np.tanh(x @ w1 + b1)
    return 1.0 / (1.0 + np.exp(-(h @ w2 + b2)))


def pairwise(x, y):
    return np.sqrt((x[:, None] - x[None, :]) * (x[:, None] - x[None, :])
                   + (y[:, None] - y[None, :]) * (y[:, None] - y[None, :]))


def d1(s, k, t, r, sigma):
    return (np.log(s / k) + (r + 0.5 * sigma * sigma) * t) / (sigma * np.sqrt(t))


def horner(x):
    return ((0.5 * x - 1.2) * x + 3.3) * x - 0.7


def oscillate(x, v, dt, steps):
    for _ in range(steps):
        v = v - dt * (4.0 * x + 0.1 * v)
        x = x + dt * v
    return x


def blend(a, b, alpha):
    return a * alpha[:, None] + b * (1.0 - alpha[:, None])


def diffuse(T, steps):
    A = T.copy()
    B = T.copy()
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.25 * (A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A, B = B, A
    return A


def gaussian(x, mu, s):
    return np.exp(-0.5 * ((x - mu) / s) * ((x - mu) / s)) / (s * 2.5066282746310002)


def advance(x, v, f, dt, steps):
    x = x.copy()
    v = v.copy()
    for _ in range(steps):
        v += dt * (f - 0.1 * v - 4.0 * x)
        x += dt * v
    return x


def relax(u, f, steps):
    u = u.copy()
    out = u.copy()
    for _ in range(steps):
        out[1:-1] = 0.5 * (u[2:] + u[:-2]) + 0.1 * f[1:-1]
        u, out = out, u
    return u
"""


def programs(scale: float) -> dict[str, tuple[Any, ...]]:
    """Each program's inputs (1e6 elements per array at scale 1)."""
    rng = np.random.default_rng(2026)
    n = int(1_000_000 * scale)
    side = int(1000 * scale**0.5)

    def u(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
        return rng.uniform(lo, hi, shape)

    return {
        "jacobi": (u(side, side),),
        "heat": (u(n), 0.1),
        "leapfrog": (u(n), u(n), u(n), 0.01),
        "standardize": (u(side, side),),
        "layer_norm": (u(side, side), u(side), u(side)),
        "mlp": (u(side, 64), u(64, side) * 0.1, u(side), u(side, 32) * 0.1, u(32)),
        "pairwise": (u(side), u(side)),
        "d1": (u(n, lo=50, hi=150), u(n, lo=50, hi=150), u(n, lo=0.1, hi=2.0), 0.03, 0.2),
        "horner": (u(n),),
        "oscillate": (u(n // 10), u(n // 10), 0.01, 10),
        "blend": (u(side, side), u(side, side), u(side, lo=0.0, hi=1.0)),
        "diffuse": (u(side // 3, side // 3), 10),
        "gaussian": (u(n), 0.1, 0.7),
        "advance": (u(n // 10), u(n // 10), u(n // 10), 0.01, 10),
        "relax": (u(n // 10), u(n // 10), 10),
    }


def load(folder: Path) -> tuple[Any, Any, dict[str, list[str]]]:
    """(PPy module, plain module, {function: its site ids in ppy.stats()})."""
    import importlib.util

    import ppy
    from ppy_core.compiler.cached import compile_file, load_manifest

    (folder / "pyproject.toml").write_text(nf.PYPROJECT)
    path = folder / "npprog.py"
    path.write_text(SOURCE)
    records = load_manifest(compile_file(path).entry)["expr_sites"]
    sites: dict[str, list[str]] = {}
    for r in records:
        if r.get("unit") is not None:
            sites.setdefault(r["function"], []).append(f"npprog:{r['id']}")
    fast = ppy.load(path, "npprog")
    spec = importlib.util.spec_from_file_location("npprog_plain", path)
    assert spec is not None
    assert spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    return fast, plain, sites


def fast_path_ran(fn: Callable[..., Any], args: tuple[Any, ...], ids: list[str]) -> str:
    """'yes' when the call ran some site fast and none fell back, else why not."""
    import ppy

    ppy.reset_stats()
    fn(*args)
    stats = ppy.stats()
    fast = sum(int(stats.get(s, {}).get("fast", 0)) for s in ids)
    falls = {r: n for s in ids for r, n in stats.get(s, {}).get("fallback", {}).items()}
    if not ids:
        return "no site"
    return "yes" if fast and not falls else f"no {falls or ''}".strip()


def numba_of(fn: Callable[..., Any], args: tuple[Any, ...]) -> Callable[..., Any] | str:
    try:
        import numba
    except ImportError:
        return "not installed"
    try:
        jitted = numba.njit(cache=False)(fn)
        jitted(*args)
    except Exception as exc:  # Numba's own typing errors: reported, not raised
        return f"does not compile ({type(exc).__name__})"
    return jitted


def run(scale: float, rounds: int) -> list[dict[str, Any]]:
    from ppy_numpy._runtime import set_num_threads

    set_num_threads(1)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ppy-bench-") as tmp:
        os.environ.setdefault("PPY_CACHE_DIR", str(Path(tmp) / "cache"))
        fast, plain, sites = load(Path(tmp))
        for name, args in programs(scale).items():
            want = getattr(plain, name)(*args)
            impls: dict[str, Callable[..., Any]] = {
                "NumPy": getattr(plain, name),
                "PPy": getattr(fast, name),
            }
            jitted = numba_of(getattr(plain, name), args)
            if callable(jitted):
                impls["Numba"] = jitted
            ran = fast_path_ran(impls["PPy"], args, sites.get(name, []))
            fns = {k: (lambda: None, functools.partial(f, *args)) for k, f in impls.items()}
            times = nf.round_robin(fns, rounds)
            row = {
                "program": name,
                "fast": ran,
                "ppy_same": nf.same_bits(impls["PPy"](*args), want),
                "numba": "" if callable(jitted) else jitted,
                "numba_same": callable(jitted) and nf.same_bits(jitted(*args), want),
                **{f"t_{k}": v for k, v in times.items()},
            }
            rows.append(row)
            print(
                f"  {name:<12} fast={ran:<5} "
                + "  ".join(f"{k}={v:,.0f} µs" for k, v in times.items()),
                flush=True,
            )
    return rows


def report(rows: list[dict[str, Any]], command: str) -> str:
    lines = [
        "# Real NumPy programs (unannotated): PPy vs NumPy and Numba `@njit`",
        "",
        f"Machine: {nf.machine()}.",
        f"Command: `{command}` ({time.strftime('%Y-%m-%d %H:%M %Z')}). One thread each.",
        "",
        "Best µs per call (round-robin). Ratio: time over NumPy's (lower is faster). "
        "same: the answer equals NumPy's bit for bit. fast: PPy's fast path ran on every "
        "site the call reached (`ppy.stats()`).",
        "",
        "| program | NumPy µs | PPy µs | PPy/NumPy | fast | same | Numba µs | Numba/NumPy "
        "| Numba same |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        numba_t = r.get("t_Numba")
        lines.append(
            f"| {r['program']} | {r['t_NumPy']:,.0f} | {r['t_PPy']:,.0f} | "
            f"{r['t_PPy'] / r['t_NumPy']:.2f} | {r['fast']} | "
            f"{'yes' if r['ppy_same'] else 'NO'} | "
            + (
                f"{numba_t:,.0f} | {numba_t / r['t_NumPy']:.2f} | "
                f"{'yes' if r['numba_same'] else 'no'} |"
                if numba_t
                else f"{r['numba']} | | |"
            )
        )
    ratios = [r["t_PPy"] / r["t_NumPy"] for r in rows]
    both = [r for r in rows if r.get("t_Numba")]
    lines += [
        "",
        f"Fast path in {sum(r['fast'] == 'yes' for r in rows)} of {len(rows)}; "
        f"identical answers in {sum(bool(r['ppy_same']) for r in rows)} of {len(rows)}; "
        f"median PPy/NumPy {statistics.median(ratios):.2f}; PPy at most Numba's time in "
        f"{sum(r['t_PPy'] <= r['t_Numba'] for r in both)} of the {len(both)} Numba compiles.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    command = "python benchmarks/numpy_programs.py " + " ".join(argv or sys.argv[1:])
    print(f"compiling with ppy.load ... ({nf.machine()})", flush=True)
    rows = run(args.scale, args.rounds)
    text = report(rows, command)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "numpy_programs.md").write_text(text, encoding="utf-8")
    wrong = [r["program"] for r in rows if not r["ppy_same"]]
    if wrong:  # a different answer is a failure, not a measurement
        print(f"PPy's answer differs from NumPy's: {wrong}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
