"""NPBench's NumPy kernels, unmodified, under PPy against NumPy and Numba `@njit`.

    python benchmarks/npbench.py [--suite npbench|numpy_benchmarks] [--annotated]
                                 [--only a,b] [--rounds 5] [--timeout 240] [--out DIR]
                                 [--compare RESULTS/npbench.md]

Each kernel of the vendored corpus (`benchmarks/corpus/npbench`, preset S; or with
`--suite numpy_benchmarks` the kernels of `benchmarks/corpus/numpy_benchmarks` on their
own `#setup:` inputs) runs in its own process, one thread (`OMP_NUM_THREADS`,
`OPENBLAS_NUM_THREADS`, `PPY_NUM_THREADS` = 1 before NumPy loads), three ways on the same
inputs: as written (NumPy), through `ppy.load` of the unmodified file (a cold
`PPY_CACHE_DIR`), and through `numba.njit` of the unmodified function. A kernel that
fails or runs past `--timeout` is a row saying so, not a crash.

Reported per kernel: whether PPy's and Numba's answers (what the kernel returns and
every array argument after the call, which is where NPBench's kernels write) equal
NumPy's bit for bit; whether PPy's fast path ran (`ppy.stats()`: the sites with fast
calls) and how many sites compiled; best time of `--rounds` round-robin rounds
(NumPy, PPy, Numba in turn, each call on fresh copies of the inputs); the first call's
time (PPy: `ppy.load` into a cold cache plus the first call; Numba: its first call).
`--annotated` runs `benchmarks/corpus/npbench_annotated` instead: the same kernels with
their parameters annotated by hand (`_npbench_annotate.py` generates it); with
`--compare FILE` (an unannotated report) its report ends with the two side by side
(`_npbench_compare.py`).

Writes DIR/npbench.md (DIR/npbench_annotated.md, DIR/npbench_numpy_benchmarks.md) and
a chart. Timings come from a shared 2-core machine: best-of-N, noisy to a few percent.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

# Before NumPy (and its BLAS) loads: no import above loads it, every one below is local
# to a function; the workers this process starts inherit the settings.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "PPY_NUM_THREADS"):
    os.environ[_var] = "1"
# glibc serves large blocks by mmap below a threshold it moves as blocks are freed, so
# whether a call's temporaries (and the inputs' fresh copies) page-fault depended on
# which implementation ran before it (log_likelihood's NumPy: 207 or 694 µs by order).
# The workers keep large blocks on the heap: every implementation is timed warm, as in
# a long-running program. Set before the workers start (glibc reads it at start-up).
os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", str(1 << 30))
os.environ.setdefault("MALLOC_TRIM_THRESHOLD_", str(1 << 31))

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
PYPROJECT = '[tool.ppy]\nbackends = ["llvm"]\n'
SUITES = ("npbench", "numpy_benchmarks")
SAME = ("ppy_same", "numba_same")
SLOWER = 1.05  # "slower than NumPy": more than 5% over its time
#: how the report says `site_counts` counts a specialized function (and so that
#: `_npbench_compare` knows a report counted them so)
SPECIALIZED_COUNTS = "those of a function the call ran specialized counted from its specializations"


# -- the kernels -----------------------------------------------------------------------


def kernels(suite: str, annotated: bool) -> dict[str, dict[str, Any]]:
    """name -> what a worker needs to run it (file, function, how to make its inputs)."""
    found: dict[str, dict[str, Any]] = {}
    if suite == "npbench":
        root = CORPUS / ("npbench_annotated" if annotated else "npbench")
        infos = CORPUS / "npbench" / "bench_info"
        for info in sorted(infos.glob("*.json")):
            b = json.loads(info.read_text())["benchmark"]
            folder = CORPUS / "npbench" / "npbench" / "benchmarks" / b["relative_path"]
            kernel = root / "npbench" / "benchmarks" / b["relative_path"]
            found[info.stem] = {
                "file": str(kernel / f"{b['module_name']}_numpy.py"),
                "init_file": str(folder / f"{b['module_name']}.py"),
                "func": b["func_name"],
                "info": b,
            }
        return found
    root = CORPUS / "numpy_benchmarks" / "numpy_benchmarks" / "benchmarks"
    for path in sorted(root.glob("*.py")):
        lines = path.read_text().splitlines()
        setup = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("#setup:")]
        run = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("#run:")]
        if setup and run:
            call = ast.parse(run[0], mode="eval").body
            assert isinstance(call, ast.Call)
            assert isinstance(call.func, ast.Name)
            found[path.stem] = {
                "file": str(path),
                "func": call.func.id,
                "setup": setup[0],
                "args": [ast.unparse(a) for a in call.args],
            }
    return found


def import_file(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_inputs(kernel: dict[str, Any]) -> list[Any]:
    """The kernel's arguments: NPBench's preset S through its `initialize`, or a
    numpy-benchmarks file's own `#setup:` line."""
    import numpy as np

    if "info" not in kernel:
        env: dict[str, Any] = {}
        exec(kernel["setup"], env)  # the corpus's own setup line, as its harness runs it
        return [eval(a, env) for a in kernel["args"]]
    b = kernel["info"]
    env = dict(b["parameters"]["S"])
    if "init" in b:
        init = getattr(import_file(Path(kernel["init_file"]), "npb_init"), b["init"]["func_name"])
        out = init(*[env[a] for a in b["init"]["input_args"]])
        names = b["init"]["output_args"]
        env.update(zip(names, out if len(names) > 1 else (out,), strict=True))
    np.random.seed(42)  # kernels that draw numbers draw the same ones in every run
    return [env[a] for a in b["input_args"]]


