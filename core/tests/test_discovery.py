"""Discovery and enablement against real entry-point metadata of throwaway distributions.

Each case runs in a fresh interpreter so that `sys.modules` says exactly what was
imported. Discovery is restricted to the throwaway folder (`discover(path=...)`)
so the plugins installed in the test environment do not take part, except in
`test_discover_reads_sys_path`, which uses the real default.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

FAKE_PACKAGES = (
    "foo_plugin",
    "old_plugin",
    "rivala_plugin",
    "rivalb_plugin",
    "fake_ppy_numpy",
    "broken_plugin",
    "fast_backend",
)

ACTIVATE = (
    f"FAKE = {FAKE_PACKAGES!r}\n"
    + """
import json, sys
from ppy_core.project.config import load_config
from ppy_core.interface.discovery import activate, discover
site, project, imported = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
found = discover(path=[site])
act = activate(set(imported) - {""}, load_config(project), found)
print(json.dumps({
    "plugins": [p.name for p in act.plugins],
    "claims": dict(act.claims),
    "codes": [d.code for d in act.diagnostics],
    "messages": [d.render() for d in act.diagnostics],
    "refused": dict(act.refused),
    "imported": sorted(m for m in FAKE if m in sys.modules),
}))
"""
)


def _activate(
    python_in: Callable[..., Any], site: Path, project: Path, imported: str
) -> dict[str, Any]:
    return python_in(site, ACTIVATE, str(site), str(project), imported)


def test_discover_reads_metadata_without_importing(
    fake_dists: Path, python_in: Callable[..., Any]
) -> None:
    code = """
    import json, sys
    from ppy_core.interface.discovery import discover
    found = discover(path=[sys.argv[1]])
    print(json.dumps({
        "plugins": {n: [e.distribution, e.version, e.value, e.first_party, list(e.modules)]
                    for n, e in found.plugins.items()},
        "backends": sorted(found.backends),
        "codes": [d.code for d in found.diagnostics],
        "imported": sorted(m for m in FAKE if m in sys.modules),
    }))
    """
    code = f"FAKE = {FAKE_PACKAGES!r}\n" + textwrap.dedent(code)
    out = python_in(fake_dists, code, str(fake_dists))
    assert out["imported"] == []
    assert out["codes"] == []
    assert out["backends"] == ["fast"]
    assert out["plugins"]["foo"] == ["foo-ppy", "1.0", "foo_plugin:create_plugin", False, []]
    assert out["plugins"]["numpy"] == [
        "ppy-numpy",
        "1.0",
        "fake_ppy_numpy:create_plugin",
        True,
        ["numpy"],
    ]
    assert set(out["plugins"]) == {"foo", "old", "rivala", "rivalb", "numpy", "broken"}


def test_discover_reads_sys_path(fake_dists: Path, python_in: Callable[..., Any]) -> None:
    code = """
    import json
    from ppy_core.interface.discovery import discover
    print(json.dumps(sorted(discover().plugins)))
    """
    assert {"foo", "broken", "old"} <= set(python_in(fake_dists, code))


def test_unnamed_third_party_plugin_is_never_imported(
    fake_dists: Path, python_in: Callable[..., Any], tmp_path: Path
) -> None:
    out = _activate(python_in, fake_dists, tmp_path, "foolib,sharedlib,oldlib,brokenlib")
    assert out["plugins"] == []
    assert out["imported"] == []
    assert out["codes"] == []


def test_enabled_third_party_plugin_is_loaded(
    fake_dists: Path,
    python_in: Callable[..., Any],
    make_pyproject: Callable[..., Path],
    tmp_path: Path,
) -> None:
    project = make_pyproject(tmp_path / "proj", "[tool.ppy.plugins.foo]\nenabled = true\n")
    out = _activate(python_in, fake_dists, project, "")
    assert out["plugins"] == ["foo"]
    assert out["claims"] == {"foolib": "foo"}
    assert out["imported"] == ["foo_plugin"]


def test_two_plugins_claiming_one_module_is_E1901_and_neither_gets_it(
    fake_dists: Path,
    python_in: Callable[..., Any],
    make_pyproject: Callable[..., Path],
    tmp_path: Path,
) -> None:
    project = make_pyproject(
        tmp_path / "proj",
        """\
        [tool.ppy.plugins.rivala]
        enabled = true
        [tool.ppy.plugins.rivalb]
        enabled = true
        """,
    )
    out = _activate(python_in, fake_dists, project, "sharedlib")
    assert out["codes"] == ["E1901"]
    assert "'sharedlib'" in out["messages"][0]
    assert "'rivala' and 'rivalb'" in out["messages"][0]
    assert "sharedlib" not in out["claims"]
    assert out["claims"] == {"alib": "rivala"}  # the rest of its claims stand


def test_plugin_of_another_interface_is_refused_E1903(
    fake_dists: Path,
    python_in: Callable[..., Any],
    make_pyproject: Callable[..., Path],
    tmp_path: Path,
) -> None:
    project = make_pyproject(tmp_path / "proj", "[tool.ppy.plugins.old]\nenabled = true\n")
    out = _activate(python_in, fake_dists, project, "oldlib")
    assert out["plugins"] == []
    assert out["codes"] == ["E1903"]
    assert "interface 1" in out["refused"]["old"]
    assert "interface 2" in out["refused"]["old"]


def test_broken_plugin_is_E1904_and_the_others_keep_working(
    fake_dists: Path,
    python_in: Callable[..., Any],
    make_pyproject: Callable[..., Path],
    tmp_path: Path,
) -> None:
    project = make_pyproject(
        tmp_path / "proj",
        """\
        [tool.ppy.plugins.broken]
        enabled = true
        [tool.ppy.plugins.foo]
        enabled = true
        """,
    )
    out = _activate(python_in, fake_dists, project, "foolib")
    assert out["plugins"] == ["foo"]
    assert out["codes"] == ["E1904"]
    assert "this plugin is broken" in out["refused"]["broken"]
    assert "RuntimeError" in out["messages"][0]
    assert "warning: plugin 'broken'" in out["messages"][0]  # deactivated, not fatal


def test_first_party_plugin_activates_only_when_its_library_is_imported(
    fake_dists: Path, python_in: Callable[..., Any], tmp_path: Path
) -> None:
    assert _activate(python_in, fake_dists, tmp_path, "math,os.path")["imported"] == []
    out = _activate(python_in, fake_dists, tmp_path, "numpy.linalg")
    assert out["plugins"] == ["numpy"]
    assert out["claims"] == {"numpy": "numpy"}
    assert out["imported"] == ["fake_ppy_numpy"]


def test_first_party_plugin_disabled_is_not_imported(
    fake_dists: Path,
    python_in: Callable[..., Any],
    make_pyproject: Callable[..., Path],
    tmp_path: Path,
) -> None:
    project = make_pyproject(tmp_path / "proj", "[tool.ppy.plugins.numpy]\nenabled = false\n")
    out = _activate(python_in, fake_dists, project, "numpy")
    assert out["plugins"] == []
    assert out["imported"] == []


def test_enabled_plugin_that_is_not_installed_is_reported(
    fake_dists: Path,
    python_in: Callable[..., Any],
    make_pyproject: Callable[..., Path],
    tmp_path: Path,
) -> None:
    project = make_pyproject(tmp_path / "proj", "[tool.ppy.plugins.ghost]\nenabled = true\n")
    out = _activate(python_in, fake_dists, project, "")
    assert out["codes"] == ["E1904"]
    assert "'ghost'" in out["messages"][0]


def test_malformed_and_misnamed_and_duplicate_entries(
    tmp_path: Path,
    python_in: Callable[..., Any],
    make_pyproject: Callable[..., Path],
    dist_writers: tuple[Callable[..., None], Callable[..., str]],
) -> None:
    write_dist, plugin_dist = dist_writers
    site = tmp_path / "site"
    write_dist(site, "bad-value", {"ppy.plugins": {"bad": "no_colon_here"}}, {})
    plugin_dist(site, "misnamed-ppy", "other", ("otherlib",), package="misnamed_plugin")
    (site / "misnamed_ppy-1.0.dist-info" / "entry_points.txt").write_text(
        "[ppy.plugins]\nmisnamed = misnamed_plugin:create_plugin\n", encoding="utf-8"
    )
    plugin_dist(site, "twin-a", "twin", ("twinlib",), package="twin_a")
    plugin_dist(site, "twin-b", "twin", ("twinlib",), package="twin_b")
    project = make_pyproject(
        tmp_path / "proj",
        """\
        [tool.ppy.plugins.misnamed]
        enabled = true
        [tool.ppy.plugins.twin]
        enabled = true
        """,
    )
    out = _activate(python_in, site, project, "twinlib")
    assert sorted(out["codes"]) == ["E1904", "E1905", "E1905", "E1906"]
    assert "calls itself 'other'" in out["refused"]["misnamed"]
    assert any("'twin' is registered by twin-a 1.0, twin-b 1.0" in m for m in out["messages"])
    assert out["plugins"] == []


def test_backends_all_enabled_by_default_and_ordered_by_config(
    fake_dists: Path,
    python_in: Callable[..., Any],
    make_pyproject: Callable[..., Path],
    tmp_path: Path,
) -> None:
    code = """
    import json, sys
    from ppy_core.project.config import load_config
    from ppy_core.interface.discovery import discover, load_backends
    found = discover(path=[sys.argv[1]])
    result = load_backends(load_config(sys.argv[2]), found)
    print(json.dumps({"backends": [b.name for b in result.backends],
                      "codes": [d.code for d in result.diagnostics],
                      "refused": dict(result.refused)}))
    """
    out = python_in(fake_dists, code, str(fake_dists), str(tmp_path))
    assert out == {"backends": ["fast"], "codes": [], "refused": {}}
    project = make_pyproject(tmp_path / "proj", '[tool.ppy]\nbackends = ["ghost", "fast"]\n')
    out = python_in(fake_dists, code, str(fake_dists), str(project))
    assert out["backends"] == ["fast"]
    assert out["codes"] == ["E2003"]
    assert out["refused"] == {"ghost": "not installed"}
    project = make_pyproject(tmp_path / "none", "[tool.ppy]\nbackends = []\n")
    assert python_in(fake_dists, code, str(fake_dists), str(project))["backends"] == []


def test_loading_is_cached_per_process(fake_dists: Path, python_in: Callable[..., Any]) -> None:
    code = """
    import json, sys
    from ppy_core.interface.discovery import discover, load
    entry = discover(path=[sys.argv[1]]).plugins["foo"]
    print(json.dumps(load(entry) is load(entry)))
    """
    assert python_in(fake_dists, code, str(fake_dists)) is True


CHECKING_PLUGIN = """\
from ppy_core.interface.plugin import Plugin

