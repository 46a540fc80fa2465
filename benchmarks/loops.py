"""Typed loops: eight scalar-loop programs, plain Python vs PPy vs Numba `@njit`.

    python benchmarks/loops.py [--rounds 15] [--out DIR]

Each program is one unmodified function (SOURCE below): run as plain Python (the
interpreter with NumPy arrays), compiled by PPy (`ppy.load`: the whole function
becomes one typed-loops site, see core/ppy_core/compiler/frontend/loops.py), and
Numba's `@njit` on the same function object's source. Inputs are made fresh for
every run (in-place programs); the call alone is timed, best of `--rounds` (PPy
and Numba alternate, so a busy moment of a shared machine hits both alike).
Agreement: every array the program writes and its return value, bit for bit,
against plain Python's. Writes DIR/loops.md when --out is given.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import types
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SOURCE = """
import math
import numpy as np
import numpy.typing as npt


def tiny(a: np.ndarray, k: int) -> float:
    s = 0.0
    for i in range(k):
        s += a[i]
    return s


def fsub(L: np.ndarray, b: np.ndarray, x: np.ndarray) -> None:
    n = b.shape[0]
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]


def cholesky(A: np.ndarray, L: np.ndarray) -> None:
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]


def seidel(A: np.ndarray, steps: int) -> None:
    n = A.shape[0]
    for t in range(steps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1]
                           + A[i, j - 1] + A[i, j] + A[i, j + 1]
                           + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]) / 9.0


def floyd(D: np.ndarray) -> None:
    n = D.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                d = D[i, k] + D[k, j]
                if d < D[i, j]:
                    D[i, j] = d


def nussinov(seq: npt.NDArray[np.int64], P: np.ndarray, T: np.ndarray) -> None:
    n = seq.shape[0]
    for i in range(n - 2, -1, -1):
        for j in range(i + 1, n):
            best = T[i + 1, j]
            if T[i, j - 1] > best:
                best = T[i, j - 1]
            pair = T[i + 1, j - 1] + P[seq[i], seq[j]]
            if pair > best:
                best = pair
            for k in range(i + 1, j):
                split = T[i, k] + T[k + 1, j]
                if split > best:
                    best = split
            T[i, j] = best


def csr_matvec(indptr: npt.NDArray[np.int64], indices: npt.NDArray[np.int64],
               data: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    n = y.shape[0]
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i] = s


def crc32(data: npt.NDArray[np.int64]) -> int:
    crc = 0xFFFFFFFF
    for i in range(data.shape[0]):
        crc = crc ^ int(data[i])
        for k in range(8):
            if crc & 1 == 1:
                crc = (crc >> 1) ^ 0xEDB88320
            else:
                crc = crc >> 1
    return crc ^ 0xFFFFFFFF


def nbody(pos: np.ndarray, vel: np.ndarray, mass: np.ndarray, dt: float) -> None:
    n = pos.shape[0]
    for i in range(n):
        ax = 0.0
        ay = 0.0
        az = 0.0
        for j in range(n):
            if i != j:
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                dz = pos[j, 2] - pos[i, 2]
                r2 = dx * dx + dy * dy + dz * dz + 0.01
                inv = 1.0 / (r2 * math.sqrt(r2))
                ax += mass[j] * dx * inv
                ay += mass[j] * dy * inv
                az += mass[j] * dz * inv
        vel[i, 0] += ax * dt
        vel[i, 1] += ay * dt
        vel[i, 2] += az * dt
    for i in range(n):
        pos[i, 0] += vel[i, 0] * dt
        pos[i, 1] += vel[i, 1] * dt
        pos[i, 2] += vel[i, 2] * dt
