"""`ppy check --strict` names what the run-time checks left unknown (E1026, a note, one
line per thing at the line that caused it); without strict nothing is said, and what
the checks do know (a known decorator, base, module, star import) is never named."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from ppy_core.cli import main
from ppy_core.compiler.check import check_paths

NOTE = re.compile(r"#\s*note\b")

SOURCE = """
import os
import functools
import not_installed_anywhere_xyz  # note
from os.path import *
from also_missing_xyz import thing  # note
from also_missing_xyz import *  # note
from dataclasses import dataclass
from somewhere_unknown_xyz import Base  # note

def register(f):
    return f

@register  # note
def decorated(a):
    return a

@functools.lru_cache
def cached(a):
    return a

@functools.singledispatch  # a library's decorator: not modelled, not named
def dispatched(a):
    return a

class Known:
    @staticmethod
    def make():
        return Known()

    @property
    def size(self):
        return 1

    @size.setter
    def size(self, value):
        pass

class Derived(Base):  # (its import is named: not installed)
    pass

Made = type("Made", (), {})

class FromMade(Made):  # note
    pass

class Mapping(dict):  # a builtin base: not the project's doing
    pass

try:
    from collections.abc import Sequence
except ImportError:
    from collections import Sequence

class Table(Sequence):  # an imported base, with its fallback: not named either
    pass

registry = functools.partial(dict)

@registry.get  # made by a library's call: not named
def lookup(a):
    return a

class FromDerived(Derived):
    pass

class Meta(type):
    pass

class WithMeta(metaclass=Meta):  # note
    pass

@dataclass
class Row:
    a: int

def tagged(cls):
    return cls

@tagged  # note
class Tagged:
    pass

def configure(obj, name, value):
    setattr(obj, name, value)  # note
    setattr(obj, "fixed", value)

globals()["made"] = 1  # note
"""


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def _module(tmp_path: Path) -> Path:
    path = tmp_path / "proj" / "mod.py"
    path.parent.mkdir()
    path.write_text(textwrap.dedent(SOURCE))
    return path


def test_strict_names_each_unknown_once_at_its_line(tmp_path: Path) -> None:
    path = _module(tmp_path)
    report = check_paths([str(path)], strict=True)
    notes = [f for f in report.findings if f.code == "E1026"]
    assert all(f.severity == "note" for f in notes)
    assert all(f.hint for f in notes)
    lines = [f.location.line for f in notes if f.location]
    wanted = [n for n, line in enumerate(path.read_text().splitlines(), 1) if NOTE.search(line)]
    assert sorted(lines) == wanted  # one note per line that made a check stand back
    assert report.errors == sum(1 for f in report.findings if f.severity == "error")


def test_without_strict_nothing_is_named(tmp_path: Path) -> None:
    path = _module(tmp_path)
    report = check_paths([str(path)], strict=False)
    assert not [f for f in report.findings if f.code == "E1026"]
    assert check_paths([str(path)]).findings == report.findings  # (strict = false by default)


def test_notes_are_not_errors_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "clean.py"
    path.write_text("import not_installed_anywhere_xyz\n\nprint(not_installed_anywhere_xyz)\n")
    assert main(["check", "--strict", str(path)]) == 0
    out = capsys.readouterr().out
    assert "note: module `not_installed_anywhere_xyz` is not installed here" in out
    assert "[E1026]" in out
    assert main(["check", str(path)]) == 0
    assert "E1026" not in capsys.readouterr().out
