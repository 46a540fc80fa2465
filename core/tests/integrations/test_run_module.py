"""`ppy -m MODULE [ARGS]`: as `python -m`, the project's modules compiled."""

from __future__ import annotations

import json
import sys

from adoption_harness import Project

SHOW = """\
import json, sys
from ppy_core.runtime.compiling import LOADED
print(json.dumps({
    "argv": sys.argv, "path0": sys.path[0], "name": __name__,
    "spec": __spec__.name, "file": __file__, "loaded": LOADED,
    "main": sys.modules["__main__"].__dict__ is globals(),
}))
"""


def _shown(done) -> dict:  # type: ignore[no-untyped-def]
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_project_module_runs_compiled_as_python_m_runs_it(project: Project) -> None:
    project.write({"tool.py": SHOW, "helper.py": "X = 1\n"})
    ran = _shown(project.ppy("-m", "tool", "a", "--b"))
    plain = _shown(project.run(sys.executable, "-m", "tool", "a", "--b", path=False))
    for key in ("argv", "path0", "name", "spec", "file", "main"):
        assert ran[key] == plain[key], key
    assert ran["argv"] == [str(project.root / "tool.py"), "a", "--b"]
    assert ran["path0"] == str(project.root)
    assert ran["loaded"] == ["__main__"]  # compiled (python -m: nothing is)
    assert plain["loaded"] == []


def test_a_package_runs_its_main_and_the_mform_is_read(project: Project) -> None:
    project.write({"app/__init__.py": "", "app/__main__.py": SHOW})
    ran = _shown(project.ppy("-mapp", "x"))
    plain = _shown(project.run(sys.executable, "-m", "app", "x", path=False))
    assert ran["argv"] == plain["argv"] == [str(project.root / "app" / "__main__.py"), "x"]
    assert ran["spec"] == plain["spec"] == "app.__main__"
    assert ran["name"] == "__main__"


def test_exit_status_and_traceback_are_pythons(project: Project) -> None:
    project.write(
        {"fails.py": "import sys\nif sys.argv[1:] == ['exit']:\n    sys.exit(3)\n1 / 0\n"}
    )
    assert project.ppy("-m", "fails", "exit").returncode == 3
    done = project.ppy("-m", "fails")
    assert done.returncode == 1
    assert "ZeroDivisionError" in done.stderr
    assert f'File "{project.root / "fails.py"}", line 4' in done.stderr


def test_a_library_module_runs_and_packages_are_compiled(project: Project) -> None:
    project.write(
        {
            "pyproject.toml": '[tool.ppy]\npackages = ["mypkg"]\n',
            "mypkg/__init__.py": "def f():\n    return 2\n",
            "tests/test_it.py": (
                "import mypkg\nfrom ppy_core.runtime.compiling import LOADED\n\n"
                "def test_it():\n    assert mypkg.f() == 2\n    assert LOADED == ['mypkg']\n"
            ),
        }
    )
    done = project.ppy("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    # the pytest plugin sees the packages compiled and ends the run with its line
    assert "\nppy: 1 module compiled, 0 sites, 0 fast calls, 0 fallbacks\n" in done.stdout


def test_an_unknown_module_is_a_coded_error(project: Project) -> None:
    done = project.ppy("-m", "no_such_module_here")
    assert done.returncode == 2
    assert "no_such_module_here: no module of that name  [E0004]" in done.stderr
    project.write({"pkg/__init__.py": ""})
    done = project.ppy("-m", "pkg")
    assert done.returncode == 2
    assert "has no __main__ module  [E0004]" in done.stderr
