"""`ppy.load(path)` and `import ppy` + `import <a .ppy module>` from plain Python;
a module that imports no library loads no plugin (its key and compile import none)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pipeline_harness import VECMATH_ON, Harness, write

HELPER = """\
from vecmath import Vec


def twice_plus(a: Vec, k: float) -> Vec:
    return a * 2.0 + k
"""

PROG = """\
from vecmath import Vec


def f(a: Vec, b: Vec) -> Vec:
    return a * b - b


if __name__ == "__main__":
    raise SystemExit("prog.ppy must not run as __main__ when loaded")
"""

USER = """\
import json
import sys
from pathlib import Path

import ppy
from vecmath import Vec

import helper  # a .ppy module, found through the finder `import ppy` installed

here = Path(__file__).resolve().parent
prog = ppy.load(here / "prog.ppy")
print(helper.twice_plus(Vec([1.0, 2.0]), 0.5))
print(prog.f(Vec([2.0, 3.0]), Vec([4.0, 5.0])), prog.__name__, Path(prog.__file__).name)
print(Path(helper.__file__).name, sys.modules["prog"] is prog)
print(json.dumps({site: data["fast"] for site, data in sorted(ppy.stats().items())}))
"""


@pytest.fixture(scope="module")
def project(harness: Harness) -> Path:
    return write(
        harness.tmp / "load",
        {"pyproject.toml": VECMATH_ON, "helper.ppy": HELPER, "prog.ppy": PROG, "user.py": USER},
    )


def test_load_and_import_of_ppy_modules_from_plain_python(harness: Harness, project: Path) -> None:
    for cwd in (project, harness.tmp):  # the import path is the script's folder, not cwd
        done = harness.python(project / "user.py", cwd=cwd)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0] == "Vec([2.5, 4.5])"
        assert lines[1] == "Vec([4.0, 10.0]) prog prog.ppy"
        assert lines[2] == "helper.ppy True"
        assert json.loads(lines[3]) == {"helper:twice_plus.1": 1, "prog:f.1": 1}


def test_load_of_a_missing_file_is_a_coded_error(harness: Harness, project: Path) -> None:
    code = (
        "import ppy\ntry:\n    ppy.load('nowhere.ppy')\nexcept ppy.Error as exc:\n"
        "    print(exc.code)\n"
    )
    (project / "missing.py").write_text(code)
    done = harness.python(project / "missing.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "E0001\n"


PLAIN = """\
import math
import sys

import ppy


@ppy.opt(2)
def hyp(x: float, y: float) -> float:
    return math.sqrt(x * x + y * y)


print(hyp(3.0, 4.0), len(sys.argv))
"""

PROBE = """\
import json
import sys
from pathlib import Path

from ppy_core.compiler.cached import compile_file
from ppy_core.cache.module_key import module_key

file = Path(sys.argv[1])
key = module_key(file)
compiled = compile_file(file)
loaded = sorted(m for m in sys.modules
                if m.partition(".")[0] in ("vecmath", "ppy_testkit", "numpy", "ppy_numpy"))
print(json.dumps({"loaded": loaded, "plugins": [p.name for p in key.activation.plugins],
                  "components": sorted(key.components), "hit": compiled.hit}))
"""


def test_a_module_importing_no_library_imports_no_plugin(harness: Harness, project: Path) -> None:
    # the project enables vecmath, and the testkit is importable: still nothing loads
    (project / "plain.ppy").write_text(PLAIN)
    (project / "probe.py").write_text(PROBE)
    for _ in range(2):  # cold (compile) and warm (hit)
        done = harness._run(
            [sys.executable, str(project / "probe.py"), str(project / "plain.ppy")],
            project,
            None,
            60,
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert out["loaded"] == [], out
        assert out["plugins"] == []
        assert not [c for c in out["components"] if c.startswith(("plugin:", "backend:"))]
    assert out["hit"] is True
    ran = harness.ppy(project / "plain.ppy")
    assert ran.stdout == "5.0 1\n"


def test_a_plugin_of_a_library_not_imported_stays_out_of_the_key(
    harness: Harness, project: Path
) -> None:
    # pluggy (core's dependency) is a library, but not vecmath's: the enabled vecmath
    # plugin is loaded to learn its claims, and left out of the key and the compile
    (project / "other.ppy").write_text("import pluggy\nimport helper\nprint(pluggy.__name__)\n")
    done = harness._run(
        [sys.executable, str(project / "probe.py"), str(project / "other.ppy")], project, None, 60
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["plugins"] == []
    assert not [c for c in out["components"] if c.startswith(("plugin:", "backend:"))]
