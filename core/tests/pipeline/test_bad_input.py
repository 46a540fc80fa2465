"""Bad input is a coded diagnostic, never a compiler traceback: a missing or
unreadable file (E0001, exit 2), a syntax error (E0002 at Python's file:line:col),
a plugin hook that raises (E1900; the program still runs right), a backend that
fails on a site (E2002; the site stays Python, the program runs right)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pipeline_harness import VECMATH_ON, Harness, stats_table, write

VERBS = ([], ["run"], ["explain"], ["build", "-o", "OUT"])


def _verb(verb: list[str], out: Path) -> list[str]:
    return [str(out) if a == "OUT" else a for a in verb]


@pytest.mark.parametrize("verb", VERBS, ids=["file", "run", "explain", "build"])
def test_missing_file_is_E0001_exit_2(harness: Harness, verb: list[str]) -> None:
    done = harness.ppy(*_verb(verb, harness.tmp / "never"), "no_such_file.ppy")
    assert done.returncode == 2, done.stderr
    assert "[E0001]" in done.stderr
    assert "no_such_file.ppy" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_unreadable_file_is_E0001(harness: Harness) -> None:
    folder = write(harness.tmp / "unreadable", {})
    (folder / "garbled.ppy").write_bytes(b"print('caf\xe9')\n")  # not UTF-8, no coding line
    (folder / "adir.ppy").mkdir()
    for name in ("garbled.ppy", "adir.ppy"):
        done = harness.ppy(folder / name)
        assert done.returncode == 2, done.stderr
        assert "[E0001]" in done.stderr, done.stderr
        assert name in done.stderr
        assert "Traceback" not in done.stderr


def test_a_declared_source_encoding_is_honoured(harness: Harness) -> None:
    folder = write(harness.tmp / "latin", {})
    (folder / "latin.ppy").write_bytes(b"# -*- coding: latin-1 -*-\nprint('caf\xe9')\n")
    python = harness.python(folder / "latin.ppy")
    done = harness.ppy(folder / "latin.ppy")
    assert python.returncode == done.returncode == 0, done.stderr
    assert done.stdout == python.stdout == "caf\u00e9\n"


@pytest.mark.parametrize("verb", VERBS, ids=["file", "run", "explain", "build"])
def test_syntax_error_is_E0002_at_pythons_place(harness: Harness, verb: list[str]) -> None:
    folder = write(harness.tmp / "syntax", {"broken.ppy": "x = 1\n\ndef f(a, b:\n    return a\n"})
    source = (folder / "broken.ppy").read_text()
    with pytest.raises(SyntaxError) as python:
        compile(source, str(folder / "broken.ppy"), "exec")
    where = f"{folder / 'broken.ppy'}:{python.value.lineno}:{python.value.offset}"
    done = harness.ppy(*_verb(verb, harness.tmp / "never"), folder / "broken.ppy", cwd=folder)
    assert done.returncode == 2, done.stderr
    assert f"{where}: error: invalid syntax" in done.stderr, done.stderr
    assert "[E0002]" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_importing_a_broken_ppy_module_raises_pythons_syntax_error(harness: Harness) -> None:
    folder = write(
        harness.tmp / "brokenimport",
        {
            "broken.ppy": "def f(:\n    pass\n",
            "main.ppy": "import ppy\n\nprint('start')\nimport broken\n",
        },
    )
    for done in (harness.python(folder / "main.ppy"), harness.ppy(folder / "main.ppy")):
        assert done.returncode == 1
        assert done.stdout == "start\n"
        assert done.stderr.endswith("    def f(:\n          ^\nSyntaxError: invalid syntax\n")
        assert "ppy_core.diagnostics" not in done.stderr  # not the compiler's exception


SUB_PROGRAM = """\
from vecmath import Vec


def f(a: Vec, b: Vec) -> Vec:
    return a * b - a


print(f(Vec([1.0, 2.0]), Vec([3.0, 4.0])))
"""


def test_plugin_hook_that_raises_is_E1900_and_the_program_runs(
    harness: Harness, bad_site: Path
) -> None:
    folder = write(
        harness.tmp / "halfvec",
        {
            "pyproject.toml": '[tool.ppy]\nbackends = ["pyloop"]\n\n'
            "[tool.ppy.plugins.halfvec]\nenabled = true\n",
            "prog.ppy": SUB_PROGRAM,
        },
    )
    env = harness.env([bad_site], PPY_STATS="1")
    done = harness.ppy(folder / "prog.ppy", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Vec([2.0, 6.0])\n"
    assert "[E1900]" in done.stderr
    assert (
        "'halfvec': hook operator raised RuntimeError: halfvec has no idea about Sub" in done.stderr
    )
    assert "Traceback" not in done.stderr
    # the failure is confined: `a * b` still converged and ran compiled
    assert stats_table(done.stderr)["prog:f.1"][0] == 1
    explain = harness.ppy("explain", folder / "prog.ppy", env=env)
    assert "site f.1 in f at prog.ppy:5:12: a * b  -> compiled by pyloop" in explain.stdout


def test_backend_that_fails_is_E2002_and_the_site_stays_python(
    harness: Harness, bad_site: Path
) -> None:
    folder = write(
        harness.tmp / "crashy",
        {
            "pyproject.toml": VECMATH_ON.replace('["pyloop"]', '["crashy"]'),
            "prog.ppy": SUB_PROGRAM,
        },
    )
    env = harness.env([bad_site], PPY_STATS="1")
    done = harness.ppy(folder / "prog.ppy", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Vec([2.0, 6.0])\n"
    assert "[E2002]" in done.stderr
    assert (
        "backend 'crashy' failed to compile site f.1: RuntimeError: crashy cannot compile "
        "today" in done.stderr
    )
    assert f"{folder / 'prog.ppy'}:5:12" in done.stderr
    assert "Traceback" not in done.stderr
    assert stats_table(done.stderr) == {}  # the site was left as written: no dispatcher
    explain = harness.ppy("explain", folder / "prog.ppy", env=env)
    assert "a * b - a  -> stays Python" in explain.stdout
    assert "reason: backend 'crashy' failed to compile site f.1" in explain.stdout
