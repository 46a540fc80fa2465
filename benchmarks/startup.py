"""Start-up: how much later than `python FILE` a compiled program starts.

    python benchmarks/startup.py [--rounds 15] [--out DIR] [--importtime]

Two programs: one importing NumPy and running one fused expression, one importing
no library. Each is run four ways, whole processes, and timed from the outside:

    python FILE          the baseline (the ppy decorators are inert)
    launcher             `ppy build FILE -o APP` once, then `APP/FILE`
    ppy run FILE         the artifact under the cache (built once before timing)
    ppy FILE (hit)       compiled through the cache: a cache hit

Every way is warmed first (cache entries, artifacts, bytecode in a private
PYTHONPYCACHEPREFIX), then the ways are timed in turn, round after round, and the
best of `--rounds` is kept: a busy neighbour on a shared machine costs all alike.
The table gives the best wall time and its difference to `python FILE`, against the
targets (launcher +15 ms, `ppy run` +25 ms, `ppy FILE` hit +40 ms; +10 ms for a
module that imports no library). `--importtime` adds, per way, the modules PPy's
run path imported beyond `python FILE`'s (from `python -X importtime`), largest
first. Writes DIR/startup.md (default benchmarks/results).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

NUMPY_PROGRAM = """\
import numpy as np


def step(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.where(a > b, a * c, b - c)


x = np.arange(8.0)
print(step(x, x[::-1].copy(), x + 1.0).sum())
"""

PLAIN_PROGRAM = """\
import sys


def f(n: int) -> int:
    return n * 2 + 1


print(f(len(sys.argv)))
"""

#: the issue's targets, ms over `python FILE`: (with a library, importing none)
TARGETS = {"launcher": (15, 10), "ppy run": (25, 10), "ppy FILE (hit)": (40, 10)}
WAYS = ("python FILE", "launcher", "ppy run", "ppy FILE (hit)")


def _ppy() -> str:
    """The `ppy` console script beside this interpreter (as a user types it)."""
    script = Path(sys.executable).with_name("ppy")
    return str(script) if script.exists() else ""


def commands(program: Path, app: Path) -> dict[str, list[str]]:
    ppy = [_ppy()] if _ppy() else [sys.executable, "-m", "ppy_core.cli"]
    return {
        "python FILE": [sys.executable, str(program)],
        "launcher": [str(app / program.stem)],
        "ppy run": [*ppy, "run", str(program)],
        "ppy FILE (hit)": [*ppy, str(program)],
    }


def _run(cmd: Sequence[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return done


def time_ways(
    ways: dict[str, list[str]], env: dict[str, str], cwd: Path, rounds: int
) -> dict[str, float]:
    """Best wall seconds of each way, the ways interleaved round by round."""
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(rounds):
        for name, cmd in ways.items():
            start = time.perf_counter()
            subprocess.run(
                cmd,
                env=env,
                cwd=cwd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=True,
            )
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def extra_imports(cmd: Sequence[str], base: set[str], env: dict[str, str], cwd: Path) -> list[str]:
    """Modules `cmd` imports that the baseline does not, with their own import time."""
    done = _run([sys.executable, "-X", "importtime", *_as_python(cmd)], env, cwd)
    rows = []
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s+)(\S+)", line)
        if match and match[4] not in base:
            rows.append((int(match[1]), match[4]))
    rows.sort(reverse=True)
    return [f"{name} {own / 1000:.1f} ms" for own, name in rows]


def _as_python(cmd: Sequence[str]) -> list[str]:
    """`cmd` without its interpreter: a script (launcher, `ppy`) becomes its path."""
    return list(cmd[1:]) if cmd[0] == sys.executable else list(cmd)


def imported(cmd: Sequence[str], env: dict[str, str], cwd: Path) -> set[str]:
    done = _run([sys.executable, "-X", "importtime", *_as_python(cmd)], env, cwd)
    return {m[1] for m in re.finditer(r"import time:.*\|\s+(\S+)$", done.stderr, re.M)}


def measure(
    name: str, source: str, folder: Path, env: dict[str, str], rounds: int, importtime: bool
) -> tuple[list[str], list[str]]:
    """Table rows for one program, and (with `importtime`) what each way adds."""
    program = folder / f"{name}.ppy"
    program.write_text(source)
    # a program last edited a minute ago: a file changed within seconds of its record
    # is not trusted (coarse mtimes) and costs one more full key computation
    os.utime(program, (time.time() - 60, time.time() - 60))
    app = folder / f"{name}.app"
    ways = commands(program, app)
    _run([*ways["ppy FILE (hit)"][:-1], "build", str(program), "-o", str(app)], env, folder)
    outputs = {way: _run(cmd, env, folder).stdout for way, cmd in ways.items()}  # warm all
    if len(set(outputs.values())) != 1:
        raise SystemExit(f"{name}: the ways print different things: {outputs}")
    best = time_ways(ways, env, folder, rounds)
    base = best["python FILE"]
    library = 0 if "numpy" in source else 1
    rows = []
    for way in WAYS:
        delta = (best[way] - base) * 1000
        target = TARGETS.get(way)
        verdict = "" if target is None else f"+{target[library]}"
        mark = "" if target is None else ("met" if delta <= target[library] else "missed")
        rows.append(
            f"| {name} | {way} | {best[way] * 1000:.1f} | "
            f"{'' if way == 'python FILE' else f'{delta:+.1f}'} | {verdict} | {mark} |"
        )
    notes: list[str] = []
    if importtime:
        base_mods = imported(ways["python FILE"], env, folder)
        for way in WAYS[1:]:
            extra = extra_imports(ways[way], base_mods, env, folder)
            notes.append(f"- {name}, {way}: {', '.join(extra[:12]) or 'nothing'}")
    return rows, notes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds (best kept)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    parser.add_argument(
        "--importtime", action="store_true", help="list what each way imports beyond python's"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ppy-startup-") as tmp:
        folder = Path(tmp)
        env = {
            **os.environ,
            "PPY_CACHE_DIR": str(folder / "cache"),
            "PYTHONPYCACHEPREFIX": str(folder / "pycache"),  # bytecode, as installed
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for key in ("PPY_STATS", "PPY_VERIFY", "PPY_FALLBACK"):
            env.pop(key, None)
        table = [
            f"start-up, best of {args.rounds} whole-process runs each (ms), "
            f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
            "",
            "| program | way | best ms | over python | target | |",
            "| --- | --- | ---: | ---: | ---: | --- |",
        ]
        notes: list[str] = []
        for name, source in (("numpy_prog", NUMPY_PROGRAM), ("plain_prog", PLAIN_PROGRAM)):
            print(f"timing {name} ...", file=sys.stderr, flush=True)
            rows, extra = measure(name, source, folder, env, args.rounds, args.importtime)
            table.extend(rows)
            notes.extend(extra)
        if notes:
            table += ["", "imported beyond `python FILE` (own import time, largest first):"]
            table += notes
    text = "\n".join(table) + "\n"
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "startup.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
