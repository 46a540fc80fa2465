"""Switching ppy on in an existing NumPy project: a package by name, worker
processes, the pytest plugin, IPython and a Jupyter notebook. Each runs in a fresh
interpreter (this session's throwaway cache is inherited through PPY_CACHE_DIR) and
checks that the fast path ran (`ppy.stats()`) and that the answer is NumPy's, bit for
bit."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

PACKAGE = {
    "fastpkg/__init__.py": "from .ops import blend\n",
    "fastpkg/ops.py": """\
import numpy as np


def blend(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * 0.25 + b * 0.75 - 1.0
""",
}

INPUTS = """\
import numpy as np
a = np.linspace(-3.0, 7.0, 1001)
b = np.cos(a) * 1e3
want = a * 0.25 + b * 0.75 - 1.0  # NumPy's own answer
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _python(root: Path, code: str, **env: str) -> dict:  # type: ignore[type-arg]
    run_env = {k: v for k, v in os.environ.items() if k != "PPY_PACKAGES"}
    run_env.update(PYTHONPATH=str(root), **env)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=root,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def _fast(stats: dict) -> int:  # type: ignore[type-arg]
    return sum(s["fast"] for s in stats.values())


def test_install_compiles_a_numpy_package_onto_its_fast_path(tmp_path: Path) -> None:
    _write(tmp_path, PACKAGE)
    out = _python(
        tmp_path,
        INPUTS
        + """
import json, ppy
ppy.install(["fastpkg"])
import fastpkg
got = fastpkg.blend(a, b)
print(json.dumps({"same": got.tobytes() == want.tobytes(), "stats": ppy.stats(),
                  "summary": ppy.summary()}))
""",
    )
    assert out["same"]
    assert out["summary"] == "ppy: 2 modules compiled, 1 sites, 1 fast calls, 0 fallbacks"
    assert _fast(out["stats"]) == 1
    assert list(out["stats"]) == ["ops:blend.1"]


WORKERS = (
    INPUTS
    + """
import json, multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
import ppy
import fastpkg

if __name__ == "__main__":
    out = {}
    for how in ("spawn", "forkserver"):
        with mp.get_context(how).Pool(1) as pool:
            got = pool.starmap(fastpkg.blend, [(a, b), (b, a)])  # by reference
            stats = pool.apply(ppy.stats)  # the worker's counters
        out[how] = {
            "same": got[0].tobytes() == want.tobytes()
            and got[1].tobytes() == (b * 0.25 + a * 0.75 - 1.0).tobytes(),
            "fast": sum(s["fast"] for s in stats.values()),
        }
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        got = ex.submit(fastpkg.blend, a, b).result()
        stats = ex.submit(ppy.stats).result()
    out["executor"] = {"same": got.tobytes() == want.tobytes(),
                       "fast": sum(s["fast"] for s in stats.values())}
    out["parent"] = sum(s["fast"] for s in ppy.stats().values())
    print(json.dumps(out))
"""
)


def test_worker_processes_run_the_compiled_function_they_are_sent(tmp_path: Path) -> None:
    _write(tmp_path, {**PACKAGE, "driver.py": WORKERS})
    run_env = {**os.environ, "PYTHONPATH": str(tmp_path), "PPY_PACKAGES": "fastpkg"}
    done = subprocess.run(
        [sys.executable, "driver.py"],
        cwd=tmp_path,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["spawn"] == {"same": True, "fast": 2}
    assert out["forkserver"] == {"same": True, "fast": 2}
    assert out["executor"] == {"same": True, "fast": 1}
    assert out["parent"] == 0  # the calls ran in the workers


def test_the_pytest_plugin_reports_the_fast_calls_and_the_fallbacks(
    pytester: pytest.Pytester,
) -> None:
    _write(pytester.path, PACKAGE)
    pytester.makepyfile(
        test_blend=INPUTS
        + """
import fastpkg


def test_fast():
    for _ in range(3):
        assert fastpkg.blend(a, b).tobytes() == want.tobytes()


def test_float32_falls_back():
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    got = fastpkg.blend(a32, b32)
    assert got.tobytes() == (a32 * 0.25 + b32 * 0.75 - 1.0).tobytes()
"""
    )
    done = pytester.runpytest_subprocess("--ppy-packages=fastpkg", "-p", "no:cacheprovider")
    done.assert_outcomes(passed=2)
    done.stdout.fnmatch_lines(["ppy: 2 modules compiled, 1 sites, 3 fast calls, 1 fallbacks (*1)"])


SHELL = (
    INPUTS
    + """
import json, io, contextlib
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.user_ns.update(a=a, b=b)
shell.run_cell("%load_ext ppy")
first = shell.run_cell('''
import numpy as np
def f(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x * 0.25 + y * 0.75 - 1.0
f(a, b)''')
second = shell.run_cell('''
def g(x: np.ndarray) -> np.ndarray:
    return x * x - 2.0
r = g(a)''')
third = shell.run_cell("f(a, b)")  # f keeps its own site after g's cell
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    waited = shell.run_cell("import asyncio\\nawait asyncio.sleep(0)\\nf(a, b)")  # as Python
explain = io.StringIO()
with contextlib.redirect_stdout(explain):
    shell.run_cell("%ppy_explain")
import ppy
print(json.dumps({
    "first": first.result.tobytes() == want.tobytes(),
    "second": shell.user_ns["r"].tobytes() == (a * a - 2.0).tobytes(),
    "third": third.result.tobytes() == want.tobytes(),
    "errors": [str(c.error_in_exec) for c in (first, second, third) if c.error_in_exec],
    "fast": {k.split(":")[1]: s["fast"] for k, s in ppy.stats().items()},
    "explain": explain.getvalue(),
    "waited": waited.result.tobytes() == want.tobytes(),
    "warned": [str(w.message) for w in caught],
}))
"""
)


def test_ipython_cells_are_compiled_and_keep_their_own_sites(tmp_path: Path) -> None:
    pytest.importorskip("IPython")
    out = _python(tmp_path, SHELL)
    assert out["errors"] == []
    assert out["first"]
    assert out["second"]
    assert out["third"]
    assert out["fast"] == {"f.1": 3, "g.1": 1}  # (the awaiting cell's call of f too)
    assert out["waited"]
    [warned] = out["warned"]
    assert "this cell is not compiled, it runs as Python: SyntaxError" in warned
    assert warned.endswith("[E3043]")
    assert "x * x - 2.0  -> compiled by llvm" in out["explain"]  # the last cell with sites


def test_a_notebook_run_by_a_real_kernel_compiles_its_cells(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    cells = [
        "%load_ext ppy",
        INPUTS + "def f(x: np.ndarray, y: np.ndarray) -> np.ndarray:\n"
        "    return x * 0.25 + y * 0.75 - 1.0",
        "print(f(a, b).tobytes() == want.tobytes())",
        "import ppy\nprint({k.split(':')[1]: s['fast'] for k, s in ppy.stats().items()})",
        "%ppy_explain",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()
    text = ["".join(o.get("text", "") for o in c.outputs) for c in notebook.cells]
    assert text[2] == "True\n"
    # cell 2's two module-level sites (b, want) ran once, and f's, called by cell 3
    assert ast.literal_eval(text[3]) == {"<module>.1": 1, "<module>.2": 1, "f.3": 1}
    assert "x * 0.25 + y * 0.75 - 1.0  -> compiled by llvm" in text[4]
