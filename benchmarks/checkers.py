"""`ppy check` against mypy --strict and pyright strict on one corpus, in one run.

The corpus (`benchmarks/check_corpus/`) has files with seeded errors, each marked on its
line with `# expect: CODE`, and clean files. For each tool: which seeded errors it
reports (any finding on that line counts), how many findings it makes on the clean
files (false errors), and its wall time cold (its own cache emptied) and warm.

    python benchmarks/checkers.py          # tools that are not installed are skipped
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "check_corpus"
BIN = Path(sys.executable).parent
LINE = re.compile(r"^(?P<path>[^:\s]+\.py):(?P<line>\d+)(?::\d+)?(?::| -)")


def expected() -> dict[tuple[str, int], str]:
    """(file, line) -> the seeded error's code."""
    found = {}
    for path in sorted(CORPUS.glob("seeded_*.py")):
        for number, text in enumerate(path.read_text().splitlines(), 1):
            if "# expect:" in text:
                found[(path.name, number)] = text.rpartition("# expect:")[2].strip()
    return found


def _tool(name: str) -> str | None:
    return shutil.which(name, path=str(BIN)) or shutil.which(name)


def commands(cache: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each tool's command over the corpus, with an environment holding its cache."""
    env = dict(os.environ)
    tools: dict[str, tuple[list[str], dict[str, str]]] = {}
    if ppy := _tool("ppy"):
        tools["ppy check"] = ([ppy, "check", "."], {**env, "PPY_CACHE_DIR": str(cache / "ppy")})
    if mypy := _tool("mypy"):
        config = cache / "mypy.ini"  # the pydantic plugin on, as its users run mypy
        config.write_text("[mypy]\nplugins = pydantic.mypy\n")
        argv = [mypy, "--strict", "--config-file", str(config), "--cache-dir",
                str(cache / "mypy"), "--no-error-summary", "--show-column-numbers", "."]
        tools["mypy --strict"] = (argv, env)
    if pyright := _tool("pyright"):
        config = cache / "pyrightconfig.json"
        config.write_text('{"typeCheckingMode": "strict", "pythonVersion": "3.11"}')
        tools["pyright strict"] = ([pyright, "-p", str(config), str(CORPUS)], env)
    return tools


def run(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=CORPUS, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, done.stdout + done.stderr


def findings(output: str) -> set[tuple[str, int]]:
    lines = set()
    for text in output.splitlines():
        text = text.strip().replace(str(CORPUS) + "/", "")
        if match := LINE.match(text):
            lines.add((Path(match["path"]).name, int(match["line"])))
    return lines


def main() -> None:
    seeded = expected()
    print(f"corpus: {len(seeded)} seeded errors in {len(list(CORPUS.glob('seeded_*.py')))} files, "
          f"{len(list(CORPUS.glob('clean_*.py')))} clean files")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (argv, env) in commands(Path(tmp)).items():
            cold, output = run(argv, env)
            warm, output = run(argv, env)
            lines = findings(output)
            found = [key for key in seeded if key in lines]
            false = sorted(k for k in lines if k[0].startswith("clean_"))
            rows.append((name, found, false, cold, warm))
    print(f"\n{'tool':16} {'finds':>7} {'false':>6} {'cold s':>8} {'warm s':>8}  missed")
    for name, found, false, cold, warm in rows:
        missed = ", ".join(f"{seeded[k]}@{k[0]}:{k[1]}" for k in seeded if k not in found)
        print(f"{name:16} {len(found):>3}/{len(seeded):<3} {len(false):>6} {cold:>8.2f} "
              f"{warm:>8.2f}  {missed or '-'}")


if __name__ == "__main__":
    main()
