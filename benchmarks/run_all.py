"""Run every benchmark in `benchmarks/`, each in its own process, with progress.

    python benchmarks/run_all.py [--only a,b] [--skip a,b] [--out DIR] [--list]

`make bench` installs `benchmarks/requirements.txt` and runs this. A benchmark is
every top-level `benchmarks/*.py` whose name does not start with `_` (helpers), other
than this runner; nothing has to be registered (see benchmarks/README.md). Each runs
as `python benchmarks/NAME.py --out DIR` (`--out` only where the script takes it),
its output streamed live with a `[i/n NAME]` prefix and kept in DIR/NAME.log. A
benchmark writes DIR/NAME.md (its table) and, if it draws one, DIR/NAME.png; one that
only prints a Markdown table has its output kept as DIR/NAME.md; for a table without
a chart this runner draws one from the table's numeric columns. At the
end DIR/index.md lists every benchmark: status, seconds, files. A failing benchmark
does not stop the others; the exit status is 1 if any failed. A benchmark that cannot
run on this machine (no GPU, a missing tool) says why and exits 77: "skipped".
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SKIPPED = 77  # a benchmark's exit status for "cannot run here" (no GPU, a missing tool)
sys.path.insert(0, str(HERE))

from _charts import chart_markdown, first_table  # noqa: E402  (benchmarks/ is not a package)


def discover(folder: Path = HERE) -> list[Path]:
    """The benchmarks: top-level `*.py` not starting with `_`, this runner excluded."""
    return sorted(
        p
        for p in folder.glob("*.py")
        if not p.name.startswith("_") and p.resolve() != Path(__file__).resolve()
    )


def run_one(script: Path, out: Path, prefix: str) -> tuple[int, float, str]:
    """Run `script`, streaming its output with `prefix`; (exit status, seconds, output)."""
    command = [sys.executable, "-u", str(script)]
    if "--out" in script.read_text(encoding="utf-8"):
        command += ["--out", str(out)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    start = time.perf_counter()
    output: list[str] = []
    with (out / f"{script.stem}.log").open("w", encoding="utf-8") as log:
        log.write("$ " + " ".join(command) + "\n")
        proc = subprocess.Popen(
            command,
            cwd=HERE.parent,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            output.append(line)
            print(f"{prefix} {line}", end="", flush=True)
        status = proc.wait()
    return status, time.perf_counter() - start, "".join(output)


def _verdict(status: int) -> str:
    if status == 0:
        return "ok"
    return "skipped (cannot run here)" if status == SKIPPED else f"failed (exit {status})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated names to run (no .py)")
    parser.add_argument("--skip", default="", help="comma-separated names to leave out")
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument("--list", action="store_true", help="list the benchmarks and stop")
    args = parser.parse_args(argv)
    only = {n for n in args.only.split(",") if n}
    skip = {n for n in args.skip.split(",") if n}
    scripts = [s for s in discover() if (not only or s.stem in only) and s.stem not in skip]
    unknown = (only | skip) - {s.stem for s in discover()}
    if unknown:
        print(f"no such benchmark: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(s.stem for s in scripts))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: list[tuple[str, int, float, list[str]]] = []
    total = time.perf_counter()
    for i, script in enumerate(scripts, 1):
        prefix = f"[{i}/{len(scripts)} {script.stem}]"
        print(f"{prefix} start ({time.perf_counter() - total:.0f} s so far)", flush=True)
        status, seconds, output = run_one(script, out, prefix)
        md, png = out / f"{script.stem}.md", out / f"{script.stem}.png"
        if status == 0 and not md.is_file() and first_table(output):  # it printed its table
            md.write_text(output, encoding="utf-8")
            print(f"{prefix} table kept from its output: {md}", flush=True)
        if status == 0 and md.is_file() and not png.is_file() and chart_markdown(md, png):
            print(f"{prefix} chart drawn from its table: {png}", flush=True)
        files = [p.name for p in (md, png, out / f"{script.stem}.log") if p.is_file()]
        print(f"{prefix} {_verdict(status).upper()} in {seconds:.1f} s", flush=True)
        results.append((script.stem, status, seconds, files))
    lines = [
        f"# Benchmark results ({time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()})",
        "",
        "| benchmark | status | seconds | files |",
        "| --- | --- | ---: | --- |",
    ]
    for name, status, seconds, files in results:
        links = ", ".join(f"[{f}]({f})" for f in files)
        lines.append(f"| {name} | {_verdict(status)} | {seconds:.1f} | {links} |")
    (out / "index.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    failed = [name for name, status, _, _ in results if status not in (0, SKIPPED)]
    skipped = [name for name, status, _, _ in results if status == SKIPPED]
    print(
        f"{len(results)} benchmarks in {time.perf_counter() - total:.0f} s; "
        f"{'failed: ' + ', '.join(failed) if failed else 'none failed'}; "
        f"{'skipped: ' + ', '.join(skipped) + '; ' if skipped else ''}index: {out / 'index.md'}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