class Checking(Plugin):
    name = "checking"
    modules = ("checklib",)

    def validate_options(self, options):
        if "explode" in options:
            raise ValueError("cannot read my own options")
        return {k: "is not an option of 'checking'" for k in options if k != "level"}

def create_plugin():
    return Checking()
"""


def test_options_are_validated_by_the_plugin_at_activation(
    tmp_path: Path,
    python_in: Callable[..., Any],
    make_pyproject: Callable[..., Path],
    dist_writers: tuple[Callable[..., None], Callable[..., str]],
) -> None:
    write_dist, _plugin_dist = dist_writers
    site = tmp_path / "site"
    write_dist(
        site,
        "checking-ppy",
        {"ppy.plugins": {"checking": "checking_plugin:create_plugin"}},
        {"checking_plugin/__init__.py": CHECKING_PLUGIN},
    )
    table = "[tool.ppy.plugins.checking]\nenabled = true\n"
    good = make_pyproject(tmp_path / "good", table + "level = 2\n")
    assert _activate(python_in, site, good, "checklib")["plugins"] == ["checking"]
    bad = make_pyproject(tmp_path / "bad", table + "level = 2\nlevle = 3\n")
    out = _activate(python_in, site, bad, "checklib")
    assert out["plugins"] == []
    assert out["codes"] == ["E1907"]
    assert out["messages"][0].startswith(
        f"{(bad / 'pyproject.toml').resolve()}:4: error: tool.ppy.plugins.checking.levle: "
        "is not an option of 'checking'"
    )
    assert "tool.ppy.plugins.checking.levle" in out["refused"]["checking"]
    broken = make_pyproject(tmp_path / "broken", table + "explode = true\n")
    out = _activate(python_in, site, broken, "checklib")
    assert out["plugins"] == []
    assert out["codes"] == ["E1900"]
    assert "validate_options raised ValueError: cannot read my own options" in out["messages"][0]
