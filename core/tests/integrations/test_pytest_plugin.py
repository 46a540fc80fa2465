"""The pytest plugin (entry point pytest11, ppy_core.integrations.pytest_plugin), run
by real pytest through `pytester` in a fresh interpreter per run."""

from __future__ import annotations

import pytest

from ppy_core.integrations.summary import summary

PACKAGE = {
    "mypkg/__init__.py": "from .core import f\n",
    "mypkg/core.py": "def f():\n    return 2\n",
}

TESTS = """\
import sys
import mypkg
from ppy_core.runtime.compiling import LOADED


def test_compiled():
    assert LOADED == ["mypkg", "mypkg.core"]
    assert __name__ not in LOADED  # test modules stay pytest's


def test_rewritten():
    assert mypkg.f() == 3
"""


@pytest.fixture
def tests(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PPY_CACHE_DIR", str(pytester.path / "cache"))
    monkeypatch.delenv("PPY_PACKAGES", raising=False)
    for name, text in PACKAGE.items():
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_text(text)
    pytester.makepyfile(test_pkg=TESTS)
    return pytester


def test_packages_are_compiled_and_the_run_ends_with_the_summary(tests: pytest.Pytester) -> None:
    done = tests.runpytest_subprocess("--ppy-packages=mypkg,nosuchpkg", "-p", "no:cacheprovider")
    done.assert_outcomes(passed=1, failed=1)
    # pytest's assertion rewriting lives on: the failing assert is explained
    done.stdout.fnmatch_lines(["*assert 2 == 3*", "*where 2 = <function f at *>()*"])
    done.stdout.fnmatch_lines(["*'nosuchpkg' cannot be imported*[[]E3041[]]*"])
    done.stdout.fnmatch_lines(["ppy: 2 modules compiled, 0 sites, 0 fast calls, 0 fallbacks"])


def test_the_ini_key_and_a_conftest_that_imports_the_package_first(
    tests: pytest.Pytester,
) -> None:
    tests.makeini("[pytest]\nppy_packages = mypkg\n")
    tests.makeconftest("import mypkg.core\n")
    done = tests.runpytest_subprocess("-p", "no:cacheprovider")
    done.assert_outcomes(failed=2)  # imported before the hook: nothing compiled
    done.stdout.fnmatch_lines(["*mypkg, mypkg.core of mypkg were imported before*[[]E3042[]]*"])
    done.stdout.fnmatch_lines(["ppy: 0 modules compiled, 0 sites, 0 fast calls, 0 fallbacks"])


def test_without_the_option_the_plugin_does_nothing(tests: pytest.Pytester) -> None:
    tests.makepyfile(
        test_inert="""\
import sys

def test_inert(pytestconfig):
    assert pytestconfig.pluginmanager.has_plugin("ppy")  # loaded, through its entry point
    assert not [f for f in sys.meta_path if type(f).__name__ == "PackageFinder"]
    assert "ppy_core.runtime.packages" not in sys.modules
"""
    )
    done = tests.runpytest_subprocess("test_inert.py", "-p", "no:cacheprovider")
    done.assert_outcomes(passed=1)
    assert not [line for line in done.outlines if line.startswith("ppy:")]


def test_the_summary_line_counts_sites_calls_and_fallbacks_by_reason() -> None:
    stats = {
        "m:a.1": {"fast": 10, "fallback": {"dtype": 3}},
        "m:b.1": {"fast": 5, "fallback": {"shape": 1, "dtype": 1}},
        "m:c.1": {"fast": 0, "fallback": {}},
    }
    assert summary(stats, 1) == (
        "ppy: 1 module compiled, 3 sites, 15 fast calls, 5 fallbacks (dtype 4, shape 1)"
    )
