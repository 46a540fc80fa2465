"""`ppy check`'s findings of what raises when its line runs, in unannotated code: names
no scope defines (E1020), imports of modules (E1021) and names (E1022) that do not
exist, module attributes that do not exist (E1023), calls whose arguments do not bind
(E1024). Every error class beside its negative twins: the legal Python around it.

Each file below marks the lines that must be reported with `# expect: CODE`; every
other line must be reported by nothing."""

from __future__ import annotations

import re
import textwrap
import time
from pathlib import Path

import pytest

from ppy_core.compiler.check import check_file, check_paths, raising
from ppy_core.compiler.check.raising import runtime_findings

EXPECT = re.compile(r"#\s*expect:\s*(E\d{4})")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def _project(root: Path, files: dict[str, str]) -> list[Path]:
    paths = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        paths.append(path)
    return paths


def _assert_marked(root: Path, files: dict[str, str]) -> None:
    paths = [p for p in _project(root / "proj", files) if p.suffix == ".py"]
    found = {
        (Path(f.location.path).relative_to(root / "proj").as_posix(), f.location.line, f.code)
        for f in runtime_findings(paths, (root / "proj",))
        if f.location
    }
    wanted = set()
    for path in paths:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for code in EXPECT.findall(line):
                wanted.add((path.relative_to(root / "proj").as_posix(), number, code))
    assert found == wanted


def test_undefined_names_and_their_legal_twins(tmp_path: Path) -> None:
    _assert_marked(
        tmp_path,
        {
            "mod.py": """
            import os
            from os.path import *
            try:
                import json
            except ImportError:
                json = None
            x = undefined_name + 1  # expect: E1020
            here = (__file__, __name__, __doc__, len, WindowsError, join, json)
            if os.environ.get("A"):
                branch = 1
            print(branch)  # defined on one path: not flagged
            counter = 0

            def bump():
                global counter, made
                counter += 1
                made = 2
                return made

            def helper():
                return compute_it(1)  # expect: E1020

            def closure():
                total = 0
                def inner():
                    nonlocal total
                    total += 1
                    return total, later
                return inner

            later = 3

            class K:
                size = 4
                doubled = size * 2
                items = [i for i in range(size)]  # the first iterable sees the class
                copies = [size for _ in range(3)]  # expect: E1020
                def method(self):
                    return size  # expect: E1020
                def sup(self):
                    return super().sup, __class__

            squares = [q * q for q in range(3)]
            leaked = q  # expect: E1020
            if any((hit := n) > 1 for n in range(3)):
                print(hit)
            try:
                unicode
            except NameError:
                unicode = str
            if sys_version_info_PY2 := False:
                pass
            f = lambda a, *b, **c: (a, b, c, made)
            del later
            match here:
                case (first, *rest):
                    print(first, rest)
                case {"k": v, **others}:
                    print(v, others)
            """,
            "annotated.py": """
            from __future__ import annotations

            def typed(x: NotImported) -> AlsoNot:
                y: Local = x
                return y
            """,
            "plain.py": """
            def typed(x: NotImported):  # expect: E1020
                y: Local = x
                return y
            """,
            "star.py": """
            from not_installed_anywhere_xyz import *
            print(anything_goes)
            """,
            "dunder_all.py": """
            __all__ = ["present", "absent"]  # expect: E1020
            present = 1
            """,
            "pkg/__init__.py": """
            __all__ = ["sub", "thing"]
            thing = 1
            """,
            "pkg/sub.py": "",
        },
    )


def test_the_class_scope_hint(tmp_path: Path) -> None:
    paths = _project(
        tmp_path,
        {"m.py": "class K:\n    size = 1\n    def m(self):\n        return size\n"},
    )
    (finding,) = runtime_findings(paths, (tmp_path,))
    assert finding.code == "E1020"
    assert "`self.size`" in finding.hint
    assert "K.size" in finding.hint