"""


def inputs(name: str) -> tuple[Any, ...]:
    """Fresh inputs (same every call: seeded)."""
    rng = np.random.default_rng(7)
    if name == "fsub":
        n = 400
        L = np.tril(rng.standard_normal((n, n))) + n * np.eye(n)
        return L, rng.standard_normal(n), np.zeros(n)
    if name == "cholesky":
        n = 120
        M = rng.standard_normal((n, n))
        return M @ M.T + n * np.eye(n), np.zeros((n, n))
    if name == "seidel":
        return rng.standard_normal((100, 100)), 5
    if name == "floyd":
        D = rng.uniform(1.0, 100.0, (90, 90))
        D[rng.random((90, 90)) < 0.7] = np.inf
        np.fill_diagonal(D, 0.0)
        return (D,)
    if name == "nussinov":
        n = 110
        P = np.zeros((4, 4))
        for a, b in ((0, 3), (3, 0), (1, 2), (2, 1)):
            P[a, b] = 1.0
        return rng.integers(0, 4, n), P, np.zeros((n + 1, n + 1))
    if name == "csr_matvec":
        rows, per = 20000, 10
        indptr = np.arange(0, rows * per + 1, per, dtype=np.int64)
        indices = rng.integers(0, rows, rows * per)
        return (
            indptr,
            indices,
            rng.standard_normal(rows * per),
            rng.standard_normal(rows),
            np.zeros(rows),
        )
    if name == "crc32":
        return (rng.integers(0, 256, 20000),)
    if name == "nbody":
        n = 150
        return (
            rng.standard_normal((n, 3)),
            rng.standard_normal((n, 3)),
            rng.uniform(0.5, 1.5, n),
            0.01,
        )
    raise KeyError(name)


NAMES = ("fsub", "cholesky", "seidel", "floyd", "nussinov", "csr_matvec", "crc32", "nbody")


def outcome(fn: Callable[..., Any], name: str) -> tuple[float, bytes]:
    """(seconds for one call, the bytes of its result and every array after it)."""
    args = inputs(name)
    t0 = time.perf_counter()
    result = fn(*args)
    dt = time.perf_counter() - t0
    blob = b"".join(a.tobytes() for a in args if isinstance(a, np.ndarray))
    return dt, blob + repr(result).encode()


def best(fn: Callable[..., Any], name: str, rounds: int) -> tuple[float, bytes]:
    runs = [outcome(fn, name) for _ in range(rounds)]
    return min(r[0] for r in runs), runs[0][1]


def per_call(plain: Any, compiled: Any, numba: Any) -> list[str]:
    """The cost of one call of `tiny(a, 1)`: the dispatch, guard and boxing around a
    one-iteration loop. PPy's C caller (`_loopcall`) against its Python site (the
    earlier caller, still behind it for every call C does not answer) and Numba's."""
    import timeit

    a = np.zeros(4)
    fast = compiled.tiny
    callers = [("Python", plain.tiny), ("PPy (C caller)", fast)]
    callers.append(("PPy (Python site, before)", getattr(fast, "site", fast)))
    if numba is not None:
        callers.append(("Numba", numba.njit(plain.tiny)))
    rows = ["| one call of tiny(a, 1) | ns |", "| --- | ---: |"]
    for label, fn in callers:
        fn(a, 1)
        best = min(timeit.repeat(lambda fn=fn: fn(a, 1), number=20000, repeat=7)) / 20000
        rows.append(f"| {label} | {best * 1e9:.0f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--out", type=Path, default=None)
    opts = parser.parse_args()
    import ppy

    folder = Path(tempfile.mkdtemp(prefix="ppy_loops_bench_"))
    path = folder / "ppy_loops_bench.py"
    path.write_text(SOURCE)
    plain = types.ModuleType("plain")
    exec(compile(SOURCE, str(path), "exec"), plain.__dict__)
    compiled = ppy.load(path)
    try:
        import numba
    except ImportError:
        numba = None
    rows = []
    for name in NAMES:
        fast = getattr(compiled, name)
        if not hasattr(fast, "ppy_stats"):
            sys.exit(f"{name} did not compile as typed loops (see `ppy explain {path}`)")
        t_py, ref = best(getattr(plain, name), name, 2)
        before = fast.ppy_stats()["fast"]
        t_ppy, got = outcome(fast, name)
        t_nb, nb_same = float("nan"), "-"
        jitted = numba.njit(getattr(plain, name)) if numba is not None else None
        if jitted is not None:
            t_nb, nb = outcome(jitted, name)  # (the first call compiles: not timed)
            t_nb, nb_same = float("inf"), "yes" if nb == ref else "NO"
        for _ in range(opts.rounds):  # alternated: a busy moment of the machine hits both
            t_ppy = min(t_ppy, outcome(fast, name)[0])
            if jitted is not None:
                t_nb = min(t_nb, outcome(jitted, name)[0])
        assert fast.ppy_stats()["fast"] == before + 1 + opts.rounds, f"{name}: guard failed"
        if name == "crc32":
            assert int(repr(fast(*inputs(name)))) == zlib.crc32(
                bytes(inputs(name)[0].astype(np.uint8))
            )
        rows.append((name, t_py, t_ppy, t_nb, "yes" if got == ref else "NO", nb_same))
    lines = [
        "| program | Python ms | PPy ms | Numba ms | PPy/Numba | Python/PPy "
        "| PPy bits = Python | Numba bits = Python |",
        "| --- | ---: | ---: | ---: | ---: | ---: | :---: | :---: |",
    ]
    for name, t_py, t_ppy, t_nb, same, nb_same in rows:
        lines.append(
            f"| {name} | {t_py * 1e3:.1f} | {t_ppy * 1e3:.3f} | {t_nb * 1e3:.3f} | "
            f"{t_ppy / t_nb:.2f} | {t_py / t_ppy:.0f}x | {same} | {nb_same} |"
        )
    ratios = [t_ppy / t_nb for _n, _p, t_ppy, t_nb, _s, _b in rows if t_nb == t_nb]
    if ratios:
        lines.append(f"\nmedian PPy/Numba time: {statistics.median(ratios):.2f}")
    lines += ["", *per_call(plain, compiled, numba)]
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _charts import machine_note  # (benchmarks/ is not a package)

    lines += ["", machine_note()]
    text = "\n".join(lines)
    print(text)
    if opts.out is not None:
        opts.out.mkdir(parents=True, exist_ok=True)
        (opts.out / "loops.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
