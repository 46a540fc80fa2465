"""Fused pandas Series expressions vs pandas eager (both backings), DataFrame.eval, polars.

    python benchmarks/pandas_fusion.py [--sizes 1000000] [--out DIR]

Four expressions over float64 Series with 10% nulls (seeded), one thread each:

    (a) a*b + c.fillna(0)          (b) (a > b) & c.notna()
    (c) (a - b) / (c.fillna(1) + 2)  (d) ~(a <= 0.5) | (b.isna() & (c > a))

* ppy numpy / ppy arrow: the function compiled by ppy, called with NumPy-backed
  (NaN for null) or ArrowDtype (`double[pyarrow]`, <NA>) Series: one fused kernel,
  the answer checked equal to pandas' own (`assert_series_equal(check_exact=True)`);
* pandas numpy / pandas arrow: the same function as plain Python;
* DataFrame.eval: `df.eval(expr)` over the NumPy-backed frame (numexpr engine where
  it parses the expression, else engine="python"); the row says where its answer
  differs from pandas' own;
* polars: `df.select(expr)` over the same Arrow arrays (null semantics: Arrow's);
* floor (numpy): what any one-pass kernel of the expression must at least do on the
  NumPy backing: a Numba loop (one thread) that reads the same three float64 columns
  and writes an answer of the same size (a float64, or a byte for a boolean answer)
  with one op per row; `floor / pandas numpy` is then the best ratio reachable there.

Each figure is the best of several runs after a warm-up (ms). Writes
DIR/pandas_fusion.md and .png.
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
os.environ.setdefault("NUMEXPR_MAX_THREADS", "1")
os.environ.setdefault("NUMEXPR_NUM_THREADS", "1")

import numpy as np
import pandas as pd
import pyarrow as pa

import ppy

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _charts import machine_note, publish  # noqa: E402  (benchmarks/ is not a package)

EXPRS = (
    "a * b + c.fillna(0)",
    "(a > b) & c.notna()",
    "(a - b) / (c.fillna(1) + 2)",
    "~(a <= 0.5) | (b.isna() & (c > a))",
)
LABELS = (
    "a*b+c.fillna(0)",
    "(a>b) & c.notna()",
    "(a-b)/(c.fillna(1)+2)",
    "~(a<=.5)|(b.isna()&(c>a))",
)
SOURCE = "import pandas as pd\n" + "".join(
    f"\n\ndef e{k}(a: pd.Series, b: pd.Series, c: pd.Series) -> pd.Series:\n    return {e}\n"
    for k, e in enumerate(EXPRS)
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


def frames(cols: dict[str, pa.Array]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The same data NumPy-backed (NaN for null) and Arrow-backed (<NA>)."""
    numpy = pd.DataFrame({k: v.to_numpy(zero_copy_only=False) for k, v in cols.items()})
    arrow = pd.DataFrame({k: pd.arrays.ArrowExtensionArray(v) for k, v in cols.items()})
    return numpy, arrow


def series(frame: pd.DataFrame) -> tuple[pd.Series, ...]:
    return tuple(frame[k] for k in "abc")


def eval_ways(df: pd.DataFrame, fns: list[Any]) -> tuple[list[Callable[[], object]], list[str]]:
    """`df.eval` per expression (numexpr engine where it parses), and how its answer
    compares with pandas' own."""
    ways, notes = [], []
    want = [f(*series(df)) for f in fns]
    for k, expr in enumerate(EXPRS):
        engine = "numexpr"
        try:
            got = df.eval(expr, engine=engine)
        except Exception:
            engine = "python"
            got = df.eval(expr, engine=engine)
        try:
            pd.testing.assert_series_equal(got, want[k], check_exact=True, check_names=False)
            notes.append(f"{engine}: same")
        except AssertionError as exc:
            notes.append(f"{engine}: differs ({str(exc).splitlines()[0][:60]})")
        ways.append(lambda e=expr, g=engine: df.eval(e, engine=g))
    return ways, notes


def polars_ways(cols: dict[str, pa.Array]) -> list[Callable[[], object]]:
    import polars as pl

    df = pl.DataFrame({k: pl.from_arrow(v) for k, v in cols.items()})
    a, b, c = pl.col("a"), pl.col("b"), pl.col("c")
    exprs = [
        a * b + c.fill_null(0),
        (a > b) & c.is_not_null(),
        (a - b) / (c.fill_null(1) + 2),
        ~(a <= 0.5) | (b.is_null() & (c > a)),
    ]
    return [lambda e=e: df.select(e) for e in exprs]


