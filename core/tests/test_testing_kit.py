"""The contract test kit, `ppy_core.testing`: each check passes on a distribution
that keeps the contract and fails, naming what broke, on one that does not.

Distributions: the test-only `ppy_testkit` (core/tests/testkit: plugin `vecmath`,
backend `pyloop`) given a pyproject.toml, and a throwaway `ppy-probe` whose plugin
`probe` keeps the contract while each of its other entry points breaks it once.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ppy_core import testing

TESTKIT = Path(__file__).resolve().parent / "testkit"
TESTKIT_PYPROJECT = """\
[project]
name = "ppy-testkit"

[project.entry-points."ppy.plugins"]
vecmath = "ppy_testkit:create_plugin"

[project.entry-points."ppy.backends"]
pyloop = "ppy_testkit:create_backend"
"""

PROBE_SOURCE = """\
import os
import types

from ppy_core.interface.plugin import Plugin


def probe():
    try:
        import probelib
    except ImportError:
        return None
    return probelib.VERSION


class ProbePlugin(Plugin):
    name = "probe"
    modules = ("probelib",)

    def fingerprint(self):
        return f"v1:probelib={probe() or 'none'}"

    def detected(self):
        return {"probelib": probe() or "not installed"}


class Unstable(ProbePlugin):
    name = "unstable"

    def fingerprint(self):
        return f"v1:probelib=1.0:pid={os.getpid()}"


class Stubborn(ProbePlugin):
    name = "stubborn"

    def fingerprint(self):
        return "v1:probelib=1.0"


class Odd(ProbePlugin):
    name = "odd"
    modules = ("probelib.sub",)

    def detected(self):
        return {"probelib": 1.0}


class Old(ProbePlugin):
    name = "old"
    interface = 1


def create_plugin():
    return ProbePlugin()


def create_unstable():
    return Unstable()


def create_stubborn():
    return Stubborn()


def create_odd():
    return Odd()


def create_old():
    return Old()


def create_stranger():
    return types.SimpleNamespace(name="stranger", fingerprint=lambda: "v1:stranger")