def fresh(args: list[Any]) -> list[Any]:
    """Copies of the array arguments: NPBench kernels write into theirs."""
    return [a.copy() if hasattr(a, "copy") and hasattr(a, "dtype") else a for a in args]


def same_bits(got: Any, want: Any) -> bool:
    """Equal bit for bit: arrays by shape, dtype and bytes (a NaN equals the same NaN),
    tuples element by element, scalars as 0-d arrays of their dtype."""
    import numpy as np

    if isinstance(want, tuple | list):
        return (
            isinstance(got, tuple | list)
            and len(got) == len(want)
            and all(same_bits(g, w) for g, w in zip(got, want, strict=True))
        )
    if want is None or got is None:
        return got is want
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape or g.dtype != w.dtype:
        return False
    if w.dtype.hasobject:
        return bool(np.array_equal(g, w))
    return g.tobytes() == w.tobytes()


def answer(fn: Callable[..., Any], args: list[Any]) -> tuple[Any, list[Any]]:
    """(what `fn` returns, the array arguments after the call) on fresh inputs."""
    mine = fresh(args)
    out = fn(*mine)
    return out, [a for a in mine if hasattr(a, "dtype") and hasattr(a, "shape")]


# -- one kernel, in a worker process -----------------------------------------------------


def site_counts(path: Path, module: ModuleType) -> tuple[int, int]:
    """(expression sites, function sites: typed loops, regions) compiled for what the
    kernel's call ran, each place of the source once: the module's own (a cache hit
    here), except that a function the call ran through specializations (observed
    signatures) counts theirs instead of its generic sites, as the annotated copy,
    which has none, counts its typed ones."""
    from ppy_core.cache.records import project_root
    from ppy_core.cache.store import Cache
    from ppy_core.compiler.cached import compile_file, load_manifest

    manifests = {"": load_manifest(compile_file(path).entry)}
    cache = Cache(project_root(str(path)))
    for value in vars(module).values():
        state = getattr(value, "__ppy_specializations__", None)
        for why in getattr(state, "seen", {}).values() if state is not None else ():
            if why.startswith("specialized (") and (entry := cache.lookup(why[13:-1])):
                manifests[why] = load_manifest(entry)
    specialized = {str(m["specialization"]["function"]) for k, m in manifests.items() if k}
    # a place of the source once, however many signatures compiled it (relu of rank 2
    # and of rank 4 is one site, as the annotated copy's one relu of any rank)
    places: tuple[set[Any], set[Any]] = (set(), set())
    for key, manifest in manifests.items():
        for i, kind in enumerate(("expr_sites", "function_sites")):
            places[i].update(
                (r.get("function"), r.get("line"), r.get("col"), r.get("text"))
                for r in manifest.get(kind, [])
                if r.get("unit") is not None and (bool(key) or r.get("function") not in specialized)
            )
    return len(places[0]), len(places[1])


