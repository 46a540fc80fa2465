"""Packages by name: `ppy.install`, `[tool.ppy] packages`, `PPY_PACKAGES`.

A package of plain Python (no library: nothing here needs NumPy) is compiled through
the cache; `runtime.compiling.LOADED` names each module a loader ran from a cache
entry. The fast paths of a NumPy package are tested in packages/ppy-numpy/tests."""

from __future__ import annotations

import json
import sys

import pytest
from adoption_harness import Project

from ppy_core.diagnostics import ConfigError
from ppy_core.project.config import parse_config

PACKAGE = {
    "mypkg/__init__.py": """\
        from .core import area
        """,
    "mypkg/core.py": """\
        def area(w, h):
            return w * h + 0.5


        def boom():
            raise ValueError("from the package")
        """,
    "mypkg/extra.py": """\
        X = 1
        """,
}

REPORT = """
import json, sys
from ppy_core.runtime.compiling import LOADED
def report(**more):
    print("REPORT " + json.dumps({"loaded": LOADED, **more}))
"""


def reported(done) -> dict:  # type: ignore[no-untyped-def]
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("REPORT "))
    return json.loads(line[len("REPORT ") :])


def test_install_compiles_the_modules_and_keeps_what_python_gives_them(
    project: Project,
) -> None:
    project.write(PACKAGE)
    done = project.python(
        REPORT
        + """
import importlib, inspect, traceback, warnings
warnings.simplefilter("error")
import ppy
handle = ppy.install(["mypkg"])
import mypkg.core
from ppy_core.runtime.packages import PackageLoader
core = mypkg.core
try:
    core.boom()
except ValueError:
    tb = traceback.format_exc()
first = list(LOADED)
importlib.reload(core)
handle.uninstall()
import mypkg.extra
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # E3042: mypkg is imported by now
    with ppy.install("mypkg") as again:
        inside = again.installed
report(
    first=first,
    area=mypkg.area(3, 4),
    file=core.__file__,
    origin=core.__spec__.origin,
    loader=type(core.__spec__.loader).__name__,
    package=mypkg.__path__[0],
    source=inspect.getsource(core.area),
    tb=tb,
    inside=inside,
    after=again.installed,
    extra_loader=type(mypkg.extra.__spec__.loader).__name__,
)
"""
    )
    out = reported(done)
    core = str(project.root / "mypkg" / "core.py")
    assert out["first"] == ["mypkg", "mypkg.core"]
    assert out["loaded"] == ["mypkg", "mypkg.core", "mypkg.core"]  # reload: compiled again
    assert out["area"] == 12.5
    assert out["file"] == core == out["origin"]
    assert out["loader"] == "PackageLoader"
    assert out["package"] == str(project.root / "mypkg")
    assert out["source"].startswith("def area(w, h):\n    return w * h + 0.5")
    assert f'File "{core}", line 6, in boom' in out["tb"]
    assert 'raise ValueError("from the package")' in out["tb"]  # the source line is shown
    assert out["inside"] is True
    assert out["after"] is False
    assert out["extra_loader"] == "SourceFileLoader"  # after uninstall: Python's own


def test_a_name_that_cannot_be_imported_gets_one_coded_warning(project: Project) -> None:
    project.write(PACKAGE)
    done = project.python(
        REPORT
        + """
import warnings
import ppy
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    ppy.install(["nosuchpkg", "mypkg", "not a name"])
    import mypkg
report(warnings=[str(w.message) for w in caught])
"""
    )
    out = reported(done)
    assert out["loaded"] == ["mypkg", "mypkg.core"]
    assert len(out["warnings"]) == 2, out["warnings"]
    unknown, bad = out["warnings"]
    assert "'nosuchpkg' cannot be imported" in unknown
    assert unknown.endswith("[E3041]")
    assert "'not a name' is not a module name" in bad
    assert bad.endswith("[E3041]")


