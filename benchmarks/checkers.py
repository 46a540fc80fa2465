"""`ppy check` against mypy --strict and pyright strict on one corpus, in one run.

The corpus (`benchmarks/check_corpus/`) has files with seeded errors, each marked on its
line with `# expect: CODE`, and clean files. For each tool: which seeded errors it
reports (any finding on that line counts), how many findings it makes on the clean
files (false errors), and its wall time cold (its own cache emptied) and warm.
Then the issue's speed targets: the three-error file (`check_speed/three_errors.py`:
NumPy, torch, pydantic, FastAPI) cold and warm for each tool, and `ppy check --strict
examples/` cold and warm. CPU seconds (user + system) are shown beside wall seconds:
on a loaded machine they say what the tool itself costs.

    python benchmarks/checkers.py          # tools that are not installed are skipped
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "check_corpus"
SPEED = HERE / "check_speed"
EXAMPLES = HERE.parent / "examples"
BIN = Path(sys.executable).parent
LINE = re.compile(r"^(?P<path>[^:\s]+\.py):(?P<line>\d+)(?::\d+)?(?::| -)")


def expected(folder: Path = CORPUS, pattern: str = "seeded_*.py") -> dict[tuple[str, int], str]:
    """(file, line) -> the seeded error's code."""
    found = {}
    for path in sorted(folder.glob(pattern)):
        for number, text in enumerate(path.read_text().splitlines(), 1):
            if "# expect:" in text:
                found[(path.name, number)] = text.rpartition("# expect:")[2].strip()
    return found


def _tool(name: str) -> str | None:
    return shutil.which(name, path=str(BIN)) or shutil.which(name)


def commands(
    cache: Path, target: Path = CORPUS, ppy_args: tuple[str, ...] = ()
) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each tool's command over `target`, with an environment holding its cache."""
    env = dict(os.environ)
    tools: dict[str, tuple[list[str], dict[str, str]]] = {}
    if ppy := _tool("ppy"):
        argv = [ppy, "check", *ppy_args, str(target)]
        tools["ppy check"] = (argv, {**env, "PPY_CACHE_DIR": str(cache / "ppy")})
    if mypy := _tool("mypy"):
        config = cache / "mypy.ini"  # the pydantic plugin on, as its users run mypy
        config.write_text("[mypy]\nplugins = pydantic.mypy\n")
        argv = [
            mypy,
            "--strict",
            "--config-file",
            str(config),
            "--cache-dir",
            str(cache / "mypy"),
            "--no-error-summary",
            "--show-column-numbers",
            str(target),
        ]
        tools["mypy --strict"] = (argv, env)
    if pyright := _tool("pyright"):
        config = cache / "pyrightconfig.json"
        config.write_text('{"typeCheckingMode": "strict", "pythonVersion": "3.11"}')
        tools["pyright strict"] = ([pyright, "-p", str(config), str(target)], env)
    return tools


def run(argv: list[str], env: dict[str, str], cwd: Path = CORPUS) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the tool and its children, its output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout + done.stderr


def findings(output: str, folder: Path = CORPUS) -> set[tuple[str, int]]:
    """(file name, line) of each finding a tool printed."""
    lines = set()
    for text in output.splitlines():
        text = text.strip().replace(str(folder) + "/", "")
        if match := LINE.match(text):
            lines.add((Path(match["path"]).name, int(match["line"])))
    return lines


def corpus_table() -> None:
    seeded = expected()
    print(
        f"corpus: {len(seeded)} seeded errors in {len(list(CORPUS.glob('seeded_*.py')))} files, "
        f"{len(list(CORPUS.glob('clean_*.py')))} clean files"
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (argv, env) in commands(Path(tmp), Path(".")).items():
            cold, _, output = run(argv, env)
            warm, _, output = run(argv, env)
            lines = findings(output)
            found = [key for key in seeded if key in lines]
            false = sorted(k for k in lines if k[0].startswith("clean_"))
            rows.append((name, found, false, cold, warm))
    print(f"\n{'tool':16} {'finds':>7} {'false':>6} {'cold s':>8} {'warm s':>8}  missed")
    for name, found, false, cold, warm in rows:
        missed = ", ".join(f"{seeded[k]}@{k[0]}:{k[1]}" for k in seeded if k not in found)
        print(
            f"{name:16} {len(found):>3}/{len(seeded):<3} {len(false):>6} {cold:>8.2f} "
            f"{warm:>8.2f}  {missed or '-'}"
        )


def _best(times: list[tuple[float, float]]) -> tuple[float, float]:
    """The median run's (wall, CPU)."""
    ordered = sorted(times)
    return ordered[len(ordered) // 2]


def speed_table() -> None:
    seeded = expected(SPEED, "three_errors.py")
    print(
        f"\nspeed: {SPEED.name}/three_errors.py ({len(seeded)} seeded errors); "
        "wall s (CPU s), median of the runs"
    )
    print(f"{'tool':16} {'finds':>7} {'cold':>14} {'warm':>14}")
    target = SPEED / "three_errors.py"
    for name in ("ppy check", "mypy --strict", "pyright strict"):
        colds, warms, output = [], [], ""
        rounds = 3 if name == "ppy check" else 1
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as tmp:
                tools = commands(Path(tmp), target)
                if name not in tools:
                    break
                argv, env = tools[name]
                wall, cpu, output = run(argv, env, SPEED)
                colds.append((wall, cpu))
                for _ in range(5 if name == "ppy check" else 1):
                    wall, cpu, output = run(argv, env, SPEED)
                    warms.append((wall, cpu))
        if not colds:
            continue
        lines = findings(output, SPEED)
        found = sum(1 for key in seeded if key in lines)
        (cw, cc), (ww, wc) = _best(colds), _best(warms)
        print(f"{name:16} {found:>3}/{len(seeded):<3} {cw:>7.2f} ({cc:.2f}) {ww:>7.2f} ({wc:.2f})")
    with tempfile.TemporaryDirectory() as tmp:
        tools = commands(Path(tmp), EXAMPLES, ("--strict",))
        if "ppy check" in tools:
            argv, env = tools["ppy check"]
            cold = run(argv, env, EXAMPLES.parent)
            warms = [run(argv, env, EXAMPLES.parent) for _ in range(5)]
            last = warms[-1][2].strip().splitlines()[-1]
            (ww, wc) = _best([(w, c) for w, c, _ in warms])
            print(
                f"\nppy check --strict examples/: cold {cold[0]:.2f} s ({cold[1]:.2f}), "
                f"warm {ww:.2f} s ({wc:.2f}); {last}"
            )


def main() -> None:
    corpus_table()
    speed_table()
    print(f"\nload average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
