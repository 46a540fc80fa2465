"""Whole programs, run as a user runs them: `python prog.py` and `ppy prog.py` print
the same bits, and under ppy every site took the fast path (PPY_STATS=1).

The program holds hypothesis-generated expressions twice: as annotated functions, and
inline in `main()` over arrays a NumPy Generator made (typed through the plugin)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _exprtrees import draw_trees, module_source, reduction_kind, render

from ppy_llvm._spec import LOOP_UNARY

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

PPY = shutil.which("ppy", path=str(Path(sys.executable).parent)) or "ppy"
COUNT = 24

MAIN = """

def digest(x):
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()[:16]


def case(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n)
    b = rng.uniform(0.5, 2.0, n)
    c = rng.normal(0.0, 100.0, n)
    s = rng.standard_normal()
    a[::7] = np.nan
    c[::5] = -0.0
    d = rng.uniform(-2.0, 2.0, n)
{calls}


def main():
    for n in (1, 8, 9, 129, 1000, 300_001):
        case(n)


with np.errstate(all="ignore"):
    main()
"""


def program(trees: list[Any]) -> str:
    calls = []
    for i, tree in enumerate(trees):
        if reduction_kind(tree) is not None:  # also over d, which holds no NaN
            calls.append(f"    print({i}, n, digest(f{i}(d, b, c, 0.5)))")
        calls.append(f"    print({i}, n, digest(f{i}(a, b, c, s)))")
        calls.append(f"    print({i}, n, digest({render(tree)}))")
    header = module_source(trees).replace("import numpy", "import hashlib\n\nimport numpy", 1)
    return header + MAIN.replace("{calls}", "\n".join(calls))


def run_both_ways(path: Path, project: Path) -> subprocess.CompletedProcess[str]:
    """`python path` and `ppy path` (PPY_STATS=1, no shadow mode): same stdout, both
    exit 0; the ppy run is returned (its stderr holds the stats table)."""
    env = {k: v for k, v in os.environ.items() if k != "PPY_VERIFY"}
    env["PPY_STATS"] = "1"
    runs = [
        subprocess.run(
            [*cmd, str(path)],
            capture_output=True,
            text=True,
            cwd=project,
            env=env,
            timeout=600,
            check=False,
        )
        for cmd in ([sys.executable], [PPY])
    ]
    plain, fast = runs
    assert plain.returncode == 0, plain.stderr
    assert fast.returncode == 0, fast.stderr
    assert fast.stdout == plain.stdout
    return fast


def test_program_prints_the_same_and_runs_fast(project: Path, proven: dict[str, str]) -> None:
    unary = tuple(f"np.{name}" for name in LOOP_UNARY if proven.get(name) == "ok")
    path = project / "program_exprs.py"
    seed = int(os.environ.get("PPY_NUMPY_TREE_SEED", "4242"))
    trees = draw_trees(unary, COUNT, seed=seed)
    path.write_text(program(trees), encoding="utf-8")
    fast = run_both_ways(path, project)
    rows = re.findall(r"^\s+program_exprs:(\S+)\s+(\d+)\s+(.*)$", fast.stderr, re.M)
    assert rows, fast.stderr
    called = [(site, n, why) for site, n, why in rows if int(n) or why.strip() != "-"]
    assert len(called) == len(trees) * 2, called
    # a NaN (or +-0) max/min is refused by design: NumPy's order decides its bits
    slow = [
        (site, n, why)
        for site, n, why in called
        if why.strip() != "-" and not why.strip().startswith("result: nan/zero")
    ]
    assert not slow, slow


SCRIPT = """\
import hashlib

import numpy as np

rng = np.random.default_rng(7)
a = rng.standard_normal(5000)
b = np.linspace(-2.0, 3.0, 5000)
c = np.ones(5000)
c[::3] = -0.0


def shifted(x):
    return a * x + c


def digest(x):
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()[:16]


print(digest(a * b + np.sin(c)))
print(digest(np.where(a > b, a * c, b - c)))
print(digest(shifted(b)))
print(repr(np.sum(a * b)))
"""


def test_script_style_module_globals_fuse(project: Path) -> None:
    """Arrays bound once at module level are typed through the plugin: expressions over
    them at module level, and in functions reading them, take the fast path."""
    path = project / "script_globals.py"
    path.write_text(SCRIPT, encoding="utf-8")
    fast = run_both_ways(path, project)
    rows = re.findall(r"^\s+script_globals:(\S+)\s+(\d+)\s+(.*)$", fast.stderr, re.M)
    assert len(rows) == 4, fast.stderr
    assert all(int(n) == 1 and why.strip() == "-" for _site, n, why in rows), rows


def test_a_modules_kernels_share_one_library(project: Path, tmp_path: Path) -> None:
    """The llvm backend compiles all of a module's sites into one shared library (one
    link per module, not per site); each site still has its own kernel and fast path."""
    path = project / "script_globals.py"
    path.write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "app"
    env = {k: v for k, v in os.environ.items() if k != "PPY_VERIFY"}
    built = subprocess.run(
        [PPY, "build", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    libraries = sorted((out / "modules" / "__main__").glob("*.so"))
    assert len(libraries) == 1, libraries
    env["PPY_STATS"] = "1"
    ran = subprocess.run(
        [str(out / "script_globals")],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=300,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    rows = re.findall(r"^\s+script_globals:(\S+)\s+(\d+)\s+(.*)$", ran.stderr, re.M)
    assert len(rows) == 4, ran.stderr
    assert all(int(n) == 1 for _s, n, _w in rows), ran.stderr