def floor_ways(df: pd.DataFrame, fns: list[Any]) -> list[Callable[[], object]]:
    """The NumPy backing's memory floor per expression (see the module docstring):
    the answer's size is that of pandas' own answer (`fns` on `df`)."""
    import numba

    @numba.njit(nogil=True)
    def to_float(a: Any, b: Any, c: Any, out: Any) -> None:
        for i in range(out.size):
            out[i] = a[i] + b[i] + c[i]

    @numba.njit(nogil=True)
    def to_bool(a: Any, b: Any, c: Any, out: Any) -> None:
        for i in range(out.size):
            out[i] = a[i] + b[i] > c[i]

    a, b, c = (df[k].to_numpy() for k in "abc")

    def way(kernel: Any, dtype: str) -> Callable[[], object]:
        def run() -> object:
            out = np.empty(len(a), dtype)
            kernel(a, b, c, out)
            return out

        return run

    bool_answer = [f(*series(df)).dtype == np.dtype("bool") for f in fns]
    return [way(to_bool, "bool") if k else way(to_float, "float64") for k in bool_answer]


def check(fast: Any, plain: Any, args: tuple[pd.Series, ...]) -> None:
    """ppy's answers are pandas' own, and came from the fast path."""
    for k in range(len(EXPRS)):
        before = sum(v["fast"] for v in ppy.stats().values())
        got, want = getattr(fast, f"e{k}")(*args), getattr(plain, f"e{k}")(*args)
        assert sum(v["fast"] for v in ppy.stats().values()) == before + 1, EXPRS[k]
        pd.testing.assert_series_equal(got, want, check_exact=True)
        assert got.dtype == want.dtype, EXPRS[k]


def run(n: int, fast: Any, plain: Any) -> tuple[dict[str, list[float | None]], list[str]]:
    cols = columns(n)
    numpy_df, arrow_df = frames(cols)
    runs = 15 if n <= 2_000_000 else 5
    rows: dict[str, list[float | None]] = {}
    for backing, df in (("numpy", numpy_df), ("arrow", arrow_df)):
        args = series(df)
        check(fast, plain, args)
        for label, module in (("ppy", fast), ("pandas", plain)):
            fns = [getattr(module, f"e{k}") for k in range(len(EXPRS))]
            rows[f"{label} {backing}"] = [best(lambda f=f, x=args: f(*x), runs) for f in fns]
    plain_fns = [getattr(plain, f"e{k}") for k in range(len(EXPRS))]
    ways, notes = eval_ways(numpy_df, plain_fns)
    rows["DataFrame.eval (numpy)"] = [best(w, runs) for w in ways]
    try:
        rows["polars"] = [best(w, runs) for w in polars_ways(cols)]
    except ImportError:
        print("polars is not installed (pip install -r benchmarks/requirements.txt)")
    try:
        rows["floor (numpy)"] = [best(w, runs) for w in floor_ways(numpy_df, plain_fns)]
    except ImportError:
        print("numba is not installed: no floor row (pip install -r benchmarks/requirements.txt)")
    return rows, notes


def table(n: int, rows: dict[str, list[float | None]], notes: list[str]) -> str:
    head = f"| n = {n:.0e}, ms | " + " | ".join(x.replace("|", "\\|") for x in LABELS) + " |"
    lines = [head, "|" + " --- |" * (len(LABELS) + 1)]
    for name, values in rows.items():
        cells = ["" if v is None else f"{v:.2f}" for v in values]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for backing in ("numpy", "arrow"):
        ratio = [
            f"{p / q:.2f}x"
            for p, q in zip(rows[f"ppy {backing}"], rows[f"pandas {backing}"], strict=True)
        ]
        lines.append(f"| ppy / pandas {backing} | " + " | ".join(ratio) + " |")
    if "floor (numpy)" in rows:
        ratio = [
            f"{p / q:.2f}x"
            for p, q in zip(rows["floor (numpy)"], rows["pandas numpy"], strict=True)
        ]
        lines.append("| floor / pandas numpy | " + " | ".join(ratio) + " |")
    if "polars" in rows:
        best_ppy = [min(x, y) for x, y in zip(rows["ppy numpy"], rows["ppy arrow"], strict=True)]
        ratio = [f"{p / q:.2f}x" for p, q in zip(best_ppy, rows["polars"], strict=True)]
        lines.append("| best ppy / polars | " + " | ".join(ratio) + " |")
    lines.append("| DataFrame.eval vs pandas | " + " | ".join(notes) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args()
    pa.set_cpu_count(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pandas_bench.py"
        path.write_text(SOURCE, encoding="utf-8")
        fast = ppy.load(path, "pandas_bench")
        namespace: dict[str, object] = {}
        exec(compile(SOURCE, str(path), "exec"), namespace)
        names = [f"e{k}" for k in range(len(EXPRS))]
        plain = type("plain", (), {k: staticmethod(namespace[k]) for k in names})
        texts, charts = [], {}
        for n in args.sizes:
            rows, notes = run(n, fast, plain)
            texts.append(table(n, rows, notes))
            charts[n] = rows
    note = f"pandas {pd.__version__}, pyarrow {pa.__version__}. " + machine_note()
    n = args.sizes[0]
    publish(
        Path(args.out),
        "pandas_fusion",
        "\n\n".join([*texts, note]) + "\n",
        f"pandas Series expressions, n={n:.0e}, 10% nulls, one thread, ms (lower is better)",
        list(LABELS),
        charts[n],
    )


if __name__ == "__main__":
    main()
