"""The compile cache as the pipeline uses it: a second run hits; an edit of the
source or of an imported project module misses (and the new code runs); a
corrupted entry is discarded with one warning and rebuilt; `ppy cache info|clear`;
two processes compiling the same file at once both succeed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pipeline_harness import PPY, VECMATH_ON, Harness, write

from ppy_core.cache.root import BACKEND_MARKER

MAIN = """\
import ppy
from vecmath import Vec

import helper


def f(a: Vec, b: Vec) -> Vec:
    return a * b + 1.0


print(f(Vec([1.0, 2.0]), Vec([3.0, 4.0])))
print(helper.g(Vec([1.0, 2.0])))
"""

HELPER = """\
from vecmath import Vec


def g(a: Vec) -> Vec:
    return a * 2.0
"""


@pytest.fixture
def project(harness: Harness, tmp_path: Path) -> Path:
    return write(
        tmp_path / "proj", {"pyproject.toml": VECMATH_ON, "main.ppy": MAIN, "helper.ppy": HELPER}
    )


def _first_line(harness: Harness, file: Path) -> str:
    done = harness.ppy("explain", file)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[0]


def test_second_run_hits_and_edits_miss(harness: Harness, project: Path) -> None:
    main = project / "main.ppy"
    first = harness.ppy(main)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Vec([4.0, 9.0])\nVec([2.0, 4.0])\n"
    assert _first_line(harness, main) == f"{main}: cache hit"

    main.write_text(MAIN.replace("+ 1.0", "+ 2.0"))
    line = _first_line(harness, main)
    assert line.startswith(f"{main}: cache miss ("), line
    assert "source" in line, line
    assert harness.ppy(main).stdout.startswith("Vec([5.0, 10.0])\n")
    assert _first_line(harness, main) == f"{main}: cache hit"


def test_editing_an_imported_project_module_misses_for_main(
    harness: Harness, project: Path
) -> None:
    main = project / "main.ppy"
    assert harness.ppy(main).returncode == 0
    assert _first_line(harness, main) == f"{main}: cache hit"
    (project / "helper.ppy").write_text(HELPER.replace("a * 2.0", "a * 3.0"))
    line = _first_line(harness, main)  # main's key covers helper.ppy's content
    assert line.startswith(f"{main}: cache miss"), line
    assert "helper" in line, line
    for done in (harness.ppy(main), harness.ppy("run", main)):
        assert done.returncode == 0, done.stderr
        assert done.stdout == "Vec([4.0, 9.0])\nVec([3.0, 6.0])\n"  # never the stale helper


def test_corrupted_entry_warns_once_and_is_rebuilt(harness: Harness, project: Path) -> None:
    main = project / "main.ppy"
    assert harness.ppy(main).returncode == 0
    entries = [
        p
        for p in (harness.cache / "entries").glob("*/files/module.code")
        if str(main) in (p.parent / "manifest.json").read_text()
    ]
    assert len(entries) == 1
    code = entries[0]
    code.write_bytes(code.read_bytes()[:16])  # truncated
    done = harness.ppy(main)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Vec([4.0, 9.0])\nVec([2.0, 4.0])\n"
    assert done.stderr.count("[E3001]") == 1, done.stderr
    assert "cache entry is corrupt" in done.stderr
    assert "Traceback" not in done.stderr
    again = harness.ppy(main)
    assert again.stderr == ""
    assert again.stdout == done.stdout
    assert _first_line(harness, main) == f"{main}: cache hit"


def test_cache_info_and_clear(harness: Harness, project: Path, tmp_path: Path) -> None:
    env = harness.env(PPY_CACHE_DIR=str(tmp_path / "own-cache"))
    assert harness.ppy(project / "main.ppy", env=env).returncode == 0
    info = harness.ppy("cache", "info", env=env)
    assert info.returncode == 0, info.stderr
    assert f"cache: {tmp_path / 'own-cache'}" in info.stdout
    assert "entries: 2" in info.stdout  # main and helper
    backend_build = tmp_path / "own-cache" / "somebackend"  # as backend_dir makes it
    backend_build.mkdir()
    (backend_build / BACKEND_MARKER).touch()
    (backend_build / "lib.so").write_bytes(b"old build")
    users = tmp_path / "own-cache" / "not-ppys"  # no marker: the user's, never removed
    users.mkdir()
    (users / "notes.txt").write_text("mine\n")
    # functions/: the front end's per-function records (`cache.functions`)
    assert "build folders: functions, somebackend" in harness.ppy("cache", "info", env=env).stdout
    cleared = harness.ppy("cache", "clear", env=env)
    assert cleared.returncode == 0, cleared.stderr
    assert "removed 2 entries and the build folders functions, somebackend" in cleared.stdout
    assert not backend_build.exists()
    assert (users / "notes.txt").read_text() == "mine\n"
    after = harness.ppy("cache", "info", env=env).stdout
    assert "entries: 0" in after
    assert "build folders: none" in after
    assert _first_line_env(harness, project / "main.ppy", env).startswith(
        f"{project / 'main.ppy'}: cache miss"
    )


def _first_line_env(harness: Harness, file: Path, env: dict[str, str]) -> str:
    return harness.ppy("explain", file, env=env).stdout.splitlines()[0]


def test_concurrent_compiles_of_one_file_both_succeed(
    harness: Harness, project: Path, tmp_path: Path
) -> None:
    env = harness.env(PPY_CACHE_DIR=str(tmp_path / "race-cache"))
    procs = [
        subprocess.Popen(
            [*PPY, str(project / "main.ppy")],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert out == "Vec([4.0, 9.0])\nVec([2.0, 4.0])\n"
        assert "Traceback" not in err
        assert "E3001" not in err
    assert "entries: 2" in harness.ppy("cache", "info", env=env).stdout
    assert _first_line_env(harness, project / "main.ppy", env).endswith("cache hit")
