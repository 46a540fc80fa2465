"""`ppy check`'s typed pass on the shapes of clean released code that it once reported
falsely (issue 31 item 2: click, jinja2, pytest, hypothesis, babel, h11 and this very
repository): what a path proves is kept, paths that meet are joined, and what the
checker cannot be sure of is no error (strict mode names a stub's "or None" as a note).
Each shape sits beside its true-positive twin, which must still be reported."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ppy_core.compiler.check import check_paths
from ppy_core.diagnostics import Diagnostic


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def _check(
    tmp_path: Path, source: str, *, strict: bool = False, name: str = "mod.py"
) -> list[Diagnostic]:
    (tmp_path / "pyproject.toml").write_text(f"[tool.ppy]\nstrict = {str(strict).lower()}\n")
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return check_paths([str(path)]).findings


def _lines(findings: list[Diagnostic], severity: str = "error") -> list[tuple[int, str]]:
    return [
        (f.location.line if f.location else 0, f.code)
        for f in findings
        if f.severity == severity and f.code != "E1001"
    ]


def test_paths_that_meet_are_joined(tmp_path: Path) -> None:
    """`x = None` on one path (a branch, an `except`, before a `break`) is not what x
    holds on the others (runtime/signatures.py, compiler/check/attributes.py)."""
    findings = _check(
        tmp_path,
        """
        from collections.abc import Callable


        def pick(cls: type, table: dict[type, Callable[[int], int]]) -> Callable[[int], int]:
            try:
                found = table[cls] if cls in table else None
            except LookupError:
                found = None
            if found is not None:
                return found
            return abs


        def names(groups: list[list[str]], banned: frozenset[str]) -> bool:
            found: set[str] | None = set()
            for group in groups:
                if not group:
                    found = None
                    break
                found.update(group)
            return found is not None and bool(found & banned)


        def first(words: list[str]) -> str:
            found = None
            for word in words:
                if word:
                    found = word
                    break
            else:
                return ""
            return found


        def always_none(words: list[str]) -> str:
            found = None
            for word in words:
                print(word)
            return found


        def until(items: list[str | None]) -> str:
            i = 0
            while True:
                item = items[i]
                if item is not None:
                    break
                i += 1
            return item


        def last(items: list[str | None]) -> str:
            for item in items:
                if item is None:
                    continue
                return item
            return ""
        """,
    )
    assert _lines(findings) == [(40, "E1005")]  # (the twin: None on every path)
    assert "None returned from this function, annotated str" in findings[0].message


def test_what_a_test_proves_narrows_what_follows(tmp_path: Path) -> None:
    """Early return and raise, `not isinstance`, `or` chains, walrus, `type(x) is C`,
    `assert`, and a call annotated NoReturn (click's `self.fail(...)`)."""
    findings = _check(
        tmp_path,
        """
        import re
        import sys
        from typing import NoReturn


        def fail(message: str) -> NoReturn:
            raise ValueError(message)


        def early(x: str | None) -> str:
            if not x:
                raise ValueError("empty")
            return x


        def kinds(x: int | str) -> int:
            if not isinstance(x, int):
                return len(x)
            return x


        def both(x: str | None, y: str | None) -> str:
            if x is None or y is None:
                return ""
            return x + y


        def walrus(text: str) -> str:
            if (m := re.match("a+", text)) is not None:
                return m.group(0)
            return ""


        def exact(s: bytes | str) -> bytes:
            if type(s) is bytes:
                return s
            return b""


        def never(x: int | None) -> int:
            if x is None:
                fail("no x")
            return x


        def exits(x: int | None) -> int:
            if x is None:
                sys.exit(1)
            assert x is not None
            return x


        def twin_and(x: str | None, y: bool) -> str:
            if x is None and y:
                return ""
            return x


        def twin_isinstance(x: int | str) -> int:
            if isinstance(x, bytes):
                return 0
            return x
        """,
    )
    assert _lines(findings) == [(57, "E1005"), (63, "E1005")]
    assert "str | None is not str" in findings[0].message
    assert "int | str is not int" in findings[1].message


def test_a_test_inside_an_expression_narrows_its_parts(tmp_path: Path) -> None:
    """`[m] if m else []`, `name and name.upper()`: the parts after the test are typed
    with what it proved; a walrus in it stays bound after (compiler/check/finder.py)."""
    findings = _check(
        tmp_path,
        """
        import re


        def first(module: str | None, aliases: list[str]) -> str:
            names = [module] if module else aliases
            return names[0]


        def upper(name: str | None) -> str:
            return (name and name.upper()) or ""


        def group(text: str) -> str:
            if (m := re.match("a", text)) and m.group(0):
                return m.group(0)
            return ""


        def twin_first(module: str | None, aliases: list[str]) -> str:
            names = [module] if aliases else aliases
            return names[0]


        def twin_pair(pair: tuple[str | None, int]) -> str:
            return pair[0]
        """,
        strict=True,
    )
    assert _lines(findings) == [(22, "E1005"), (26, "E1005")]
    assert "str | None is not str" in findings[-1].message  # (the None is the project's)
    assert [f for f in findings if f.code == "E1001"] == []


def test_an_attribute_a_test_proved_keeps_it_until_rebound(tmp_path: Path) -> None:
    """`if self.x is not None: return self.x` (click, jinja2, pytest, hypothesis); an
    attribute assigned holds what was assigned; an unnarrowed one is still reported."""
    findings = _check(
        tmp_path,
        """
        class Node:
            def __init__(self, name: str | None) -> None:
                self.name: str | None = name
                self.cached: str | None = None
                self.size: int | None = None

            def label(self) -> str:
                if self.name is not None:
                    return self.name
                return "?"

            def text(self) -> str:
                if self.cached is None:
                    self.cached = "x"
                return self.cached

            def length(self) -> int:
                try:
                    self.size = len(self.text())
                except TypeError:
                    self.size = 0
                return self.size

            def checked(self) -> str:
                assert self.name is not None
                return self.name

            def rebound(self, other: "Node") -> str:
                if self.name is None:
                    return ""
                self = other
                return self.name

            def twin(self) -> str:
                return self.name
        """,
    )
    assert _lines(findings) == [(33, "E1005"), (36, "E1005")]


def test_a_stubs_or_none_is_named_by_strict_mode_only(tmp_path: Path) -> None:
    """`tzinfo.tzname(dt)` is `str | None` in typeshed (babel returns it as str): no
    one knows whether this call's is None, so only strict mode names it, as a note; a
    None the project itself declares or returns is an error either way."""
    source = """
        import datetime


        def zone(tz: datetime.tzinfo, dt: datetime.datetime) -> str:
            return tz.tzname(dt)


        def own(x: str | None) -> str:
            return x


        def none() -> str:
            return None
        """
    assert _lines(_check(tmp_path, source)) == [(10, "E1005"), (14, "E1005")]
    strict = _check(tmp_path, source, strict=True)
    assert _lines(strict) == [(10, "E1005"), (14, "E1005")]
    assert _lines(strict, "note") == [(6, "E1005")]
    assert "a stub says it may be None" in next(f for f in strict if f.severity == "note").message


def test_stub_signatures_clean_code_relies_on(tmp_path: Path) -> None:
    """`d.get(k, default)` with an Any default (runtime/module.py), `open(p, "rb")` is
    binary (pytest, hypothesis), `types.FunctionType` and a class with `__call__` are
    callables (runtime/observed.py), an Any operand of `|` (babel, hypothesis)."""
    findings = _check(
        tmp_path,
        """
        import types
        from collections.abc import Callable
        from typing import Any


        def site(ids: dict[tuple[int, int], str], record: dict[str, Any]) -> str:
            return ids.get((1, 2), record["id"])


        def data(path: str | bytes) -> bytes:
            with open(path, "rb") as f:
                return f.read()


        def dispatcher(code: types.CodeType) -> Callable[..., Any]:
            return types.FunctionType(code, {})


        def optional(hint: Any) -> Any:
            return hint | None


        def twin_get(d: dict[str, int]) -> str:
            return d.get("k", 0)


        def twin_text(path: str) -> bytes:
            with open(path) as f:
                return f.read()


        def twin_callable() -> Callable[..., Any]:
            return 3


        def twin_none(x: int) -> int:
            return None * x
        """,
    )
    assert _lines(findings) == [(25, "E1005"), (30, "E1005"), (34, "E1005"), (38, "E1004")]


def test_what_the_project_declares_is_its_own(tmp_path: Path) -> None:
    """A project module named `types` (click's, of TypedDicts) is not Python's; a
    local method's overloads are not read as its first; an unannotated function's
    annotated variable is checked under strict only (as mypy's default, hypothesis)."""
    findings = _check(
        tmp_path,
        """
        from typing import TypedDict, overload


        class Info(TypedDict):
            name: str


        def info(name: str) -> Info:
            return {"name": name}


        class Data:
            @overload
            def draw(self, kind: int) -> int: ...
            @overload
            def draw(self, kind: str) -> str: ...
            def draw(self, kind: int | str) -> int | str:
                return kind

            def text(self) -> str:
                return self.draw("s")

            def plain(self) -> int:
                return 1

            def twin(self) -> str:
                return self.plain()


        def unannotated(items):
            pairs: tuple[int, int] = [(1, 2)]
            return pairs, items


        def twin_info(name: str) -> int:
            return {"name": name}


        def twin_annotated(items: list[int]) -> None:
            pairs: tuple[int, int] = [(1, 2)]
            print(pairs, items)
        """,
        name="pkg/types.py",
    )
    assert _lines(findings) == [(28, "E1005"), (37, "E1005"), (41, "E1009")]
    source = (tmp_path / "pkg/types.py").read_text()
    strict = _check(tmp_path, source, strict=True, name="pkg/types.py")
    assert _lines(strict, "note") == [(32, "E1009")]  # (named under strict, a note)
