"""A vecmath program (importing a `.ppy` module of its project) runs the same as
`python FILE`, `ppy FILE`, `ppy run FILE` and its built launcher; the compiled ways
take the fast path; `ppy run` and the launcher have no compiler in the process;
exit codes, argv, `__name__` and tracebacks are those of `python FILE`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from pipeline_harness import (
    COMPILER_PROBE,
    VECMATH_ON,
    WAYS,
    Harness,
    stats_table,
    user_stderr,
    write,
)

PROG = f"""\
import sys

import ppy
import vecmath
from vecmath import Vec

import helper


def fused(a: Vec, b: Vec, c: float) -> Vec:
    return a * b + c


def reduced(a: Vec) -> float:
    return vecmath.total(vecmath.sin(a) * 2.0)


def main() -> None:
    x = Vec([1.0, 2.0, 3.0])
    print("args", sys.argv[1:], __name__)
    print(fused(x, x, 0.5))
    print(reduced(x))
    print(helper.shifted(x, 2.0))
    print(fused(x, 2.0, 1.0))  # not a Vec: the Python path, same answer
    print("compiler:", {COMPILER_PROBE}, file=sys.stderr)


if __name__ == "__main__":
    main()
"""

HELPER = """\
from vecmath import Vec


def shifted(a: Vec, k: float) -> Vec:
    return -(a * k) + 1.0
"""

ERRS = """\
import sys

from vecmath import Vec


def f(a: Vec, b: Vec) -> Vec:
    return a * b - a


def deeper(n: int) -> float:
    return 1 / n


def main() -> None:
    print("name", __name__, "argv", sys.argv[1:])
    what = sys.argv[1]
    if what == "exit3":
        sys.exit(3)
    if what == "exitmsg":
        sys.exit("goodbye")
    if what == "mismatch":  # raised by vecmath inside the site's Python path
        print(f(Vec([1.0]), Vec([1.0, 2.0])))
    if what == "zero":
        print(deeper(0))
    try:
        f(Vec([1.0]), Vec([1.0, 2.0]))
    except ValueError as exc:
        print("caught", exc)
    print(f(Vec([1.0, 2.0]), Vec([3.0, 4.0])))


main()
"""


@pytest.fixture(scope="module")
def project(harness: Harness) -> Path:
    return write(
        harness.tmp / "proj",
        {"pyproject.toml": VECMATH_ON, "prog.ppy": PROG, "helper.ppy": HELPER, "errs.ppy": ERRS},
    )


@pytest.fixture(scope="module")
def runs(harness: Harness, project: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    env = harness.env(PPY_STATS="1")
    return harness.three_ways(project / "prog.ppy", "a1", "--b", env=env)


def test_three_ways_print_the_same(runs: dict[str, subprocess.CompletedProcess[str]]) -> None:
    for way in WAYS:
        assert runs[way].returncode == 0, (way, runs[way].stderr)
    expected = runs["python"].stdout
    assert expected.splitlines()[0] == "args ['a1', '--b'] __main__"
    assert "Vec([1.5, 4.5, 9.5])" in expected
    assert "Vec([-1.0, -3.0, -5.0])" in expected  # helper.shifted
    for way in WAYS[1:]:
        assert runs[way].stdout == expected, way
        assert "Traceback" not in runs[way].stderr, way


def test_compiled_ways_take_the_fast_path(
    runs: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    for way in ("ppy", "run", "launcher"):
        table = stats_table(runs[way].stderr)
        assert table["prog:fused.1"][0] == 1, (way, table)  # the Vec call; the 2.0 falls back
        assert "guard: not a Vec: 1" in table["prog:fused.1"][1], (way, table)
        assert table["prog:reduced.2"][0] == 1, (way, table)
        assert table["helper:shifted.1"][0] == 1, (way, table)
    # under plain python only the imported .ppy module is compiled (by `import ppy`)
    assert set(stats_table(runs["python"].stderr)) <= {"helper:shifted.1"}


def test_no_compiler_in_ppy_run_or_the_launcher(
    runs: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    def probe(way: str) -> str:
        return next(line for line in runs[way].stderr.splitlines() if line.startswith("compiler:"))

    assert probe("run") == "compiler: []"
    assert probe("launcher") == "compiler: []"
    assert "ppy_core.compiler.driver" in probe("ppy")  # the probe sees a compiler when there is one


def test_artifact_manifest_lists_modules_sites_kernels(
    harness: Harness, project: Path, runs: object
) -> None:
    manifest = json.loads((harness.tmp / "prog.artifact" / "manifest.json").read_text())
    assert set(manifest["modules"]) == {"__main__", "helper"}
    compiled = {(s["module"], s["id"]) for s in manifest["sites"] if s["compiled"]}
    assert {("__main__", "fused.1"), ("__main__", "reduced.2"), ("helper", "shifted.1")} <= compiled
    assert manifest["kernels"]
    assert any(k.startswith("plugin:vecmath") for k in manifest["fingerprints"])


@pytest.mark.parametrize(
    ("what", "code"),
    [("fine", 0), ("exit3", 3), ("exitmsg", 1), ("zero", 1), ("mismatch", 1)],
)
def test_exit_codes_argv_and_tracebacks_as_python(
    harness: Harness, project: Path, what: str, code: int
) -> None:
    file = project / "errs.ppy"
    python = harness.python(file, what, "x y")
    assert python.returncode == code, python.stderr
    assert python.stdout.startswith(f"name __main__ argv ['{what}', 'x y']\n")
    ways = {"ppy": harness.ppy(file, what, "x y"), "run": harness.ppy("run", file, what, "x y")}
    if what in ("zero", "mismatch"):
        ways["launcher"] = harness.launcher(file, what, "x y", out=harness.tmp / "errs.app")
    for way, done in ways.items():
        assert done.returncode == code, (way, done.stderr)
        assert done.stdout == python.stdout, way
        # the same traceback: the user's frames and lines, no compiler or dispatcher frame
        assert user_stderr(done.stderr) == python.stderr, way
    if what == "mismatch":
        assert 'errs.ppy", line 7, in f\n    return a * b - a\n           ~~^~~' in python.stderr
