"""Issue 32, item 2: every file is checked against its recorded size and sha256 before
it is loaded or executed, in every way of running; a mismatch is one coded warning and
that piece runs as Python: never another answer, a signal or a foreign constructor."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest


def _stats(done) -> str:
    return done.stderr[done.stderr.find("ppy stats") :]


@pytest.mark.parametrize("damage", ["constant", "truncate", "foreign"])
def test_the_launcher_checks_every_kernel(copy, kit, tmp_path: Path, damage: str) -> None:
    (library,) = kit.kernel_files(copy.app)
    mark = tmp_path / "mark"
    if damage == "constant":
        kit.edit_constant(library)
    elif damage == "truncate":
        library.write_bytes(library.read_bytes()[:1000])
    else:
        shutil.copyfile(kit.foreign_library(tmp_path), library)
    done = copy.run("app", env={"PPY_STATS": "1", "PPY_HOSTILE_MARK": str(mark)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == copy.expected  # Python's answer, not 3.5's
    assert done.stderr.count("[E3004]") == 1, done.stderr  # one warning naming the file
    assert library.name in done.stderr
    assert "failed its check: 1" in _stats(done)
    assert not mark.exists()  # the foreign constructor never ran


def test_an_intact_artifact_runs_its_kernel(copy) -> None:
    done = copy.run("app", env={"PPY_STATS": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == copy.expected, done.stderr
    assert "E30" not in done.stderr
    assert "prog:step.1                             1   -" in _stats(done)  # the fast path


def test_ppy_run_heals_its_artifact(copy, kit) -> None:
    assert copy.run("run", copy.program).returncode == 0  # fresh for this very ppy
    (runs,) = (copy.cache / "runs").iterdir()
    (library,) = kit.kernel_files(runs)
    kit.edit_constant(library)
    done = copy.run("run", copy.program, env={"PPY_STATS": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == copy.expected, done.stderr
    assert "[E3001]" in done.stderr  # failed its check: rebuilt
    assert "prog:step.1                             1   -" in _stats(done)  # rebuilt kernel
    again = copy.run("run", copy.program)
    assert again.returncode == 0
    assert again.stdout == copy.expected
    assert "E30" not in again.stderr, again.stderr


def test_a_cache_entry_edited_with_its_hash_is_caught_by_the_seal(copy, kit) -> None:
    from ppy_core.cache.files import sha256_file

    copy.warm()
    for library in kit.kernel_files(copy.cache / "entries"):
        kit.edit_constant(library)
        entry = library.parents[1]
        manifest = json.loads((entry / "manifest.json").read_text())
        manifest["files"][library.name]["sha256"] = sha256_file(library)  # the hash too
        (entry / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1))
    done = copy.run(copy.program, env={"PPY_STATS": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == copy.expected, done.stderr
    assert "[E3001]" in done.stderr
    assert "seal" in done.stderr
    assert "prog:step.1                             1   -" in _stats(done)


def test_a_cache_entry_is_checked_on_every_way_in(copy, kit) -> None:
    copy.warm()
    for library in kit.kernel_files(copy.cache / "entries"):
        kit.edit_constant(library)  # the hash in the manifest no longer matches
    done = copy.run(copy.program, env={"PPY_STATS": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == copy.expected, done.stderr
    assert "[E3001]" in done.stderr
    assert "prog:step.1                             1   -" in _stats(done)  # rebuilt
    # imported as a .ppy module, from plain Python: the same checks (break it again)
    for library in kit.kernel_files(copy.cache / "entries"):
        kit.edit_constant(library)
    main = copy.program.parent / "uses_prog.py"
    main.write_text("import ppy\nimport prog\n")
    try:
        done = _python(copy, main)
    finally:
        main.unlink()
    kit.assert_python_or_coded(done, copy.expected)
    assert done.returncode == 0, done.stderr
    assert "[E3001]" in done.stderr, done.stderr


def _python(copy, main: Path):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, str(main)],
        env=copy.env,
        cwd=main.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
