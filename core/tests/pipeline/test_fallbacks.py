"""Fallbacks at run time: a guard that fails runs the Python path and counts the
reason; PPY_FALLBACK=error raises naming the site; =warn warns once per site and
reason; PPY_VERIFY=1 passes on a correct backend and raises ppy.VerifyError,
naming the site, on a wrong one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pipeline_harness import VECMATH_ON, Harness, stats_table, write

PROG = """\
import ppy
from vecmath import Vec


def f(a: Vec, b: Vec) -> Vec:
    return a * b + 1.0


x = Vec([1.0, 2.0])
print(f(x, x))
for _ in range(3):
    print(f(x, 2.0))  # b is not a Vec: guard fails, the Python path answers
for _ in range(2):
    try:
        f(x, Vec([1.0]))  # lengths differ: the Python path raises as vecmath does
    except ValueError as exc:
        print("ValueError", exc)
"""

EXPECTED = "Vec([2.0, 5.0])\n" + "Vec([3.0, 5.0])\n" * 3 + "ValueError length mismatch\n" * 2

VERIFY = """\
import ppy
import vecmath
from vecmath import Vec


def f(a: Vec, b: Vec) -> Vec:
    return a * b + 1.0


def g(a: Vec) -> float:
    return vecmath.total(a * a)


x = Vec([1.0, 2.0])
for call in (lambda: f(x, x), lambda: g(x)):
    try:
        print(call())
    except ppy.VerifyError as exc:
        print("VerifyError", exc.code if hasattr(exc, "code") else "", str(exc).splitlines()[0])
"""


@pytest.fixture(scope="module")
def project(harness: Harness) -> Path:
    return write(
        harness.tmp / "fb", {"pyproject.toml": VECMATH_ON, "fb.ppy": PROG, "verify.ppy": VERIFY}
    )


def _run(harness: Harness, file: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return harness.ppy(file, env=harness.env(**env))


def test_guard_failure_falls_back_and_counts_the_reason(harness: Harness, project: Path) -> None:
    python = harness.python(project / "fb.ppy")
    assert python.stdout == EXPECTED
    for done in (
        _run(harness, project / "fb.ppy", PPY_STATS="1"),
        harness.ppy("run", project / "fb.ppy", env=harness.env(PPY_STATS="1")),
    ):
        assert done.returncode == 0, done.stderr
        assert done.stdout == EXPECTED
        fast, fallbacks = stats_table(done.stderr)["fb:f.1"]
        assert fast == 1
        assert "guard: not a Vec: 3" in fallbacks
        assert "guard: lengths differ: 2" in fallbacks
        assert "Warning" not in done.stderr  # silent by default


def test_fallback_error_mode_raises_naming_the_site(harness: Harness, project: Path) -> None:
    done = _run(harness, project / "fb.ppy", PPY_FALLBACK="error")
    assert done.returncode == 1
    assert done.stdout == "Vec([2.0, 5.0])\n"  # the first fallback stops the program
    assert "site fb:f.1 fell back to Python: guard: not a Vec" in done.stderr
    assert "[E2001]" in done.stderr


def test_fallback_warn_mode_warns_once_per_site_and_reason(harness: Harness, project: Path) -> None:
    done = _run(harness, project / "fb.ppy", PPY_FALLBACK="warn")
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED
    warnings = [line for line in done.stderr.splitlines() if "FallbackWarning" in line]
    assert len(warnings) == 2, done.stderr
    assert "site fb:f.1 fell back to Python: guard: not a Vec" in warnings[0]
    assert "site fb:f.1 fell back to Python: guard: lengths differ" in warnings[1]
    assert warnings[0].startswith(f"{project / 'fb.ppy'}:6:")  # the user's line


def test_verify_mode_passes_on_a_correct_backend(harness: Harness, project: Path) -> None:
    done = _run(harness, project / "verify.ppy", PPY_VERIFY="1", PPY_STATS="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Vec([2.0, 5.0])\n5.0\n"
    assert done.stdout == harness.python(project / "verify.ppy").stdout
    table = stats_table(done.stderr)
    assert table["verify:f.1"][0] == 1
    assert table["verify:g.2"][0] == 1


def test_verify_mode_catches_a_wrong_backend(harness: Harness, bad_site: Path) -> None:
    folder = write(
        harness.tmp / "wrong",
        {
            "pyproject.toml": VECMATH_ON.replace('["pyloop"]', '["wrong"]'),
            "verify.ppy": VERIFY,
        },
    )
    quiet = harness.ppy(folder / "verify.ppy", env=harness.env([bad_site]))
    assert quiet.stdout == "Vec([3.0, 6.0])\n6.0\n"  # wrong: only verify mode can tell
    done = harness.ppy(folder / "verify.ppy", env=harness.env([bad_site], PPY_VERIFY="1"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("VerifyError E"), lines
    assert "site verify:f.1" in lines[0]
    assert "site verify:g.2" in lines[1]
    assert "3.0 != 2.0" in done.stdout or "6.0 != 5.0" in done.stdout
