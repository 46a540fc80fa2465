"""`ppy check`: the core's own findings (no library needed), strict mode, the standard
library typed from typeshed, the CLI's exit status and JSON, and the per-module cache."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ppy_core.cli.app import main
from ppy_core.compiler.check import check_paths


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def _codes(tmp_path: Path, source: str, *, strict: bool = False) -> list[tuple[int, str]]:
    (tmp_path / "pyproject.toml").write_text(f"[tool.ppy]\nstrict = {str(strict).lower()}\n")
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(source))
    report = check_paths([str(path)])
    return [(f.location.line if f.location else 0, f.code) for f in report.findings]


def test_returns_and_assignments_that_contradict_their_annotations(tmp_path: Path) -> None:
    found = _codes(
        tmp_path,
        """
        def name(x: int) -> str:
            return x * 2

        def fine(x: int, flag: bool) -> float:
            y: float = x
            z: int = flag
            return x

        def nothing(x: int) -> None:
            return x

        def bare(x: int) -> int:
            n: int = 2.5
            return
        """,
    )
    assert found == [(3, "E1005"), (11, "E1005"), (14, "E1009"), (15, "E1005")]


def test_operands_python_refuses(tmp_path: Path) -> None:
    found = _codes(
        tmp_path,
        """
        def f(s: str, x: float, n: int) -> None:
            a = s + x
            b = s * n
            c = "%d items" % n
            d = s + s
            e = None + n
        """,
    )
    assert found == [(3, "E1004"), (7, "E1004")]


def test_standard_library_types_come_from_typeshed(tmp_path: Path) -> None:
    found = _codes(
        tmp_path,
        """
        import math
        import time

        def elapsed() -> str:
            return time.perf_counter() - 1.0

        def root(x: float) -> int:
            return math.sqrt(x)

        def size(items: list) -> str:
            return len(items)

        def shout(s: str) -> int:
            return s.upper()

        def fine(s: str, x: float) -> float:
            return math.floor(x) + len(s.strip()) + time.time()
        """,
    )
    assert found == [(6, "E1005"), (9, "E1005"), (12, "E1005"), (15, "E1005")]


def test_strict_names_each_unknown_where_it_starts_and_why(tmp_path: Path) -> None:
    source = """
        import json
        import mystery

        def f(x: int, y) -> int:
            a = mystery.thing(x)
            return y + x

        def untyped(z):
            return z.anything
        """
    assert _codes(tmp_path, source) == []
    findings = check_paths([str(tmp_path / "mod.py")], strict=True).findings
    assert [(f.location.line, f.code) for f in findings if f.location] == [
        (3, "E1026"),  # the run-time checks' note: a module not installed
        (6, "E1001"),
        (7, "E1001"),
    ]
    assert "no plugin claims module `mystery`" in findings[1].message
    assert "`y`" in findings[2].message
    assert "annotate" in findings[2].message


def test_cli_exit_status_json_and_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mod.py"
    path.write_text("def f(x: int) -> str:\n    return x\n")
    assert main(["check", str(path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == 1
    (row,) = report["findings"]
    assert (row["line"], row["column"], row["code"]) == (2, 12, "E1005")
    assert check_paths([str(path)]).cached == 1  # unchanged: read back, not typed again
    path.write_text("def f(x: int) -> str:\n    return str(x)\n")
    again = check_paths([str(path)])
    assert (again.cached, again.errors) == (0, 0)
    assert main(["check", str(path)]) == 0
    assert "0 error(s) in 1 file(s)" in capsys.readouterr().out


def test_a_syntax_error_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    assert _codes(tmp_path, "def f(:\n    pass\n") == [(1, "E0002")]


def test_folders_skip_virtual_environments(tmp_path: Path) -> None:
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "bad.py").write_text("def f(x: int) -> str:\n    return x\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "good.ppy").write_text("def f(x: int) -> int:\n    return x\n")
    report = check_paths([str(tmp_path)])
    assert (report.files, report.errors) == (1, 0)