def time_round_robin(
    impls: dict[str, Callable[..., Any]], args: list[Any], rounds: int, budget: float
) -> dict[str, float]:
    """Best seconds per call of each implementation, in turn, on fresh inputs each
    call (copying is not timed). Fast kernels get more rounds (up to 40) within
    `budget` seconds per implementation; slow ones at least 2."""
    best = dict.fromkeys(impls, float("inf"))
    done = 0
    spent = dict.fromkeys(impls, 0.0)
    while True:
        for name, fn in impls.items():
            mine = fresh(args)
            t0 = time.perf_counter()
            fn(*mine)
            dt = time.perf_counter() - t0
            best[name] = min(best[name], dt)
            spent[name] += dt
        done += 1
        worst = max(spent.values())
        if done >= 40 or (done >= rounds and worst > budget) or (done >= 2 and worst > 4 * budget):
            return best


def fast_sites(fn: Callable[..., Any], args: list[Any]) -> tuple[list[str], dict[str, int]]:
    """(sites with fast calls, fallbacks by reason) of one call."""
    import ppy

    ppy.reset_stats()
    answer(fn, args)
    fast, falls = [], {}
    for key, s in ppy.stats().items():
        if int(s.get("fast", 0)):
            fast.append(key.split(":", 1)[-1])
        for reason, n in s.get("fallback", {}).items():
            falls[reason] = falls.get(reason, 0) + int(n)
    return fast, falls


def worker(suite: str, name: str, annotated: bool, rounds: int, result: Path) -> None:
    """Measure one kernel; write its row as JSON into `result` as soon as each part is
    known, so a timeout still leaves what was measured."""
    kernel = kernels(suite, annotated)[name]
    row: dict[str, Any] = {"kernel": name}

    def save() -> None:
        result.write_text(json.dumps(row))

    args = make_inputs(kernel)
    source = Path(kernel["file"])
    with tempfile.TemporaryDirectory(prefix="ppy-npbench-") as tmp:
        folder = Path(tmp)
        os.environ["PPY_CACHE_DIR"] = str(folder / "cache")  # cold: its compile is timed
        (folder / "pyproject.toml").write_text(PYPROJECT)
        copy = folder / source.name
        shutil.copyfile(source, copy)  # the file as vendored, byte for byte
        modname = source.stem
        plain = getattr(import_file(source, f"{modname}_plain"), kernel["func"])
        want, want_arrays = answer(plain, args)
        impls: dict[str, Callable[..., Any]] = {"NumPy": plain}
        try:
            import ppy
            from ppy_numpy._runtime import set_num_threads

            set_num_threads(1)
            t0 = time.perf_counter()
            module = ppy.load(copy, modname)
            ppy_fn = getattr(module, kernel["func"])
            got, got_arrays = answer(ppy_fn, args)
            row["ppy_first_s"] = time.perf_counter() - t0
            row["ppy_same"] = same_bits(got, want) and same_bits(got_arrays, want_arrays)
            row["sites"], row["loops"] = site_counts(copy, module)
            row["fast_sites"], row["fallbacks"] = fast_sites(ppy_fn, args)
            impls["PPy"] = ppy_fn
        except Exception as exc:  # a row, not a crash
            row["ppy_error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
        save()
        try:
            import numba

            jitted = numba.njit(cache=False)(plain)
            t0 = time.perf_counter()
            got, got_arrays = answer(jitted, args)
            row["numba_first_s"] = time.perf_counter() - t0
            row["numba_same"] = same_bits(got, want) and same_bits(got_arrays, want_arrays)
            impls["Numba"] = jitted
        except ImportError:
            row["numba_error"] = "not installed"
        except Exception as exc:  # Numba's typing errors are its answer, reported
            row["numba_error"] = type(exc).__name__
        save()
        times = time_round_robin(impls, args, rounds, budget=1.5)
        row.update({f"t_{k}": v for k, v in times.items()})
        save()


# -- the parent: every kernel in its own process -----------------------------------------


def run_kernel(
    suite: str, name: str, annotated: bool, rounds: int, timeout: float
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ppy-npbench-row-") as tmp:
        result = Path(tmp) / "row.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--suite", suite]
        command += ["--worker", name, "--rounds", str(rounds), "--result", str(result)]
        command += ["--annotated"] if annotated else []
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
            status = "" if proc.returncode == 0 else f"exit {proc.returncode}"
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] if status else []
        except subprocess.TimeoutExpired:
            status, tail = f"timeout {timeout:.0f}s", []
        row = json.loads(result.read_text()) if result.exists() else {"kernel": name}
        row["wall_s"] = time.perf_counter() - t0
        if status:
            row["error"] = f"{status} {tail[0][:100] if tail else ''}".strip()
        return row


