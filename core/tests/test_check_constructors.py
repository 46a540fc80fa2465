"""`ppy check`'s E1024 on what a class's construction binds to beyond its own
`__init__`: named tuples (class syntax, `collections.namedtuple`, `typing.NamedTuple`
called, their subclasses, `_make` and `_replace`), `super().__init__(...)` and
`Base.__init__(self, ...)` along the method order, dataclasses' generated
`__init__`; and `.ppy` modules read by the same pass. Each error beside its negative
twins: lines marked `# expect: CODE` must be reported, every other line by nothing."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from ppy_core.compiler.check import check_paths
from ppy_core.compiler.check.raising import runtime_findings

EXPECT = re.compile(r"#\s*expect:\s*(E\d{4})")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def _marked(root: Path, files: dict[str, str]) -> tuple[set[tuple], set[tuple]]:
    """(what the run-time pass reports, what the files mark) as (file, line, code)."""
    paths = []
    for name, text in files.items():
        path = root / name
        path.write_text(textwrap.dedent(text))
        paths.append(path)
    found = {
        (Path(f.location.path).name, f.location.line, f.code)
        for f in runtime_findings(paths, (root,))
        if f.location and f.severity == "error"
    }
    wanted = {
        (path.name, number, code)
        for path in paths
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for code in EXPECT.findall(line)
    }
    return found, wanted


def test_named_tuples_bind_their_fields(tmp_path: Path) -> None:
    found, wanted = _marked(
        tmp_path,
        {
            "shapes.py": """
            import collections
            import typing
            from collections import namedtuple
            from typing import NamedTuple

            P = namedtuple("P", "x, y  z", defaults=(0,))
            P(1, 2)
            P(1, 2, 3)
            P(x=1, y=2, z=3)
            P(1)  # expect: E1024
            P(1, 2, 3, 4)  # expect: E1024
            P(1, 2, w=3)  # expect: E1024

            R = collections.namedtuple("R", ["a", "def", "a"], rename=True)
            R(1, 2, 3)
            R(a=1, _1=2, _2=3)
            R(1, 2)  # expect: E1024

            Bad = namedtuple("Bad", "a def")  # Python refuses it: a ValueError, unjudged
            Bad(1)
            names = "a b"
            Computed = namedtuple("Computed", names)
            Computed(1, 2, 3)
            Dyn = namedtuple("Dyn", "a b", defaults=names)
            Dyn()

            U = NamedTuple("U", [("k", int), ("v", str)])
            U(1, "a")
            U(1)  # expect: E1024
            K = typing.NamedTuple("K", k=int)
            K(k=1)
            K(j=1)  # expect: E1024

            class T(NamedTuple):
                a: int
                b: str = "x"

                def again(self):
                    self._replace(a=2)
                    self._replace(c=2)  # expect: E1024
                    return self.count(1) + self.index(self.a) + len(self._fields)

            T(1)
            T(1, "y")
            T()  # expect: E1024
            T(1, "y", 2)  # expect: E1024
            T._make([1, 2])
            T._make([1, 2], 3)  # expect: E1024
            t = T(1)
            t._replace(b="z")
            t._replace(1)  # expect: E1024
            t._replace(z=1)  # expect: E1024
            t._asdict()

            class Q(namedtuple("Q", "u v")):
                __slots__ = ()

                def total(self):
                    return self.u + self.v

            Q(1, 2)
            Q(1)  # expect: E1024

            class Sub(T):
                def twice(self):
                    return self.a * 2

            Sub(1)
            Sub(1, "a", 3)  # expect: E1024

            class Own(P):
                def __new__(cls, x):
                    return super().__new__(cls, x, x)

            Own(1)
            Own(1, 2)  # expect: E1024
            """,
        },
    )
    assert found == wanted


def test_init_of_the_bases_along_the_method_order(tmp_path: Path) -> None:
    found, wanted = _marked(
        tmp_path,
        {
            "family.py": """
            from somewhere_unknown import Foreign

            class A:
                def __init__(self, x, *, flag=False):
                    self.x = x

            class B(A):
                def __init__(self, x):
                    super().__init__(x, flag=True)
                    super().__init__(x, 2)  # expect: E1024
                    super(B, self).__init__(x, colour=1)  # expect: E1024
                    A.__init__(self, x)
                    A.__init__(self)  # expect: E1024
                    A.__init__(self, x, 3)  # expect: E1024

            class C(B):
                def __init__(self):
                    super().__init__(1)
                    super().__init__()  # expect: E1024

            class Plain:
                def __init__(self, x):
                    super().__init__()
                    super().__init__(x)  # expect: E1024
                    object.__init__(self)

            class Left(A):
                def __init__(self, x):
                    super().__init__(x, 1)  # next is Right for Both, A for Left: unjudged

            class Right(A):
                def __init__(self, x, y):
                    super().__init__(x)

            class Both(Left, Right):
                pass

            class Away(Foreign):
                def __init__(self, x):
                    super().__init__(x, 1, 2, 3)  # an unknown base: unjudged

            class Failure(Exception):
                def __init__(self, message, code):
                    super().__init__(message, code)

            class Later(A):
                def setup(self):
                    super().__init__(1)
                    super().__init__()  # expect: E1024
                    super().missing(1)

            def outside(obj):
                return super(A, obj).__init__(1, 2, 3)

            class Shadow(A):
                def __init__(self, x):
                    super = lambda: None
                    super().__init__(1, 2, 3)
            """,
        },
    )
    assert found == wanted


def test_dataclass_init_options(tmp_path: Path) -> None:
    found, wanted = _marked(
        tmp_path,
        {
            "rows.py": """
            from dataclasses import KW_ONLY, InitVar, dataclass, field

            @dataclass
            class Row:
                name: str
                scale: InitVar[float]
                tags: list = field(default_factory=list)
                total: int = field(init=False, default=0)
                _: KW_ONLY
                strict: bool = False

                def __post_init__(self, scale):
                    self.total = int(scale)

            Row("a", 1.0)
            Row("a", 1.0, [], strict=True)
            Row("a")  # expect: E1024
            Row("a", 1.0, [], True)  # expect: E1024
            Row("a", 1.0, total=3)  # expect: E1024

            @dataclass
            class Late:
                a: int
                b: int = field(default=0, kw_only=True)

            Late(1, b=2)
            Late(1, 2)  # expect: E1024

            @dataclass(init=False)
            class Manual:
                a: int

                def __init__(self, a, b):
                    self.a = a + b

            Manual(1, 2)
            Manual(1)  # expect: E1024

            @dataclass(init=False)
            class Bare:
                a: int

            Bare(1)  # expect: E1024
            """,
        },
    )
    assert found == wanted


def test_ppy_modules_go_through_the_run_time_pass(tmp_path: Path) -> None:
    (tmp_path / "model.ppy").write_text(
        textwrap.dedent(
            """
            def scale(x, factor):
                return x * factor

            total = scale(1)
            print(undefined_here)
            """
        )
    )
    (tmp_path / "main.py").write_text("import model\nmodel.scale(1, 2)\nmodel.scale(1, 2, 3)\n")
    report = check_paths([str(tmp_path)])
    found = {(Path(f.location.path).name, f.location.line, f.code) for f in report.findings}
    assert ("model.ppy", 5, "E1024") in found
    assert ("model.ppy", 6, "E1020") in found
    assert ("main.py", 3, "E1024") in found  # `import model` finds model.ppy: no E1021
    assert not [f for f in found if f[0] == "main.py" and f[1] != 3]
