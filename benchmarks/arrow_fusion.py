"""Fused pyarrow.compute trees vs chained pyarrow.compute, polars, DuckDB, NumPy.

    python benchmarks/arrow_fusion.py [--sizes 1000000 10000000] [--out DIR]

Four expressions over float64 Arrow arrays with 10% nulls (seeded), one thread each:

    (a) a*b + c                 (b) if_else(a > b, a*c, b - c)
    (c) fill_null(a, 0)*b + c   (d) sum(a*b)

* ppy: the pyarrow.compute function compiled by ppy (one fused kernel over the
  arrays' own value and validity buffers, answer bit for bit pyarrow's; (d) is left
  unfused: Arrow's float sum order is its own, so it runs pyarrow and says so);
* pyarrow: the same function as plain Python (chained compute kernels);
* polars: `df.select(expr)` over a DataFrame of the same Arrow arrays;
* duckdb: SQL over the same Arrow table, answer fetched as Arrow;
* numpy: a preallocated loop with `out=` over the raw values (nulls ignored): the
  memory-bound floor, not an equivalent (only (a) and (d), (d) a BLAS dot).

polars' when/then and SQL's CASE take the else branch for a null condition, Arrow's
if_else gives null: only ppy and pyarrow give Arrow's answer for (b). Each figure is
the best of several runs after a warm-up (ms). Writes DIR/arrow_fusion.md and .png.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("POLARS_MAX_THREADS", "1")
os.environ.setdefault("PPY_NUM_THREADS", "1")

import numpy as np
import pyarrow as pa

import ppy

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _charts import machine_note, publish  # noqa: E402  (benchmarks/ is not a package)

SOURCE = """
import pyarrow as pa
import pyarrow.compute as pc


def fma(a: pa.Array, b: pa.Array, c: pa.Array):
    return pc.add(pc.multiply(a, b), c)


def choose(a: pa.Array, b: pa.Array, c: pa.Array):
    return pc.if_else(pc.greater(a, b), pc.multiply(a, c), pc.subtract(b, c))


def filled(a: pa.Array, b: pa.Array, c: pa.Array):
    return pc.add(pc.multiply(pc.fill_null(a, 0), b), c)


def dot(a: pa.Array, b: pa.Array, c: pa.Array):
    return pc.sum(pc.multiply(a, b))
"""
EXPRS = ("fma", "choose", "filled", "dot")
LABELS = ("a*b+c", "if_else(a>b, a*c, b-c)", "fill_null(a,0)*b+c", "sum(a*b)")
POLARS = ("a*b+c", "when", "fill", "sum")
SQL = (
    "a*b+c",
    "CASE WHEN a>b THEN a*c ELSE b-c END",
    "coalesce(a,0)*b+c",
    "sum(a*b)",
)


def best(fn: Callable[[], object], runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def columns(n: int) -> dict[str, pa.Array]:
    rng = np.random.default_rng(7)
    return {k: pa.array(rng.standard_normal(n), mask=rng.random(n) < 0.1) for k in "abc"}


def polars_ways(cols: dict[str, pa.Array]) -> list[Callable[[], object]]:
    import polars as pl

    df = pl.DataFrame({k: pl.from_arrow(v) for k, v in cols.items()})
    a, b, c = pl.col("a"), pl.col("b"), pl.col("c")
    exprs = [
        a * b + c,
        pl.when(a > b).then(a * c).otherwise(b - c),
        a.fill_null(0) * b + c,
        (a * b).sum(),
    ]
    return [lambda e=e: df.select(e) for e in exprs]


def duckdb_ways(cols: dict[str, pa.Array]) -> list[Callable[[], object]]:
    import duckdb

    db = duckdb.connect()
    db.execute("SET threads=1")
    db.register("t", pa.table(cols))
    return [lambda q=q: db.sql(f"SELECT {q} AS r FROM t").to_arrow_table() for q in SQL]


def numpy_ways(cols: dict[str, pa.Array]) -> list[Callable[[], object] | None]:
    a, b, c = (np.frombuffer(cols[k].buffers()[1], np.float64, len(cols[k])) for k in "abc")
    out = np.empty_like(a)

    def fma() -> object:
        return np.add(np.multiply(a, b, out=out), c, out=out)

    return [fma, None, None, lambda: np.dot(a, b)]


def check(fast: Any, plain: Any, cols: dict[str, pa.Array]) -> None:
    """ppy's answers are pyarrow's (validity, values bit for bit, bitmap, null count)."""
    args = (cols["a"], cols["b"], cols["c"])
    for name in EXPRS[:3]:
        got, want = getattr(fast, name)(*args), getattr(plain, name)(*args)
        bits = [np.frombuffer(x.buffers()[1], np.uint64, len(x)) for x in (got, want)]
        valid = np.asarray(want.is_valid().to_numpy(zero_copy_only=False), bool)
        assert got.equals(want), name
        assert np.array_equal(bits[0][valid], bits[1][valid]), name
        assert got.null_count == want.null_count, name
        assert (got.buffers()[0] is None) == (want.buffers()[0] is None), name
    assert fast.dot(*args).equals(plain.dot(*args))


def run(n: int, fast: Any, plain: Any) -> dict[str, list[float | None]]:
    cols = columns(n)
    check(fast, plain, cols)
    args = (cols["a"], cols["b"], cols["c"])
    runs = 15 if n <= 2_000_000 else 5
    rows: dict[str, list[float | None]] = {}
    for label, module in (("ppy", fast), ("pyarrow", plain)):
        fns = [getattr(module, e) for e in EXPRS]
        rows[label] = [best(lambda f=f: f(*args), runs) for f in fns]
    for name, maker in (("polars", polars_ways), ("duckdb", duckdb_ways)):
        try:
            ways = maker(cols)
        except ImportError:
            print(f"{name} is not installed (pip install -r benchmarks/requirements.txt)")
            continue
        rows[name] = [best(w, runs) for w in ways]
    rows["numpy out= (floor)"] = [w and best(w, runs) for w in numpy_ways(cols)]
    return rows


def table(n: int, rows: dict[str, list[float | None]]) -> str:
    head = f"| n = {n:.0e}, ms | " + " | ".join(LABELS) + " |"
    lines = [head, "|" + " --- |" * (len(LABELS) + 1)]
    for name, values in rows.items():
        cells = ["" if v is None else f"{v:.2f}" for v in values]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    arrow = rows["pyarrow"]
    ratio = [f"{p / q:.2f}x" for p, q in zip(rows["ppy"], arrow, strict=True)]
    lines.append("| ppy / pyarrow | " + " | ".join(ratio) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args()
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "arrow_bench.py"
        path.write_text(SOURCE, encoding="utf-8")
        fast = ppy.load(path, "arrow_bench")
        namespace: dict[str, object] = {}
        exec(compile(SOURCE, str(path), "exec"), namespace)
        plain = type("plain", (), {k: staticmethod(namespace[k]) for k in EXPRS})
        texts, charts = [], {}
        for n in args.sizes:
            rows = run(n, fast, plain)
            texts.append(table(n, rows))
            charts[n] = rows
    note = "(d) stays pyarrow under ppy: Arrow's float sum order is its own. " + machine_note()
    n = args.sizes[0]
    publish(
        Path(args.out),
        "arrow_fusion",
        "\n\n".join([*texts, note]) + "\n",
        f"Arrow expressions, n={n:.0e}, ms (lower is better)",
        list(LABELS),
        charts[n],
    )


if __name__ == "__main__":
    main()
