"""Issue 32, item 1: `ppy build -o` never deletes what ppy did not make."""

from __future__ import annotations

import os
from pathlib import Path


def test_a_folder_holding_other_files_is_refused_and_kept(copy, tmp_path: Path) -> None:
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine\n")
    done = copy.run("build", copy.program, "-o", keep)
    assert done.returncode == 2
    assert "[E3009]" in done.stderr
    assert str(keep) in done.stderr
    assert "hint:" in done.stderr
    assert sorted(os.listdir(keep)) == ["notes.txt"]
    assert (keep / "notes.txt").read_text() == "mine\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".keep.")]  # no leftovers


def test_dot_the_project_folder_and_a_file_are_coded_errors(copy, tmp_path: Path) -> None:
    project = copy.program.parent
    before = sorted(os.listdir(project))
    for target in (".", str(project), str(project.parent)):
        done = copy.run("build", copy.program, "-o", target)
        assert done.returncode == 2, done.stderr
        assert "[E3009]" in done.stderr
        assert "E9001" not in done.stderr
    afile = tmp_path / "afile"
    afile.write_text("data\n")
    done = copy.run("build", copy.program, "-o", afile)
    assert done.returncode == 2
    assert "[E3009]" in done.stderr
    assert "is a file" in done.stderr
    assert afile.read_text() == "data\n"
    assert sorted(os.listdir(project)) == before


def test_an_earlier_artifact_and_an_empty_folder_are_replaced(copy, tmp_path: Path, kit) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert copy.run("build", copy.program, "-o", empty).returncode == 0
    assert (empty / ".ppy-artifact").is_file()
    # the earlier artifact (copied from the session's build) is ppy's: replaced whole
    stale = copy.app / "modules" / "__main__" / "stray.txt"
    stale.write_text("left by nobody\n")
    done = copy.run("build", copy.program, "-o", copy.app)
    assert done.returncode == 0, done.stderr
    assert not stale.exists()
    ran = copy.run("app")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == copy.expected, ran.stderr
    # a folder that only looks like one (no marker) is not
    (copy.app / ".ppy-artifact").unlink()
    done = copy.run("build", copy.program, "-o", copy.app)
    assert done.returncode == 2
    assert "[E3009]" in done.stderr
    assert (copy.app / "manifest.json").is_file()


def test_cache_clear_removes_only_what_ppy_made(copy) -> None:
    mine = copy.cache / "my-notes"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    copy.warm()  # the backend folder is marked as ppy's when a build uses it
    done = copy.run("cache", "clear")
    assert done.returncode == 0, done.stderr
    assert "my-notes" not in done.stdout
    assert (mine / "notes.txt").read_text() == "mine\n"
    assert not (copy.cache / "runs").exists()
    assert not list((copy.cache / "entries").iterdir())
