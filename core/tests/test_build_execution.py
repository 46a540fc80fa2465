"""The build-execution service: policy, subprocess isolation, results, coded failures."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from ppy_core.diagnostics import Location
from ppy_core.project.build_execution import MARKER, execute, refusal
from ppy_core.project.config import Config, load_config

PROJECT = textwrap.dedent(
    """
    import os, sys, time

    def blob(payload):
        print("chatter on stdout never reaches the result")
        return bytes(payload["n"] * [7])

    def where(payload):
        return {"cwd": os.getcwd(), "marker": os.environ.get("MARKER_NAME"),
                "pid": os.getpid(), "echo": payload}

    def boom(payload):
        raise RuntimeError("the project's own failure")

    def slow(payload):
        time.sleep(60)

    def junk(payload):
        return object()

    def leave(payload):
        os._exit(9)
    """
).replace("MARKER_NAME", MARKER)


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Config]:
    (tmp_path / "pyproject.toml").write_text('[tool.ppy]\nbuild-execution = "allow"\n')
    (tmp_path / "proj_code.py").write_text(PROJECT)
    return tmp_path, load_config(tmp_path)


def run(config: Config, root: Path, name: str, payload: object = None, **kw: object):
    return execute(
        f"proj_code:{name}",
        payload,
        config=config,
        who=f"test of proj_code.{name}",
        sys_path=[str(root)],
        **kw,  # type: ignore[arg-type]
    )


def test_bytes_come_back_and_stdout_stays_out(project: tuple[Path, Config]) -> None:
    root, config = project
    outcome = run(config, root, "blob", {"n": 5})
    assert outcome.ok
    assert outcome.kind == "bytes"
    assert outcome.value == bytes([7] * 5)


def test_child_runs_in_project_folder_in_another_process(
    project: tuple[Path, Config],
) -> None:
    root, config = project
    outcome = run(config, root, "where", {"a": [1, 2.5, None]})
    assert outcome.ok
    assert outcome.kind == "json"
    value = outcome.value
    assert Path(value["cwd"]) == root.resolve()
    assert value["marker"] == "1"
    assert value["pid"] != os.getpid()
    assert value["echo"] == {"a": [1, 2.5, None]}


def test_deny_refuses_without_running(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ppy]\n")
    marker = tmp_path / "ran"
    (tmp_path / "touchy.py").write_text(
        f"def go(p):\n    open({str(marker)!r}, 'w').close()\n    return b''\n"
    )
    config = load_config(tmp_path)
    assert config.build_execution == "deny"
    outcome = execute(
        "touchy:go",
        config=config,
        who="jax export of touchy.go",
        instead="it stays an ordinary jitted call",
        sys_path=[str(tmp_path)],
        location=Location("touchy.py", 1),
    )
    assert outcome.refused
    assert not outcome.ok
    assert not marker.exists()
    diagnostic = outcome.diagnostic
    assert diagnostic is not None
    assert diagnostic.severity == "warning"
    text = diagnostic.render()
    for needle in ("touchy.go", "build-execution", "[E0030]", "ordinary jitted call", "allow"):
        assert needle in text


def test_refusal_without_pyproject_says_so() -> None:
    text = refusal(Config(), "x", "y").render()
    assert "no pyproject.toml" in text
    assert "[E0030]" in text


@pytest.mark.parametrize(
    ("name", "code", "needle"),
    [
        ("boom", "E0031", "the project's own failure"),
        ("junk", "E0033", "not bytes or JSON"),
        ("missing", "E0033", "cannot be imported"),
        ("leave", "E0034", "exit status 9"),
    ],
)
def test_failures_are_coded(
    project: tuple[Path, Config], name: str, code: str, needle: str
) -> None:
    root, config = project
    outcome = run(config, root, name)
    assert outcome.diagnostic is not None
    assert outcome.diagnostic.code == code
    assert needle in outcome.diagnostic.message
    assert outcome.diagnostic.hint


def test_timeout_stops_the_child(project: tuple[Path, Config]) -> None:
    root, config = project
    outcome = run(config, root, "slow", timeout_s=1.0)
    assert outcome.diagnostic is not None
    assert outcome.diagnostic.code == "E0032"
    assert "time limit of 1 s" in outcome.diagnostic.message


def test_bad_target_and_payload(project: tuple[Path, Config]) -> None:
    root, config = project
    no_colon = execute("proj_code.blob", config=config, who="w", sys_path=[str(root)])
    assert no_colon.diagnostic is not None
    assert no_colon.diagnostic.code == "E0033"
    unserializable = run(config, root, "blob", {1, 2})
    assert unserializable.diagnostic is not None
    assert unserializable.diagnostic.code == "E0033"