def test_modules_imported_before_the_hook_are_named_once(project: Project) -> None:
    project.write(PACKAGE)
    done = project.python(
        REPORT
        + """
import warnings
import mypkg.core
import ppy
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    ppy.install(["mypkg"])
import mypkg.extra
report(warnings=[str(w.message) for w in caught])
"""
    )
    out = reported(done)
    assert out["loaded"] == ["mypkg.extra"]  # what is imported after the hook compiles
    [warning] = out["warnings"]
    assert "mypkg, mypkg.core of mypkg were imported before ppy was switched on" in warning
    assert warning.endswith("[E3042]")


def test_a_module_that_fails_to_compile_runs_as_python_after_one_warning(
    project: Project,
) -> None:
    project.write(PACKAGE)
    project.write({"pyproject.toml": "[tool.ppy]\nopt = 9\n"})  # its compile is refused
    done = project.python(
        REPORT
        + """
import warnings
import ppy
ppy.install(["mypkg"])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import mypkg
report(area=mypkg.area(2, 2), warnings=[str(w.message) for w in caught],
       loader=type(mypkg.core.__spec__.loader).__name__)
"""
    )
    out = reported(done)
    assert out["loaded"] == []
    assert out["area"] == 4.5
    assert len(out["warnings"]) == 2  # one per module: mypkg, mypkg.core
    assert all("runs as Python" in w and w.endswith("[E3043]") for w in out["warnings"])
    assert "tool.ppy.opt is 9" in out["warnings"][0]


def test_ppy_packages_switches_it_on_at_the_interpreter_start(project: Project) -> None:
    project.write(PACKAGE)
    code = REPORT + "import mypkg\nreport()"
    out = reported(project.python(code, PPY_PACKAGES="mypkg, nosuchpkg"))
    assert out["loaded"] == ["mypkg", "mypkg.core"]
    # unset: the .pth line looks the variable up and imports nothing of ppy
    plain = project.python("import sys; print(sorted(m for m in sys.modules if 'ppy' in m[:4]))")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.strip() == "[]"


def test_ppy_packages_finds_a_package_on_the_path_set_after_the_start(project: Project) -> None:
    # `python -m` puts the current folder on sys.path after the .pth ran: still found
    project.write({**PACKAGE, "show.py": REPORT + "import mypkg\nreport()\n"})
    done = project.run(sys.executable, "-m", "show", path=False, PPY_PACKAGES="mypkg")
    assert reported(done)["loaded"] == ["mypkg", "mypkg.core"]
    assert "E3041" not in done.stderr
    done = project.python("pass", PPY_PACKAGES="mypkg,not-a-name")
    assert done.returncode == 0
    assert done.stderr.count("[E3041]") == 1, done.stderr  # the bad name, once


def test_tool_ppy_packages_compiles_them_under_ppy_file(project: Project) -> None:
    project.write(PACKAGE)
    project.write(
        {
            "pyproject.toml": '[tool.ppy]\npackages = ["mypkg"]\n',
            "main.py": REPORT + "import mypkg\nreport(area=mypkg.area(1, 1))\n",
        }
    )
    for _ in range(2):  # a fresh compile, then the records and the cache
        out = reported(project.ppy("main.py"))
        assert out["loaded"] == ["mypkg", "mypkg.core"]
        assert out["area"] == 1.5


def test_a_bad_packages_value_is_a_coded_config_error(project: Project, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for value in ("mypkg", ["ok", 3], ["a b"], [""]):
        with pytest.raises(ConfigError) as caught:
            parse_config({"packages": value}, tmp_path / "pyproject.toml")
        assert caught.value.code == "E1950"
        assert "tool.ppy.packages" in caught.value.diagnostic.message
    assert parse_config({"packages": ["a", "b.c", "a"]}, tmp_path).packages == ("a", "b.c")
    project.write({"pyproject.toml": "[tool.ppy]\npackages = [1]\n", "main.py": "print(1)\n"})
    done = project.ppy("main.py")
    assert done.returncode == 2, done.stderr
    assert "[E1950]" in done.stderr
