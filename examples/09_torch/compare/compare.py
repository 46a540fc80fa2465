"""Print the 8x32 `layer` table: PPy ATen region vs PyTorch eager vs torch.compile.

    python compare.py [--processes 5]

Each program reports its best of five rounds of 20,000 calls (one torch thread);
this runs each in five fresh processes, interleaved, and prints the mean and the
spread of those bests in milliseconds per call, plus each column's ratio to eager.
The PPy program runs through `ppy run` when the installed driver builds regions,
else through `python -m ppy_torch` (the plugin's direct runner); set
PPY_COMPARE_RUNNER to force one ("ppy run" or "python -m ppy_torch").
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = (
    ("PPy ATen region", "layer_bench.ppy"),
    ("PyTorch eager", "layer_eager.py"),
    ("torch.compile", "layer_compile.py"),
)
LINE = re.compile(r"# layer, per call: ([0-9.]+) ms")


def ppy_runner() -> list[str]:
    forced = os.environ.get("PPY_COMPARE_RUNNER")
    if forced:
        words = shlex.split(forced)
        return [sys.executable, *words[1:]] if words[0] == "python" else words
    ppy = shutil.which("ppy") or str(Path(sys.executable).parent / "ppy")
    probe = subprocess.run(
        [ppy, "explain", str(HERE / "layer_bench.ppy")], capture_output=True, text=True, check=False
    )
    if probe.returncode == 0 and "aten" in probe.stdout:
        return [ppy, "run"]
    return [sys.executable, "-m", "ppy_torch"]


def run(command: list[str]) -> tuple[float, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run(command, capture_output=True, text=True, check=True, env=env, cwd=HERE)
    match = LINE.search(out.stdout)
    if match is None:
        raise SystemExit(f"no timing line from {' '.join(command)}:\n{out.stdout}{out.stderr}")
    return float(match.group(1)), out.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=5)
    args = parser.parse_args()
    commands = {
        label: ([*ppy_runner(), file] if file.endswith(".ppy") else [sys.executable, file])
        for label, file in PROGRAMS
    }
    best: dict[str, list[float]] = {label: [] for label, _ in PROGRAMS}
    samples: set[str] = set()
    for _ in range(args.processes):
        for label, _file in PROGRAMS:
            ms, sample = run(commands[label])
            best[label].append(ms)
            samples.add(sample)
    import torch

    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"torch {torch.__version__}; CPython {platform.python_version()}"
    )
    print(f"# PPy runs as: {' '.join(Path(c).name for c in commands[PROGRAMS[0][0]][:-1])}")
    print(f"# outputs agree: {len(samples) == 1} ({', '.join(sorted(samples))})")
    header = "".join(f"{label:>20s}" for label, _ in PROGRAMS)
    print(f"{'':18s}{header}")
    cells = "".join(
        f"{statistics.mean(v):>11.4f} ± {statistics.pstdev(v):.4f}" for v in best.values()
    )
    print(f"{'layer, per call':18s}{cells}")
    eager = min(best["PyTorch eager"])
    ratios = "".join(f"{min(v) / eager:>20.2f}" for v in best.values())
    print(f"{'best / eager best':18s}{ratios}")


if __name__ == "__main__":
    main()
