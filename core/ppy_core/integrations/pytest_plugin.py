"""The pytest plugin (entry point `pytest11`, shipped with the core).

    pytest --ppy-packages=mylib,other      # or: ini key  ppy_packages = mylib other

compiles the modules of those packages as the tests import them, installed in
`pytest_configure` (before collection imports the test modules), and ends the run
with one line from `ppy.stats()`:

    ppy: 3 modules compiled, 12 sites, 35120 fast calls, 812 fallbacks (dtype 800, ...)

The finder sits after pytest's assertion rewriting hook: test modules and conftests
stay pytest's, rewritten as always; only the named packages' modules are compiled.
Under `ppy -m pytest` with `[tool.ppy] packages`, or with PPY_PACKAGES set, the
packages are compiled already and the run ends with the same line. Otherwise, without
`--ppy-packages` (or the ini key), the plugin does nothing and imports nothing beyond
this module.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import pytest

_HANDLE = "_ppy_installed"
_REPORT = "_ppy_report"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ppy", "PPy: compile packages' modules as the tests import them")
    group.addoption(
        "--ppy-packages",
        dest="ppy_packages",
        default=None,
        metavar="A,B",
        help="compile the modules of these packages (comma-separated) through ppy's cache",
    )
    parser.addini(
        "ppy_packages",
        "packages whose modules ppy compiles (comma- or space-separated)",
        default="",
    )


def _names(config: pytest.Config) -> list[str]:
    text = config.getoption("ppy_packages") or config.getini("ppy_packages") or ""
    if isinstance(text, list):  # an ini value pytest split
        text = ",".join(text)
    return [n for part in str(text).split(",") for n in part.split() if n]


def _switched_on_elsewhere() -> bool:
    """Whether ppy compiles packages in this process already (`ppy -m pytest` with
    `[tool.ppy] packages`, PPY_PACKAGES): then the run ends with the summary too."""
    import sys

    packages = sys.modules.get("ppy_core.runtime.packages")
    return packages is not None and any(
        isinstance(f, packages.PackageFinder) for f in sys.meta_path
    )


def pytest_configure(config: pytest.Config) -> None:
    names = _names(config)
    if not names:
        setattr(config, _REPORT, _switched_on_elsewhere())
        return
    setattr(config, _REPORT, True)
    import warnings

    import ppy

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        setattr(config, _HANDLE, ppy.install(names))
    for warning in caught:  # unknown or already-imported names: in pytest's summary
        config.issue_config_time_warning(warning.message, stacklevel=2)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if not getattr(config, _REPORT, False):
        return
    from ppy_core.integrations.summary import current

    terminalreporter.write_line(current())


def pytest_unconfigure(config: pytest.Config) -> None:
    handle = getattr(config, _HANDLE, None)
    if handle is not None:
        handle.uninstall()
        setattr(config, _HANDLE, None)


__all__: list[str] = []  # hooks only
