"""Valid Python always runs (issue 32 B): expressions nested or chained far past
Python's recursion limit compile (the build runs on a deep stack, the typer memoises
untyped subtrees, the LLVM emitter computes its NaN-order sets once per kernel), and
an internal error while compiling one site leaves that site Python with one E9001
warning while the rest of the module compiles and the program runs.

Each program runs as `python FILE` and as `ppy FILE` in fresh processes; the outputs
must be identical and `PPY_STATS=1` must show the fast path ran.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.needs_llvm

PPY = str(Path(sys.executable).with_name("ppy"))
STATS_ROW = re.compile(r"^\s+(\S+:\S+)\s+(\d+)\s", re.MULTILINE)


def chained(terms: int) -> str:
    """`a*1.0 + a*2.0 + ...`: a left-deep tree `terms` BinOps deep."""
    return " + ".join(f"a*{i}.0" for i in range(1, terms + 1))


def nested(depth: int) -> str:
    """`((a*1.0 + 0.5)*1.0 + 0.5)...`: parentheses `depth` deep."""
    text = "a"
    for _ in range(depth):
        text = f"({text}*1.0 + 0.5)"
    return text


def program(expr: str) -> str:
    return (
        "import numpy as np\n\n"
        f"def f(a: np.ndarray) -> np.ndarray:\n    return {expr}\n\n"
        "print(f(np.linspace(-1.0, 1.0, 7)).tobytes().hex())\n"
    )


def run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPY_")}
    env.update(PPY_CACHE_DIR=os.environ["PPY_CACHE_DIR"], PPY_STATS="1")
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def fast_calls(stderr: str) -> dict[str, int]:
    return {site: int(n) for site, n in STATS_ROW.findall(stderr)}


@pytest.mark.parametrize(
    ("name", "expr"),
    [("chained_200", chained(200)), ("nested_190", nested(190))],
)
def test_deep_and_long_expressions_compile_and_match_python(
    project: Path, name: str, expr: str
) -> None:
    path = project / f"{name}.py"
    path.write_text(program(expr))
    plain = run(sys.executable, str(path), cwd=project)
    assert plain.returncode == 0, plain.stderr
    done = run(PPY, str(path), cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain.stdout  # the same float64 bits
    assert "[E9001]" not in done.stderr
    assert "Traceback" not in done.stderr
    assert fast_calls(done.stderr) == {f"{name}:f.1": 1}


def test_a_chain_of_1000_terms_runs_as_python_with_one_warning(project: Path) -> None:
    """The user's 1,000-term sum (~3,000 operations, past `MAX_SITE_OPS`): it runs and
    prints Python's answer, the site stays Python, one E0010 warning says why."""
    path = project / "chained_1000.py"
    path.write_text(program(chained(1000)))
    plain = run(sys.executable, str(path), cwd=project)
    done = run(PPY, str(path), cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain.stdout
    assert done.stderr.count("[E0010]") == 1, done.stderr
    assert f"{path}:4:12: warning: an expression of " in done.stderr
    assert fast_calls(done.stderr) == {}


def test_the_deepest_tree_python_compiles_runs(project: Path) -> None:
    """A unary chain as deep as Python's own compiler takes (~3,000 levels: far past
    the default recursion limit): the build walks it and the program prints Python's
    answer (the site is longer than MAX_SITE_OPS: one warning, no traceback)."""
    depth = 2_900
    path = project / "deepest.py"
    path.write_text(program("-" * depth + "a"))
    plain = run(sys.executable, str(path), cwd=project)
    if plain.returncode != 0:
        pytest.skip("this Python cannot compile the program either")
    done = run(PPY, str(path), cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain.stdout
    assert done.stderr.count("[E0010]") == 1, done.stderr
    assert "[E9001]" not in done.stderr
    assert "Traceback" not in done.stderr


BROKEN = """\
import numpy as np

def good(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * 2.0 + b

def bad(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sin(a) - b * 3.0

x = np.linspace(0.0, 1.0, 9)
y = np.linspace(1.0, 2.0, 9)
print(good(x, y).tobytes().hex(), bad(x, y).tobytes().hex())
"""

INJECT = """\
import sys
import ppy_core.compiler.frontend.lowering as lowering
import ppy_core.compiler.driver as driver

real = lowering.build_site_ir

def broken(site, registry):
    if site.function == "bad":
        raise ZeroDivisionError("injected")
    return real(site, registry)

driver.build_site_ir = broken
from ppy_core.cli.fast import main
sys.argv = ["ppy", sys.argv[1]]
sys.exit(main())
"""


def test_an_internal_error_in_one_site_is_a_warning_and_the_program_runs(
    project: Path,
) -> None:
    folder = project / "inject"
    folder.mkdir()
    path = folder / "broken.py"
    path.write_text(BROKEN)
    (folder / "inject.py").write_text(INJECT)
    plain = run(sys.executable, str(path), cwd=folder)
    done = run(sys.executable, str(folder / "inject.py"), str(path), cwd=folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain.stdout
    assert done.stderr.count("[E9001]") == 1, done.stderr
    assert f"{path}:7:12: warning: internal compiler error compiling site bad." in done.stderr
    assert "PPY_DEBUG=1" in done.stderr
    assert "Traceback" not in done.stderr
    assert fast_calls(done.stderr) == {"broken:good.1": 1}  # the other site compiled