def test_imports_of_modules_and_names_that_do_not_exist(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    # a C extension without stubs and a namespace package: what they hold is unknown
    (tmp_path / "proj" / "ext.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    (tmp_path / "proj" / "space").mkdir()
    _assert_marked(
        tmp_path,
        {
            "pkg/__init__.py": "from .sub import Name\n",
            "pkg/sub.py": "class Name: pass\nhelper = 1\n",
            "pkg/lazy.py": "def __getattr__(name):\n    return name\n",
            "pkg/use.py": """
            from pkg.sub import Name, helper
            from pkg.sub import Missing  # expect: E1022
            from pkg import sub, Name as N
            from . import sub as again
            from .sub import Nope  # expect: E1022
            from pkg.lazy import anything
            import pkg.nosuch  # expect: E1021
            from pkg.nothere import x  # expect: E1021
            import json.nothere  # expect: E1021
            from collections import OrderedDictx  # expect: E1022
            from collections import OrderedDict, abc
            from os import path, getcwd
            from tty import tcgetattr  # the stub leaves it out; tty.py star-imports termios
            import cPickle  # expect: E1021
            sys_version = (3, 11)
            if sys_version >= (3,):
                import pickle
            else:
                import cPickle
            import not_installed_anywhere_xyz.sub
            from not_installed_anywhere_xyz import y
            from ext import whatever
            from space import something
            try:
                from pkg.sub import Optional
            except ImportError:
                from collections import Fallback
                Optional = None

            def later():
                from pkg.sub import Inner  # expect: E1022
                return Inner
            """,
        },
    )


def test_module_attributes_that_do_not_exist(tmp_path: Path) -> None:
    _assert_marked(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/sub.py": "value = 1\n",
            "pkg/lazy.py": "def __getattr__(name):\n    return name\n",
            "pkg/made.py": "def _make():\n    g = globals()\n    g['add'] = len\n_make()\n",
            "use.py": """
            import os
            import pkg.made
            from pkg.made import add
            pkg.made.add, add  # made at import time through globals() (as pyarrow.compute)
            import os.path
            import tty
            import pkg.sub as s
            import pkg.lazy
            from pkg import sub

            os.getcwdx()  # expect: E1023
            os.path.joinx("a")  # expect: E1023
            s.missing  # expect: E1023
            sub.value, s.value, os.getcwd(), os.path.join("a"), os.sep, tty.tcgetattr
            pkg.lazy.whatever
            s.patched  # written below: monkeypatching makes it exist
            s.patched = 2
            if hasattr(os, "fork_server"):
                os.fork_server()
            try:
                os.not_everywhere()
            except AttributeError:
                pass
            s.__spec__

            def shadow(os):
                return os.anything
            """,
        },
    )


def test_calls_whose_arguments_do_not_bind(tmp_path: Path) -> None:
    _assert_marked(
        tmp_path,
        {
            "lib.py": """
            import functools
            from dataclasses import dataclass, field

            def plain(a, b=1, *, c, d=2):
                return a

            def flexible(a, *args, **kwargs):
                return a

            def posonly(a, /, b):
                return a

            def register(f):
                return f

            @register
            def decorated(a):
                return a

            def wrapping(f):
                @functools.wraps(f)
                def wrapper(*args, **kwargs):
                    return f(*args, **kwargs)
                return wrapper

            class Point:
                def __init__(self, x, y=0):
                    self.x, self.y = x, y

                def move(self, dx, *, dy=0):
                    return Point(self.x + dx, self.y + dy)

                @staticmethod
                def origin():
                    return Point(0)

                @classmethod
                def make(cls, x):
                    return cls(x)

                def use(self):
                    self.move(1, dy=2)
                    self.move(1, 2)  # expect: E1024
                    self.move(dz=1, dx=1)  # expect: E1024
                    self.origin()
                    self.origin(1)  # expect: E1024
                    self.make(1)
                    self.make()  # expect: E1024

            class Base:
                def run(self, a):
                    return self.step(a, a)

                def step(self, a):
                    return a

            class Child(Base):
                def step(self, a, b):
                    return a + b

            class Empty:
                pass

            class Failure(Exception):
                pass

            class Meta(type):
                pass

            class WithMeta(metaclass=Meta):
                pass

            class Made:
                def __new__(cls, value):
                    return super().__new__(cls)

            @dataclass
            class Row:
                name: str
                size: int = 0
                tags: list = field(default_factory=list)
                cache: dict = field(init=False, default_factory=dict)

            @dataclass(kw_only=True)
            class Options:
                verbose: bool = False
            """,
            "use.py": """
            from lib import (plain, flexible, posonly, decorated, wrapping, Point, Empty,
                             Failure, WithMeta, Made, Row, Options)
            import lib
            from unknown_library_xyz import Base

            plain(1, c=3)
            plain(1, 2, 3, c=3)  # expect: E1024
            plain(1, e=3, c=1)  # expect: E1024
            plain(1)  # expect: E1024
            plain(1, a=1, c=1)  # expect: E1024
            lib.plain(1, 2, c=3, d=4)
            lib.plain(c=1)  # expect: E1024
            args, kwargs = (1,), {"c": 1}
            plain(*args, **kwargs)
            plain(*args, c=1)
            plain(1, **kwargs)
            flexible(1, 2, 3, anything=4)
            flexible()  # expect: E1024
            posonly(1, 2)
            posonly(1, b=2)
            posonly(a=1, b=2)  # expect: E1024
            decorated(1, 2, 3)
            wrapping(print)(1, 2)
            Point(1)
            Point(1, 2, 3)  # expect: E1024
            Point(z=1)  # expect: E1024
            p = Point(1)
            p.move(1, dy=1)
            p.move()  # expect: E1024
            Empty()
            Empty(1)  # expect: E1024
            Failure("message", 2)
            WithMeta(1, 2)
            Made(1)
            Made()  # expect: E1024
            Row("a")
            Row("a", 1, [])
            Row("a", 1, [], {})  # expect: E1024
            Row(size=1)  # expect: E1024
            Options(verbose=True)
            Options(True)  # expect: E1024

            class Sub(Base):
                def __init__(self, x):
                    super().__init__()

            Sub()  # an unknown base (its metaclass, its __new__): unchecked
            Sub(1)

            def shadowed(plain):
                return plain(1, 2, 3, 4)
            """,
        },
    )


def test_findings_come_from_the_cache_when_nothing_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _project(tmp_path, {"a.py": "import os\nos.nope\nx = missing\n"})
    first = runtime_findings(paths, (tmp_path,))
    assert sorted(f.code for f in first) == ["E1020", "E1023"]

    def refuse(*args: object) -> None:
        raise AssertionError("checked again")

    monkeypatch.setattr(raising, "_check", refuse)
    assert runtime_findings(paths, (tmp_path,)) == first
    time.sleep(0.01)
    paths[0].write_text("import os\nos.getcwd()\n")  # changed: checked again
    monkeypatch.undo()
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    assert runtime_findings(paths, (tmp_path,)) == []


def test_ppy_check_reports_an_undefined_name_in_unannotated_code(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text("x = undefined_name + 1\n")
    report = check_paths([str(path)])
    assert [(f.location.line, f.code) for f in report.findings if f.location] == [(1, "E1020")]
    assert report.errors == 1


def test_a_long_chain_of_untyped_operands_checks_in_linear_time(tmp_path: Path) -> None:
    """An unannotated `a + b + ... ` of 40 names: each operand is typed once, where
    the typer's reader asked its operands again at every level (exponential)."""
    names = [f"v{i}" for i in range(40)]
    body = "".join(f"    {n} = g()\n" for n in names)
    path = tmp_path / "chain.py"
    path.write_text(f"def g():\n    pass\n\ndef f():\n{body}    return {' + '.join(names)}\n")
    start = time.perf_counter()
    findings, _ = check_file(path)
    assert findings == []
    assert time.perf_counter() - start < 5.0


def test_a_forked_check_finds_what_checking_here_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From FORK_FROM files the checks run in a child process beside the per-file
    typing; its findings, sent back through a pipe, are the ones found in-process."""
    files = {f"m{i}.py": f"import os\nos.nope{i}\nx = missing{i}\n" for i in range(9)}
    paths = _project(tmp_path, files)
    here, _ = raising._check(paths, (tmp_path,))
    monkeypatch.setattr(raising, "FORK_FROM", 8)
    wait = raising.start(paths, (tmp_path,))
    assert wait.__name__ == "wait"  # (the forked path: `here` is the in-process one)
    assert sorted(map(str, wait())) == sorted(map(str, here))
    assert len(here) == 18


def test_attributes_an_instance_of_a_project_class_cannot_have(tmp_path: Path) -> None:
    _assert_marked(
        tmp_path,
        {
            "shapes.py": """
            import functools

            class Shape:
                sides = 0

                def __init__(self, name):
                    self.name = name

                def describe(self):
                    return self.name, self.sides, self.area(), self.colour

                def area(self):
                    return self.nmae  # expect: E1025

                def guarded(self):
                    if hasattr(self, "cached"):
                        return self.cached
                    try:
                        return self.maybe
                    except AttributeError:
                        return None

            class Square(Shape):
                sides = 4
                def area(self):
                    return self.side ** 2 + self.extra  # expect: E1025

                @functools.cached_property
                def side(self):
                    return 1

            class Mixin:
                def both(self):
                    return self.from_sibling  # another base of the same subclass sets it

            class Sibling:
                def __init__(self):
                    self.from_sibling = 1

            class Joined(Mixin, Sibling):
                pass

            class Lazy:
                def __getattr__(self, name):
                    return name
                def use(self):
                    return self.anything

            class Failure(Exception):
                def text(self):
                    return self.args, self.with_traceback, self.nope  # expect: E1025

            def paint(shape):
                shape.colour = "red"  # written anywhere: it may be on any object
            """,
            "unknown.py": """
            from somewhere_else_xyz import Base

            class Child(Base):
                def use(self):
                    return self.from_base
            """,
        },
    )


def test_a_computed_setattr_leaves_instance_attributes_unjudged(tmp_path: Path) -> None:
    _assert_marked(
        tmp_path,
        {
            "m.py": """
            class Config:
                def __init__(self, **options):
                    for key, value in options.items():
                        setattr(self, key, value)
                def verbose(self):
                    return self.verbosity
            """,
        },
    )
