"""Legal Python from real libraries that `ppy check`'s run-time checks once reported:
each shape beside the error it must still find. Lines marked `# expect: CODE` must be
reported, every other line by nothing."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from ppy_core.compiler.check.raising import runtime_findings

EXPECT = re.compile(r"#\s*expect:\s*(E\d{4})")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def _check(root: Path, files: dict[str, str]) -> None:
    paths = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        paths.append(path)
    checked = [p for p in paths if p.name.startswith("use")]
    found = {
        (Path(f.location.path).name, f.location.line, f.code)
        for f in runtime_findings(checked, (root,))
        if f.location
    }
    wanted = {
        (path.name, number, code)
        for path in checked
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for code in EXPECT.findall(line)
    }
    assert found == wanted


def test_a_dataclass_field_redeclared_in_a_subclass_stays_unchecked(tmp_path: Path) -> None:
    _check(  # (hypothesis's observability records: `type` narrowed in each subclass)
        tmp_path,
        {
            "use_rows.py": """
            from dataclasses import dataclass

            @dataclass(frozen=True)
            class Base:
                type: str
                run_start: float

            @dataclass(frozen=True)
            class Info(Base):
                type: str
                title: str

            Info(type="info", run_start=0.0, title="t")
            Base(type="info", run_start=0.0, title="t")  # expect: E1024
            """,
        },
    )


def test_submodules_of_the_running_pythons_stdlib_that_its_stubs_lack(tmp_path: Path) -> None:
    _check(  # (typeshed's `re` is one file; 3.11's is a package with `_parser`)
        tmp_path,
        {
            "use_regex.py": """
            import re._parser
            from re import _constants
            import json.nonexistent_submodule_xyz  # expect: E1021
            """,
        },
    )


def test_a_package_filled_by_an_import_hook_of_its_own(tmp_path: Path) -> None:
    _check(  # (`tlz`: `from . import _build_tlz` installs a loader filling it from toolz)
        tmp_path,
        {
            "filled/__init__.py": "from . import _build\n",
            "filled/_build.py": """
            import sys

            class Loader:
                pass

            sys.meta_path.append(Loader())
            """,
            "plain/__init__.py": "from . import _helpers\n",
            "plain/_helpers.py": "X = 1\n",
            "use_filled.py": """
            from filled import merge, valmap
            from plain import _helpers
            from plain import merge  # expect: E1022
            """,
        },
    )


def test_a_subpackage_is_not_a_top_level_module(tmp_path: Path) -> None:
    # (hypothesis/extra/django/ imports the real `django`: without a pyproject.toml
    # the project's root is the folder its top package is in, never a package's own)
    from ppy_core.compiler.check import check_paths

    files = {
        "lib/__init__.py": "",
        "lib/extra/__init__.py": "",
        "lib/extra/plugin_xyz/__init__.py": "from lib.extra.plugin_xyz.fields import field\n",
        "lib/extra/plugin_xyz/fields.py": "from plugin_xyz import forms\n\nfield = forms\n",
        "lib/extra/other.py": "from lib.extra.plugin_xyz import nothing_here\n",
    }
    for name, text in files.items():
        path = tmp_path / "proj" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert not (tmp_path / "proj" / "pyproject.toml").exists()
    report = check_paths([str(tmp_path / "proj" / "lib")])
    found = [(Path(f.location.path).name, f.code) for f in report.findings if f.location]
    assert found == [("other.py", "E1022")]