def fmt_t(seconds: float | None) -> str:
    if seconds is None:
        return ""
    us = seconds * 1e6
    return f"{us:,.0f}" if us >= 100 else f"{us:.3g}"


def ratio(row: dict[str, Any], impl: str) -> float | None:
    t, base = row.get(f"t_{impl}"), row.get("t_NumPy")
    return t / base if t and base else None


def fast(row: dict[str, Any]) -> bool:
    return bool(row.get("fast_sites")) and "PPy" in {k[2:] for k in row if k.startswith("t_")}


def report(rows: list[dict[str, Any]], title: str, command: str, wall: float) -> str:
    sys.path.insert(0, str(HERE))
    import numpy_fusion as nf

    lines = [
        f"# {title}: PPy vs NumPy and Numba `@njit`",
        "",
        f"Machine: {nf.machine()}.",
        f"Command: `{command}` ({time.strftime('%Y-%m-%d %H:%M %Z')}); {wall:.0f} s in all. "
        "One thread each (`OMP_NUM_THREADS`, `OPENBLAS_NUM_THREADS`, `PPY_NUM_THREADS` = 1).",
        "",
        "µs: best call of round-robin rounds (NumPy, PPy, Numba in turn, fresh inputs each "
        "call; a shared 2-core machine, so a few percent is noise). x: time over NumPy's. "
        "same: the return value and every array argument after the call equal NumPy's bit "
        "for bit. fast: the sites that ran PPy's fast path (`ppy.stats()`); sites/fns: "
        "the expression sites and function sites (typed loops) the module compiled, "
        f"{SPECIALIZED_COUNTS}. "
        "first: PPy's `ppy.load` into a cold cache plus its first "
        "call; Numba's first call (compile included).",
        "",
        "| kernel | NumPy µs | PPy µs | PPy x | same | fast | sites/fns | PPy first s "
        "| Numba µs | Numba x | Numba same | Numba first s | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        px, nx = ratio(r, "PPy"), ratio(r, "Numba")
        fast_cell = ", ".join(r.get("fast_sites", [])) or "no"
        if r.get("fallbacks"):
            fast_cell += f" (fallback {r['fallbacks']})"
        note = r.get("error") or r.get("ppy_error") or ""
        same = {k: "" if k not in r else "yes" if r[k] else "NO" for k in SAME}
        numba_first = f"{r['numba_first_s']:.2f}" if "numba_first_s" in r else ""
        cells = [
            r["kernel"],
            fmt_t(r.get("t_NumPy")),
            fmt_t(r.get("t_PPy")),
            f"{px:.2f}" if px else "",
            same["ppy_same"],
            fast_cell,
            f"{r.get('sites', '')}/{r.get('loops', '')}",
            f"{r['ppy_first_s']:.2f}" if "ppy_first_s" in r else "",
            fmt_t(r.get("t_Numba")),
            f"{nx:.2f}" if nx else r.get("numba_error", ""),
            same["numba_same"].replace("NO", "no"),
            numba_first,
            note,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *summary(rows)]
    return "\n".join(lines) + "\n"


def summary(rows: list[dict[str, Any]]) -> list[str]:
    n = len(rows)
    ppy = [r for r in rows if ratio(r, "PPy")]
    numba = [r for r in rows if ratio(r, "Numba")]
    fast_rows = [r for r in rows if fast(r)]
    slower = [r["kernel"] for r in ppy if (ratio(r, "PPy") or 0) > SLOWER]
    slower_fast = [r["kernel"] for r in fast_rows if (ratio(r, "PPy") or 0) > SLOWER]
    compiled = [r for r in rows if r.get("sites") or r.get("loops")]
    errors = [r["kernel"] for r in rows if r.get("error") or r.get("ppy_error")]

    def med(values: list[float]) -> str:
        return f"{statistics.median(values):.2f}" if values else "n/a"

    return [
        "## Summary",
        "",
        f"- Kernels: {n}; PPy ran {len(ppy)} (errors: {', '.join(errors) or 'none'}).",
        f"- Fast path ran in **{len(fast_rows)}/{n}**; some site or loop compiled in "
        f"{len(compiled)}/{n} ({sum(r.get('sites', 0) for r in rows)} sites, "
        f"{sum(r.get('loops', 0) for r in rows)} function sites: typed loops).",
        f"- PPy's answer bit-identical to NumPy's in {sum(bool(r.get('ppy_same')) for r in rows)}"
        f"/{len(ppy)}; differs in: "
        f"{', '.join(r['kernel'] for r in rows if r.get('ppy_same') is False) or 'none'}.",
        f"- Median PPy/NumPy **{med([ratio(r, 'PPy') or 0 for r in ppy])}x** over all "
        f"kernels, {med([ratio(r, 'PPy') or 0 for r in fast_rows])}x over the fast ones; "
        f"slower than NumPy by more than 5%: {len(slower)} "
        f"({', '.join(slower) or 'none'}), {len(slower_fast)} of them with the fast path "
        f"({', '.join(slower_fast) or 'none'}).",
        f"- Numba compiled **{len(numba)}/{n}**, median Numba/NumPy "
        f"**{med([ratio(r, 'Numba') or 0 for r in numba])}x**; bit-identical to NumPy in "
        f"{sum(bool(r.get('numba_same')) for r in numba)}/{len(numba)}.",
        f"- First call, median: PPy {med([r['ppy_first_s'] for r in ppy if 'ppy_first_s' in r])}"
        f" s (cold cache), Numba {med([r['numba_first_s'] for r in numba])} s.",
    ]


def chart(rows: list[dict[str, Any]], out: Path, stem: str, title: str) -> None:
    sys.path.insert(0, str(HERE))
    import _charts

    shown = [r for r in rows if ratio(r, "PPy")]
    _charts.bar_chart(
        out / f"{stem}.png",
        f"{title}: time over NumPy's (lower is faster; 0 = did not run)",
        [r["kernel"] for r in shown],
        {
            "PPy": [ratio(r, "PPy") or 0.0 for r in shown],
            "Numba": [ratio(r, "Numba") or 0.0 for r in shown],
        },
        log=True,
    )


# -- the cost rule, site by site (`ppy_llvm._cost`) -----------------------------------

#: site -> its expression over x (a float64 array in [0.5, 2)), or a statement over x and
#: y (another) and the name it returns: the rule's cases, the second suite's sites
#: (`log_likelihood`'s three, `euclidean_distance_square`'s square) and NPBench's
#: augmented stores (`data -= mean` in correlation and covariance), which no rule
#: reaches yet (their target is an operand: the store goes through a temporary)
COST_SITES: dict[str, str] = {
    "np.log(x).sum()": "np.log(x).sum()",
    "np.sum(np.exp(x))": "np.sum(np.exp(x))",
    "np.max(np.log(x))": "np.max(np.log(x))",
    "np.max(np.tanh(x))": "np.max(np.tanh(x))",
    "np.mean(np.exp(x))": "np.mean(np.exp(x))",
    "np.sum(np.sin(x))": "np.sum(np.sin(x))",
    "np.sum(np.exp(x) * 2.0)": "np.sum(np.exp(x) * 2.0)",
    "np.sum(np.log(x) * x)": "np.sum(np.log(x) * x)",
    "(x - 0.1) ** 2 / (2 * 1.1 ** 2)": "(x - 0.1) ** 2 / (2 * 1.1**2)",
    "np.exp(-x)": "np.exp(-x)",
    "np.square(x)": "np.square(x)",
    "np.sum(x * x)": "np.sum(x * x)",
    "x -= y": "x -= y; x",
    "x -= 2.0 * y": "x -= 2.0 * y; x",
    "x[:] = x * y + 1.0": "x[:] = x * y + 1.0; x",
}


def cost_rows(sizes: list[int], rounds: int) -> list[dict[str, Any]]:
    """Per site and size: the kernel's time (built with `PPY_COST_RULE=0`) and NumPy's
    (the site's Python), interleaved best-of-`rounds`, and what the rule decided."""
    import numpy as np

    import ppy
    from ppy_core.compiler.cached import compile_file, load_manifest
    from ppy_numpy._runtime import set_num_threads

    set_num_threads(1)
    names = {site: f"site{i}" for i, site in enumerate(COST_SITES)}
    source = "import numpy as np\nimport numpy.typing as npt\n\n" + "".join(
        f"\ndef {names[site]}(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]):\n"
        + "".join(f"    {line.strip()}\n" for line in expr.split(";")[:-1])
        + f"    return {expr.split(';')[-1].strip()}\n\n"
        for site, expr in COST_SITES.items()
    )
    modules, decided = {}, {}
    with tempfile.TemporaryDirectory(prefix="ppy-npbench-cost-") as tmp:
        folder = Path(tmp)
        os.environ["PPY_CACHE_DIR"] = str(folder / "cache")
        (folder / "pyproject.toml").write_text(PYPROJECT)
        for rule in ("1", "0"):
            os.environ["PPY_COST_RULE"] = rule
            path = folder / f"cost_rule_{rule}.py"
            path.write_text(source)
            manifest = load_manifest(compile_file(path).entry)
            modules[rule] = ppy.load(path, path.stem)
            if rule == "1":
                for r in manifest["expr_sites"]:
                    why = " ".join(r.get("reasons", []))
                    decided[r["function"]] = (
                        "Python (E2109)"
                        if "E2109" in why
                        else "compiled"
                        if r["unit"]
                        else "Python"
                    )
        os.environ.pop("PPY_COST_RULE")
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # the same functions, as Python runs them
    plain = {site: namespace[name] for site, name in names.items()}
    rows = []
    for n in sizes:
        x, y = np.random.default_rng(n).uniform(0.5, 2.0, (2, n))
        for site, name in names.items():
            kernel = getattr(modules["0"], name)
            ppy.reset_stats()
            kernel(x.copy(), y)
            ran = any(int(v.get("fast", 0)) for v in ppy.stats().values())
            best = {"kernel": float("inf"), "NumPy": float("inf")}
            for _ in range(rounds):
                for label, fn in (("NumPy", plain[site]), ("kernel", kernel)):
                    t0 = time.perf_counter()
                    fn(x, y)
                    best[label] = min(best[label], time.perf_counter() - t0)
            rows.append(
                {
                    "site": site,
                    "n": n,
                    "t_kernel": best["kernel"],
                    "t_python": best["NumPy"],
                    "kernel_ran": ran,
                    "rule": decided.get(name, "?"),
                }
            )
            print(f"  n={n:<8} {site:<34} x{best['kernel'] / best['NumPy']:.2f} {rows[-1]['rule']}")
    return rows


def cost_report(rows: list[dict[str, Any]], command: str) -> str:
    sys.path.insert(0, str(HERE))
    import numpy_fusion as nf

    lines = [
        "# The cost rule, site by site: the compiled kernel vs the site's Python (NumPy)",
        "",
        f"Machine: {nf.machine()}.",
        f"Command: `{command}` ({time.strftime('%Y-%m-%d %H:%M %Z')}). One thread.",
        "",
        "kernel µs: the site built with the rule off (`PPY_COST_RULE=0`); Python µs: the "
        "same expression as NumPy runs it; interleaved best-of-N calls (a shared 2-core "
        "machine). rule: what `ppy_llvm._cost` decided (E2109: kept Python). "
        "outcome: what a call costs with the rule's decision, over NumPy's time (1.00 where "
        "the site stays Python); slower: the outcome is over 1.05 (a compiled site slower "
        "than NumPy, what the rule exists to prevent); lost: the rule kept Python a kernel "
        "that was faster by more than 5%.",
        "",
        "| site | n | kernel µs | Python µs | kernel x | rule | outcome x | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    slower, lost = [], []
    for r in rows:
        x = r["t_kernel"] / r["t_python"]
        kept = r["rule"].startswith("Python") or not r["kernel_ran"]
        outcome = 1.0 if kept else x
        note = ""
        if outcome > SLOWER:
            note = "slower"
            slower.append(f"`{r['site']}` at {r['n']:.0e}")
        elif kept and x < 2 - SLOWER:
            note = "lost"
            lost.append(f"`{r['site']}` at {r['n']:.0e}")
        lines.append(
            f"| `{r['site']}` | {r['n']:.0e} | {fmt_t(r['t_kernel'])} | {fmt_t(r['t_python'])} "
            f"| {x:.2f}{'' if r['kernel_ran'] else ' (not fast)'} | {r['rule']} | "
            f"{outcome:.2f} | {note} |"
        )
    lines += [
        "",
        f"- Slower than NumPy by more than 5% with the rule's decision: {len(slower)} of "
        f"{len(rows)} rows ({', '.join(slower) or 'none'}).",
        f"- Wins the rule gives up (kept Python, kernel faster by more than 5%): "
        f"{len(lost)} ({', '.join(lost) or 'none'}).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=SUITES, default="npbench")
    parser.add_argument("--annotated", action="store_true", help="the hand-annotated copy")
    parser.add_argument("--only", default="", help="comma-separated kernel names")
    parser.add_argument(
        "--compare", help="an unannotated report (npbench.md) to set beside --annotated's"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per kernel")
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument(
        "--cost", action="store_true", help="the cost rule's per-site table instead"
    )
    parser.add_argument("--sizes", default="1e3,1e4,1e5", help="--cost: array sizes")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.annotated and args.suite != "npbench":
        parser.error("--annotated applies to the npbench suite")
    if args.compare and not args.annotated:
        parser.error("--compare applies to --annotated")
    if args.cost:
        command = "python benchmarks/npbench.py " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        sizes = [int(float(v)) for v in args.sizes.split(",")]
        text = cost_report(cost_rows(sizes, max(args.rounds, 100)), command)
        print(text)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "npbench_cost.md").write_text(text, encoding="utf-8")
        return 0
    if args.worker:
        worker(args.suite, args.worker, args.annotated, args.rounds, Path(args.result))
        return 0
    names = list(kernels(args.suite, args.annotated))
    only = [n for n in args.only.split(",") if n]
    unknown = sorted(set(only) - set(names))
    if unknown:
        parser.error(f"unknown kernels: {', '.join(unknown)}")
    names = [n for n in names if not only or n in only]
    command = "python benchmarks/npbench.py " + " ".join(argv if argv is not None else sys.argv[1:])
    start = time.perf_counter()
    rows = []
    for i, name in enumerate(names, 1):
        row = run_kernel(args.suite, name, args.annotated, args.rounds, args.timeout)
        rows.append(row)
        px, nx = ratio(row, "PPy"), ratio(row, "Numba")
        print(
            f"[{i}/{len(names)} {time.perf_counter() - start:5.0f}s] {name:<26} "
            f"fast={','.join(row.get('fast_sites', [])) or 'no'} "
            f"PPy={f'{px:.2f}x' if px else '-'} Numba={f'{nx:.2f}x' if nx else '-'} "
            f"same={row.get('ppy_same', '-')} {row.get('error') or row.get('ppy_error') or ''}",
            flush=True,
        )
    wall = time.perf_counter() - start
    stem = "npbench" + ("_annotated" if args.annotated else "")
    stem += "" if args.suite == "npbench" else f"_{args.suite}"
    title = {"npbench": "NPBench (preset S)", "numpy_benchmarks": "numpy-benchmarks"}[args.suite]
    title += ", hand-annotated parameters" if args.annotated else ", unannotated as vendored"
    text = report(rows, title, command, wall)
    if args.compare:  # issue 27: what observed signatures compile beside annotations
        sys.path.insert(0, str(HERE))
        from _npbench_compare import comparison

        text += "\n" + comparison(text, Path(args.compare).read_text(), args.compare)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.md").write_text(text, encoding="utf-8")
    chart(rows, out, stem, title)
    wrong = [r["kernel"] for r in rows if r.get("ppy_same") is False]
    if wrong:  # a different answer is a failure, not a measurement
        print(f"PPy's answer differs from NumPy's: {wrong}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
