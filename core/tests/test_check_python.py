"""`ppy check` on plain Python: builtins and the standard library typed from typeshed
(overloads resolved by argument types, generics through their type arguments), unions
and narrowing, the core's own `ppy` API from its annotations, closures, and strict
mode naming each Unknown once, where it starts, with why. No library needed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ppy_core.cache.keys import typing_fingerprint
from ppy_core.compiler.check import check_paths
from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.plugin import Plugin


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def _check(tmp_path: Path, source: str, *, strict: bool = True) -> list[Diagnostic]:
    (tmp_path / "pyproject.toml").write_text(f"[tool.ppy]\nstrict = {str(strict).lower()}\n")
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(source))
    return check_paths([str(path)]).findings


def _lines(findings: list[Diagnostic]) -> list[tuple[int, str]]:
    return [(f.location.line if f.location else 0, f.code) for f in findings]


def test_builtins_overloads_and_container_elements_are_typed(tmp_path: Path) -> None:
    findings = _check(
        tmp_path,
        """
        def steps(n: int) -> int:
            return n

        def mean(values: list[float]) -> float:
            return sum(values) / len(values)

        def main(argv: list[str], d: dict[str, int], pairs: list[tuple[str, bytes]]) -> None:
            name = argv[0] if argv else "world"
            longest = max(range(1, 100), key=steps)
            total = sum(d.values()) + d["a"] + len(sorted(d.items()))
            keys = [k.upper() for k, v in d.items() if v > 1]
            for label, blob in pairs:
                print(label.strip(), blob.hex(), len(keys))
            squares = {k: v * v for k, v in d.items()}
            first, *rest = argv
            print(name.title(), longest + 1, total, squares["x"] + 1, first.lower(), rest[0])
            print(not name, 7 // longest, b"a" + blob, "%d" % total)
        """,
    )
    assert findings == []


def test_element_types_reveal_contradictions(tmp_path: Path) -> None:
    findings = _check(
        tmp_path,
        """
        def first(xs: list[str]) -> int:
            return xs[0]

        def value(d: dict[str, float]) -> str:
            return d["k"]

        def biggest(xs: list[int]) -> str:
            return max(xs)

        def fine(xs: list[int], d: dict[str, float]) -> float:
            return max(xs) + d["k"]
        """,
        strict=False,
    )
    assert _lines(findings) == [(3, "E1005"), (6, "E1005"), (9, "E1005")]
    assert "int is not str" in findings[2].message


def test_optional_values_need_narrowing(tmp_path: Path) -> None:
    findings = _check(
        tmp_path,
        """
        import os
        import re
        import shutil

        def runner() -> str:
            forced = os.environ.get("RUNNER")
            if forced:
                return forced.upper()
            found = shutil.which("ppy") or "ppy"
            return found.lower()

        def group(text: str) -> str:
            match = re.search("a(b)", text)
            if match is None:
                raise SystemExit("no match")
            return match.group(1)

        def careless(text: str) -> str:
            match = re.search("a(b)", text)
            return match.group(1)
        """,
    )
    assert _lines(findings) == [(21, "E1001")]
    assert "None has no member `group`" in findings[0].message


def test_strict_names_what_stays_unknown_once_with_its_reason(tmp_path: Path) -> None:
    findings = _check(
        tmp_path,
        """
        import mystery

        def f(n: int) -> None:
            items = []
            print(items[0])
            thing = mystery.make(n)
            print(thing, thing, thing)
            print(len(n))
        """,
    )
    # (the run-time checks' note: what is taken from a module not installed is unknown)
    assert _lines(findings) == [(2, "E1026"), (6, "E1001"), (7, "E1001"), (9, "E1001")]
    assert findings[0].severity == "note"
    assert "`mystery` is not installed" in findings[0].message
    assert "no plugin claims module `mystery`" in findings[2].message
    assert "no signature of len fits (int)" in findings[3].message


def test_the_core_api_is_typed_from_its_own_annotations(tmp_path: Path) -> None:
    findings = _check(
        tmp_path,
        """
        import ppy

        def version() -> str:
            return ppy.__version__

        def counts() -> int:
            stats = ppy.stats()
            return len(stats)

        def wrong() -> int:
            return ppy.__version__
        """,
    )
    assert _lines(findings) == [(12, "E1005")]
    assert "str returned from this function, annotated int" in findings[0].message


def test_closures_walrus_with_and_except_bind_names(tmp_path: Path) -> None:
    findings = _check(
        tmp_path,
        """
        import io
        import socket

        def outer(scale: float, data: bytes) -> float:
            def inner(x: float) -> float:
                return x * scale
            chunks: list[bytes] = []
            stream = io.BytesIO(data)
            while chunk := stream.read(4):
                chunks.append(chunk)
            with socket.socket() as s:
                s.close()
            try:
                value = float(len(b"".join(chunks)))
            except ValueError as e:
                print(e.args)
                value = 0.0
            return inner(value)
        """,
    )
    assert findings == []


def test_module_names_and_implicit_globals(tmp_path: Path) -> None:
    findings = _check(
        tmp_path,
        '''
        """A module with a docstring."""
        from pathlib import Path

        HERE = Path(__file__).resolve().parent
        NAMES = ("a", "b")

        def title() -> str:
            return __doc__.splitlines()[0] + str(HERE / "x") + NAMES[0]
        ''',
    )
    assert findings == []


class _Slow(Plugin):
    name = "slow"
    modules = ("json",)
    version = "3"

    def fingerprint(self) -> str:
        raise AssertionError("typing must not ask for the build fingerprint")


def test_the_typing_fingerprint_never_asks_the_plugin() -> None:
    found = typing_fingerprint("plugin", _Slow())
    assert found.startswith("typing:slow:v3:json=")
    assert found.rpartition("=")[2] != "none"  # json is installed: its file's identity


def test_classes_of_the_module_and_isinstance_narrowing(tmp_path: Path) -> None:
    findings = _check(
        tmp_path,
        """
        class Base:
            limit: int = 3
            name = "base"

            def scale(self) -> float:
                return 2.0

        class Child(Base):
            def __init__(self) -> None:
                self.count: int = 0

            @property
            def label(self) -> str:
                return self.name.upper()

            def grow(self) -> float:
                return self.scale() * self.limit + self.count

        def use(c: Child, items: list[int | str]) -> str:
            texts = [i.upper() for i in items if isinstance(i, str)]
            first = items[0]
            if isinstance(first, int):
                return str(first + c.grow())
            assert isinstance(first, str)
            return first.lower() + c.label + texts[0] + c.missing
        """,
    )
    assert _lines(findings) == [(26, "E1001")]
    assert "has no member `missing`" in findings[0].message


def test_a_projects_own_packages_are_read_from_source(tmp_path: Path) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "tables.py").write_text(
        "LIMIT: int = 3\n\ndef name() -> str:\n    return 'x'\n"
    )
    findings = _check(
        tmp_path,
        """
        from mypkg.tables import LIMIT, name

        def f() -> str:
            return name() * LIMIT

        def g() -> int:
            return name()
        """,
    )
    assert _lines(findings) == [(8, "E1005")]
    # the key covers the package's source: editing it is seen without touching mod.py
    (tmp_path / "mypkg" / "tables.py").write_text(
        "LIMIT: int = 3\n\ndef name() -> int:\n    return 1\n"
    )
    again = check_paths([str(tmp_path / "mod.py")])
    assert again.cached == 0
    assert _lines(again.findings) == [(5, "E1005")]  # int * int is an int, not a str


def test_type_ignore_comments_silence_their_line(tmp_path: Path) -> None:
    findings = _check(
        tmp_path,
        """
        def f(x: int) -> str:
            return x  # type: ignore[return-value]

        def g(x: int) -> str:
            return x
        """,
    )
    assert _lines(findings) == [(6, "E1005")]
    whole = _check(tmp_path, "# type: ignore\ndef f(x: int) -> str:\n    return x\n")
    assert whole == []


def test_generators_dunders_and_loops_are_not_false_errors(tmp_path: Path) -> None:
    findings = _check(
        tmp_path,
        """
        from collections.abc import Iterator
        from types import TracebackType

        def walk(n: int) -> Iterator[int]:
            if n < 0:
                return
            yield n

        class Money:
            def __eq__(self, other: object) -> bool:
                if not isinstance(other, Money):
                    return NotImplemented
                return True

        def frames(tb: TracebackType | None) -> list[TracebackType]:
            found: list[TracebackType] = []
            while tb is not None:
                found.append(tb)
                tb = tb.tb_next
            return found

        def lost(n: int) -> str:
            return None
        """,
    )
    assert _lines(findings) == [(24, "E1005")]