"""
PROBE_ENTRIES = {
    "probe": "probe_plugin:create_plugin",
    "unstable": "probe_plugin:create_unstable",
    "stubborn": "probe_plugin:create_stubborn",
    "odd": "probe_plugin:create_odd",
    "old": "probe_plugin:create_old",
    "renamed": "probe_plugin:create_plugin",
    "stranger": "probe_plugin:create_stranger",
}
THROWAWAY = ("probe_plugin", "probelib", "fake_ppy_numpy")


@pytest.fixture(autouse=True)
def _forget_throwaway_modules() -> Iterator[None]:
    yield
    for name in [m for m in sys.modules if m.partition(".")[0] in THROWAWAY]:
        del sys.modules[name]


@pytest.fixture
def testkit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_pyproject: Callable[[Path, str], Path]
) -> testing.Distribution:
    """ppy_testkit as a source distribution (its dist-info makes it installed too)."""
    monkeypatch.syspath_prepend(str(TESTKIT))
    return testing.Distribution(make_pyproject(tmp_path / "src", TESTKIT_PYPROJECT), (TESTKIT,))


@pytest.fixture
def make_probe(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make_pyproject: Callable[[Path, str], Path],
    dist_writers: tuple[Callable[..., None], Callable[..., str]],
) -> Callable[[str, Mapping[str, str]], testing.Distribution]:
    """`make_probe(dist, entries)`: distribution `dist` with the plugins `entries` of
    `probe_plugin`, installed (dist-info on sys.path) and in source form, beside its
    library `probelib`; `probe_plugin.eager` imports the library."""
    write_dist, _ = dist_writers

    def make(dist: str, entries: Mapping[str, str]) -> testing.Distribution:
        root = tmp_path / dist
        files = {
            "probe_plugin/__init__.py": PROBE_SOURCE,
            "probe_plugin/eager.py": "import probelib\n",
            "probelib.py": 'VERSION = "1.0"\n',
        }
        write_dist(root, dist, {"ppy.plugins": entries}, files)
        table = "".join(f'{name} = "{value}"\n' for name, value in entries.items())
        make_pyproject(
            root, f'[project]\nname = "{dist}"\n[project.entry-points."ppy.plugins"]\n{table}'
        )
        monkeypatch.syspath_prepend(str(root))
        return testing.Distribution(root)

    return make


@pytest.fixture
def probe(
    make_probe: Callable[[str, Mapping[str, str]], testing.Distribution],
) -> testing.Distribution:
    """`ppy-probe`: plugin `probe` keeps the contract, each other entry breaks it once."""
    return make_probe("ppy-probe", PROBE_ENTRIES)


def fails(check: Callable[..., Any], *args: Any, match: str, **kwargs: Any) -> None:
    with pytest.raises(testing.ContractError, match=match):
        check(*args, **kwargs)


def renamed(dist: testing.Distribution, name: str) -> testing.Distribution:
    """`dist` under the distribution name `name`: a renamed copy of its pyproject.toml."""
    copy = dist.root.parent / f"{dist.root.name}-as-{name}"
    copy.mkdir()
    text = (dist.root / "pyproject.toml").read_text(encoding="utf-8")
    text = re.sub(r'^name = ".*"$', f'name = "{name}"', text, count=1, flags=re.MULTILINE)
    (copy / "pyproject.toml").write_text(text, encoding="utf-8")
    return testing.Distribution(copy, dist.path or (dist.root,))


def test_importing_the_kit_imports_no_pytest_and_no_plugin(
    tmp_path: Path, python_in: Callable[..., Any]
) -> None:
    code = """
        import json, sys
        import ppy_core.testing
        print(json.dumps(sorted(
            m for m in sys.modules
            if m.partition(".")[0] in ("pytest", "_pytest", "numpy", "ppy_testkit", "ppy_numpy")
        )))
    """
    assert python_in(tmp_path, code) == []


def test_distribution_of_a_test_file_is_the_folder_above_tests(tmp_path: Path) -> None:
    dist = testing.Distribution.of(tmp_path / "ppy-x" / "tests" / "test_contract.py")
    assert dist.root == tmp_path.resolve() / "ppy-x"


def test_entry_points_are_read_from_pyproject(testkit: testing.Distribution) -> None:
    assert testkit.name == "ppy-testkit"
    assert testkit.entry_points() == {
        ("plugins", "vecmath"): "ppy_testkit:create_plugin",
        ("backends", "pyloop"): "ppy_testkit:create_backend",
    }
    testing.check_entry_points(testkit, [("plugins", "vecmath"), ("backends", "pyloop")])
    fails(testing.check_entry_points, testkit, [("plugins", "vecmath")], match="'pyloop'")
    fails(testing.check_entry_point, testkit, "plugins", "pyloop", match="not in its pyproject")


@pytest.mark.parametrize(
    ("group", "name", "factory", "kind"),
    [
        ("plugins", "vecmath", "ppy_testkit:create_plugin", "VecmathPlugin"),
        ("backends", "pyloop", "ppy_testkit:create_backend", "PyLoopBackend"),
    ],
)
def test_entry_point_creates_what_it_names(
    testkit: testing.Distribution, group: testing.Group, name: str, factory: str, kind: str
) -> None:
    made = testing.check_entry_point(testkit, group, name, factory=factory)
    assert type(made).__name__ == kind
    fails(testing.check_entry_point, testkit, group, name, factory="x:y", match="not 'x:y'")


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("renamed", "made one called 'probe'"),
        ("stranger", "made a SimpleNamespace, not a Plugin"),
        ("old", "speaks interface 1, the core 2"),
    ],
)
def test_entry_point_that_breaks_the_contract(
    probe: testing.Distribution, name: str, match: str
) -> None:
    fails(testing.check_entry_point, probe, "plugins", name, match=f"ppy-probe plugin '{name}'")
    fails(testing.check_entry_point, probe, "plugins", name, match=match)


def test_claims(testkit: testing.Distribution, probe: testing.Distribution) -> None:
    testing.check_claims(testkit, "vecmath", ("vecmath",))
    fails(testing.check_claims, testkit, "vecmath", ("vecmath", "numpy"), match="claims")
    fails(testing.check_claims, probe, "odd", ("probelib.sub",), match="not top-level")


def test_first_party(
    testkit: testing.Distribution,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist_writers: tuple[Callable[..., None], Callable[..., str]],
    make_pyproject: Callable[[Path, str], Path],
) -> None:
    fails(testing.check_first_party, testkit, "plugins", "vecmath", match="first-party table")
    _, plugin_dist = dist_writers
    root = tmp_path / "fake"
    plugin_dist(root, "ppy-numpy", "numpy", ("numpy",), package="fake_ppy_numpy")
    make_pyproject(
        root,
        '[project]\nname = "ppy-numpy"\n[project.entry-points."ppy.plugins"]\n'
        'numpy = "fake_ppy_numpy:create_plugin"\n',
    )
    monkeypatch.syspath_prepend(str(root))
    fake = testing.Distribution(root)
    testing.check_first_party(fake, "plugins", "numpy")
    testing.check_discovered(fake, "plugins", "numpy")
    other = renamed(fake, "ppy-other")
    fails(testing.check_first_party, other, "plugins", "numpy", match="comes from ppy-numpy")


def test_detected(testkit: testing.Distribution, probe: testing.Distribution) -> None:
    assert testing.check_detected(probe, "plugins", "probe") == {"probelib": "1.0"}
    fails(testing.check_detected, testkit, "plugins", "vecmath", match="detected\\(\\) is empty")
    fails(testing.check_detected, probe, "plugins", "odd", match="not text: {'probelib': 1.0}")


def test_fingerprint(testkit: testing.Distribution, probe: testing.Distribution) -> None:
    assert testing.check_fingerprint(testkit, "plugins", "vecmath", r"v1:vecmath=\w+") == (
        "v1:vecmath=test"
    )
    testing.check_fingerprint(testkit, "backends", "pyloop", "v1:pyloop")
    fails(testing.check_fingerprint, testkit, "plugins", "vecmath", r"v2:.*", match="v2:")
    fails(
        testing.check_fingerprint,
        probe,
        "plugins",
        "unstable",
        r"v1:probelib=1.0:pid=\d+",
        match="in a fresh interpreter",
    )


def test_fingerprint_without_the_library(
    testkit: testing.Distribution, probe: testing.Distribution
) -> None:
    assert testing.check_fingerprint(probe, "plugins", "probe", r"v1:probelib=\S+") == (
        "v1:probelib=1.0"
    )
    blocked = ("probelib",)
    assert testing.check_fingerprint_without(probe, "plugins", "probe", blocked) == (
        "v1:probelib=none"
    )
    fails(testing.check_fingerprint_without, probe, "plugins", "stubborn", blocked, match="=1.0")
    fails(
        testing.check_fingerprint_without,
        testkit,
        "plugins",
        "vecmath",
        ("vecmath",),
        match="without \\['vecmath'\\], fingerprint 'v1:vecmath=test'",
    )


def test_lazy_imports(testkit: testing.Distribution, probe: testing.Distribution) -> None:
    testing.check_lazy_imports(testkit, ("vecmath",))
    testing.check_lazy_imports(testkit, ("vecmath",), fingerprint=True)
    testing.check_lazy_imports(probe, ("probelib",))
    loader = ("ppy_testkit.loader",)  # the backend's runtime part imports vecmath
    fails(testing.check_lazy_imports, testkit, ("vecmath",), modules=loader, match="'vecmath'")
    fails(
        testing.check_lazy_imports,
        probe,
        ("probelib",),
        fingerprint=True,
        match="and their fingerprints imports \\['probelib'\\]",
    )
    eager = ("probe_plugin.eager",)
    fails(testing.check_lazy_imports, probe, ("probelib",), modules=eager, match="probelib")


def test_a_fresh_interpreter_that_fails_says_why(testkit: testing.Distribution) -> None:
    fails(testkit.python, "raise SystemExit('no luck')", match="failed:\nno luck")


def test_discovered(testkit: testing.Distribution, probe: testing.Distribution) -> None:
    testing.check_discovered(testkit, "plugins", "vecmath")
    testing.check_discovered(testkit, "backends", "pyloop")
    testing.check_discovered(probe, "plugins", "probe")
    other = renamed(probe, "ppy-other")
    fails(testing.check_discovered, other, "plugins", "probe", match="installed by ppy-probe")


def test_discovered_skips_what_is_not_installed(
    tmp_path: Path, make_pyproject: Callable[[Path, str], Path]
) -> None:
    root = make_pyproject(
        tmp_path / "nowhere",
        '[project]\nname = "ppy-nowhere"\n[project.entry-points."ppy.plugins"]\n'
        'nowhere = "nowhere_plugin:create_plugin"\n',
    )
    with pytest.raises(pytest.skip.Exception, match="ppy-nowhere is not installed"):
        testing.check_discovered(testing.Distribution(root), "plugins", "nowhere")


def test_the_suite_runs_every_check_once_per_entry(
    make_probe: Callable[[str, Mapping[str, str]], testing.Distribution],
) -> None:
    class Suite(testing.ContractSuite):
        dist = make_probe("ppy-keeper", {"probe": "probe_plugin:create_plugin"})
        entries = (("plugins", "probe", r"v1:probelib=\S+"),)
        libraries = ("probelib",)
        blocked = ("probelib",)
        first_party = False

    calls: list[tuple[Any, ...]] = []
    record = SimpleNamespace(
        fixturenames=["group", "name"],
        parametrize=lambda *args, **kwargs: calls.append((*args, kwargs)),
    )
    suite = Suite()
    suite.pytest_generate_tests(record)
    assert calls == [(["group", "name"], [("plugins", "probe")], {"ids": ["plugins-probe"]})]
    suite.test_entry_points_are_exactly_these()
    suite.test_entry_point_creates_what_it_names("plugins", "probe")
    suite.test_importing_the_package_imports_no_library()
    suite.test_fingerprint_names_the_build_found("plugins", "probe", r"v1:probelib=1\.0")
    suite.test_detected_is_text("plugins", "probe")
    suite.test_installed_metadata_is_discovered("plugins", "probe")
    suite.test_fingerprint_without_the_library_says_none("plugins", "probe")


def test_the_suite_says_what_a_subclass_left_out(probe: testing.Distribution) -> None:
    class Suite(testing.ContractSuite):
        dist = probe
        requires = "no_such_library_here"

    suite = Suite()
    fails(suite.test_entry_point_creates_what_it_names, "plugins", "probe", match="first-party")
    fails(suite.test_fingerprint_without_the_library_says_none, "plugins", "probe", match="blocked")
    with pytest.raises(pytest.skip.Exception, match="no_such_library_here"):
        suite.test_fingerprint_names_the_build_found("plugins", "probe", ".*")


# -- check_dialects ----------------------------------------------------------------------

_DEMO_TEXT = """\
func.func @f(%x: tensor<?xf64>) -> (tensor<?xf64>) {
  %y = demo.twice %x : (tensor<?xf64>) -> tensor<?xf64>
  func.return %y : (tensor<?xf64>) -> ()
}
"""
_CORE_TEXT = _DEMO_TEXT.replace("demo.twice %x", "tensor.neg %x")


def _demo_plugin(dialects: bool = True) -> Any:
    from typing import ClassVar

    from ppy_core.ir import Dialect, Operation, Type, operand, result

    class TwiceOp(Operation):
        name: ClassVar[str] = "demo.twice"
        effects: ClassVar[frozenset[str]] = frozenset({"Pure"})
        source = operand(Type)
        out = result(Type)

    dialect = Dialect("demo", [TwiceOp])
    return SimpleNamespace(name="demo", register_dialects=lambda: [dialect] if dialects else [])


def test_check_dialects_parses_with_the_plugins_dialects() -> None:
    op = testing.check_dialects(_demo_plugin(), _DEMO_TEXT)
    assert [o.name for o in op.walk()].count("demo.twice") == 1


@pytest.mark.parametrize(
    ("dialects", "text", "complaint"),
    [
        (False, _DEMO_TEXT, "register_dialects() returned none"),
        (True, _CORE_TEXT, "parses without the plugin's dialects"),
    ],
)
def test_check_dialects_fails_where_the_dialects_do_not_matter(
    dialects: bool, text: str, complaint: str
) -> None:
    with pytest.raises(testing.ContractError, match=re.escape(complaint)):
        testing.check_dialects(_demo_plugin(dialects), text)


def test_three_ways_agree_and_fail_loudly(tmp_path: Path) -> None:
    from ppy_core import testing

    good = tmp_path / "good.ppy"
    good.write_text("import sys\nprint('sum', sum(range(int(sys.argv[1]))))\nprint('# noise')\n")
    ways = testing.three_ways(good, ("10",))
    assert ways.kept == {way: ["sum 45"] for way in ("python", "ppy", "ppy run")}
    bad = tmp_path / "bad.ppy"
    bad.write_text("raise SystemExit(3)\n")
    with pytest.raises(AssertionError):
        testing.three_ways(bad)
