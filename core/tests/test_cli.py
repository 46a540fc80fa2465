"""The `ppy` command: doctor in full, the other verbs answering E9002 for now."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ppy_core.cli.app import VERBS, build_parser, main

CORE = Path(__file__).resolve().parents[1]


def _ppy(
    *args: str, site: Path | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    path = [str(site)] if site else []
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([*path, str(CORE), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "ppy_core.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


def test_every_verb_of_the_design_is_there() -> None:
    assert set(VERBS) == {"run", "build", "explain", "check", "doctor", "cache", "plugin"}
    assert "doctor" in build_parser().format_help()


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "{missing}", "--flag"],
        ["build", "{missing}", "-o", "out"],
        ["explain", "{missing}"],
        ["check", "{missing}"],
        ["{missing}", "arg"],
    ],
)
def test_verbs_answer_a_coded_error_with_status_2_never_a_traceback(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = str(tmp_path / "missing.ppy")
    assert main([a.format(missing=missing) for a in argv]) == 2
    err = capsys.readouterr().err
    assert re.search(r"\[E\d{4}\]", err), err
    assert "hint:" in err
    assert "Traceback" not in err


def test_a_verb_not_yet_landed_is_E9002(capsys: pytest.CaptureFixture[str]) -> None:
    from ppy_core.cli.app import _not_yet

    error = _not_yet("check", "the checker issue")
    assert error.code == "E9002"
    assert "ppy check is not available yet" in str(error)


def test_version_and_help() -> None:
    done = _ppy("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("ppy ")
    assert _ppy().returncode == 2


def test_doctor_shows_every_entry_and_a_broken_one_without_failing(
    fake_dists: Path, make_pyproject: Callable[..., Path], tmp_path: Path
) -> None:
    project = make_pyproject(
        tmp_path / "proj",
        """\
        [tool.ppy.plugins.broken]
        enabled = true
        [tool.ppy.plugins.foo]
        enabled = true
        """,
    )
    done = _ppy("doctor", "--json", str(project), site=fake_dists)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    rows = {(r["kind"], r["name"]): r for r in report["entries"]}
    foo = rows["plugin", "foo"]
    assert foo["distribution"] == "foo-ppy"
    assert foo["version"] == "1.0"
    assert foo["fingerprint"] == "v1:foo=1.0"
    assert foo["detected"] == {"foo": "1.0 (fake)"}
    assert foo["status"].startswith("enabled by [tool.ppy.plugins.foo]")
    broken = rows["plugin", "broken"]
    assert broken["fingerprint"] is None
    assert any("[E1904]" in p for p in broken["problems"])
    old = rows["plugin", "old"]
    assert old["enabled"] is False
    assert "third-party, not enabled" in old["status"]
    assert rows["backend", "fast"]["fingerprint"] == "v1:fast"
    assert rows["plugin", "numpy"]["first_party"] is True
    assert report["config"] == str((project / "pyproject.toml").resolve())

    strict = _ppy("doctor", "--strict", str(project), site=fake_dists)
    assert strict.returncode == 1
    assert "[E1904]" in strict.stdout
    assert "broken: broken-ppy 1.0 (third-party)" in strict.stdout


def test_doctor_reports_a_bad_config(make_pyproject: Callable[..., Path], tmp_path: Path) -> None:
    project = make_pyproject(tmp_path / "proj", "[tool.ppy]\nopt = 9\n")
    done = _ppy("doctor", str(project))
    assert done.returncode == 0
    assert "[E1950]" in done.stdout
    assert "tool.ppy.opt" in done.stdout
    assert _ppy("doctor", "--strict", str(project)).returncode == 1


def test_doctor_text_names_fingerprints(
    fake_dists: Path, tmp_path: Path, dist_writers: tuple[Callable[..., None], Any]
) -> None:
    write_dist, _ = dist_writers
    write_dist(
        fake_dists,
        "vec-runtime",
        {"ppy.runtimes": {"veclib": "vec_runtime:create_adapter"}},
        {"vec_runtime/__init__.py": "raise RuntimeError('doctor must not import adapters')\n"},
    )
    done = _ppy("doctor", site=fake_dists, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"runtime adapters \(\d+\):", done.stdout)
    assert "veclib: vec-runtime 1.0 (vec_runtime:create_adapter)" in done.stdout
    assert "plugins (" in done.stdout
    assert "backends (" in done.stdout
    assert "fingerprint: v1:fast" in done.stdout
    assert "fingerprint: (not loaded)" in done.stdout  # the unnamed third-party ones


def test_internal_errors_are_coded(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def explode(args: object) -> int:
        raise LookupError("boom")

    monkeypatch.delenv("PPY_DEBUG", raising=False)
    monkeypatch.setattr("ppy_core.cli.app.doctor_report", explode)
    assert main(["doctor"]) == 70
    err = capsys.readouterr().err
    assert "[E9001]" in err
    assert "LookupError: boom" in err
