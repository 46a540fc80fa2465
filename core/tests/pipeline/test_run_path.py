"""The run path of a cached program: what it loads, what it trusts, what it says.

A warm `ppy FILE`, `ppy run FILE` and the built launcher load the manifest, the
adapters it names and the kernels, and nothing else: no IR, no plugin, no metadata
scan, no compiler. `ppy run`'s artifact lives under the project's cache-dir and is
checked like a cache entry; an artifact's compiled parts run only while its plugins
are enabled. Off a terminal nothing is said about building; with -v it is."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from pipeline_harness import VECMATH_ON, Harness, stats_table, write

from ppy_core.cache.files import sha256_file

PROBE = (
    "sorted(m for m in sys.modules if m.startswith(('ppy_core.ir', 'ppy_core.interface', "
    "'ppy_core.compiler', 'importlib.metadata', 'ppy_testkit', 'tomllib', 'ppy_core.diagnostics')))"
)

PROG = f"""\
import sys

from vecmath import Vec


def fused(a: Vec, b: Vec) -> Vec:
    return a * b + 1.0


print(fused(Vec([1.0, 2.0]), Vec([3.0, 4.0])))
print("loaded:", {PROBE}, file=sys.stderr)
"""

PLAIN = f"""\
import sys


def twice(n: int) -> int:
    return 2 * n


print(twice(len(sys.argv)))
print("loaded:", {PROBE}, file=sys.stderr)
"""


@pytest.fixture(scope="module")
def project(harness: Harness) -> Path:
    folder = write(
        harness.tmp / "runpath",
        {"pyproject.toml": VECMATH_ON, "prog.ppy": PROG, "plain.ppy": PLAIN},
    )
    # files last changed a while ago, as a program's usually are: a record taken right
    # after a change is not trusted (the next change could keep its mtime)
    old = time.time() - 60
    for path in folder.iterdir():
        os.utime(path, (old, old))
    return folder


def _loaded(stderr: str) -> list[str]:
    line = next(x for x in stderr.splitlines() if x.startswith("loaded:"))
    return list(eval(line.partition(":")[2]))  # a list literal the program printed


def test_a_warm_start_loads_no_compiler_plugin_or_scan(harness: Harness, project: Path) -> None:
    env = harness.env(PPY_STATS="1")
    for file in ("prog.ppy", "plain.ppy"):
        path = project / file
        cold = {
            "ppy": harness.ppy(path, env=env),
            "run": harness.ppy("run", path, env=env),
            "launcher": harness.launcher(path, out=harness.tmp / f"{file}.app", env=env),
        }
        for way, done in cold.items():
            assert done.returncode == 0, (way, done.stderr)
        python = harness.python(path, env=env)
        allowed = {"ppy_testkit", "ppy_testkit.loader"}
        # a record taken within seconds of an edit (of this checkout's code, by someone
        # working on it, say) is not trusted: a later start recomputes and records it
        for attempt in range(4):  # noqa: B007 (reported below)
            warm = {
                "ppy": harness.ppy(path, env=env),
                "run": harness.ppy("run", path, env=env),
                "launcher": harness._run(
                    [str(harness.tmp / f"{file}.app" / path.stem)], project, env, 60
                ),
            }
            extra = {w: [m for m in _loaded(d.stderr) if m not in allowed] for w, d in warm.items()}
            if not any(extra.values()):
                break
        for way, done in warm.items():
            assert done.returncode == 0, (way, done.stderr)
            assert done.stdout == python.stdout, way
            # the loader the manifest names (ppy_testkit.loader) is what a compiled site
            # needs; the plugin, the IR, discovery, tomllib and the compiler are not
            assert extra[way] == [], (way, attempt)
            if file == "prog.ppy":
                assert stats_table(done.stderr)["prog:fused.1"][0] == 1, (way, done.stderr)


def test_ppy_run_keeps_its_artifact_under_the_cache_dir_and_checks_it(
    harness: Harness, tmp_path: Path
) -> None:
    own = tmp_path / "project-cache"
    project = write(
        tmp_path / "proj",
        {
            "pyproject.toml": VECMATH_ON.replace(
                "[tool.ppy]\n", f'[tool.ppy]\ncache-dir = "{own}"\n'
            ),
            "prog.ppy": PROG,
        },
    )
    env = harness.env()
    first = harness.ppy("run", project / "prog.ppy", env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Vec([4.0, 9.0])\n"
    runs = list((own / "runs").iterdir())
    assert len(runs) == 1
    assert (runs[0].stat().st_mode & 0o777) == 0o700
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    code = "modules/__main__/module.code"
    assert code in manifest["files"]
    data = bytearray((runs[0] / code).read_bytes())
    data[-1] ^= 0x01  # same size, other bytes
    (runs[0] / code).write_bytes(bytes(data))
    done = harness.ppy("run", project / "prog.ppy", env=env)
    # the changed code never ran: the artifact failed its check and was built again
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Vec([4.0, 9.0])\n"
    assert "failed its check" in done.stderr
    assert "[E3001]" in done.stderr
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    assert sha256_file(runs[0] / code) == manifest["files"][code]["sha256"]  # healed


def test_an_artifact_runs_its_compiled_parts_only_while_its_plugin_is_enabled(
    harness: Harness, tmp_path: Path
) -> None:
    project = write(tmp_path / "proj", {"pyproject.toml": VECMATH_ON, "prog.ppy": PROG})
    out = tmp_path / "prog.app"
    env = harness.env(PPY_STATS="1")
    on = harness.launcher(project / "prog.ppy", out=out, env=env)
    assert on.returncode == 0, on.stderr
    assert stats_table(on.stderr)["prog:fused.1"][0] == 1
    (project / "pyproject.toml").write_text(VECMATH_ON.replace("enabled = true", "enabled = false"))
    off = harness._run([str(out / "prog")], project, env, 60)
    assert off.returncode == 0, off.stderr
    assert off.stdout == on.stdout
    assert off.stderr.count("[E3003]") == 1
    assert "plugin vecmath is not enabled" in off.stderr
    fast, fallbacks = stats_table(off.stderr)["prog:fused.1"]
    assert fast == 0
    assert "library build changed" in fallbacks


def test_building_is_quiet_off_a_terminal_and_said_with_v(harness: Harness, tmp_path: Path) -> None:
    project = write(tmp_path / "proj", {"pyproject.toml": VECMATH_ON, "prog.ppy": PROG})
    env = harness.env(PPY_CACHE_DIR=str(tmp_path / "cold"))
    python = harness.python(project / "prog.ppy", env=env)
    for args in (("run", project / "prog.ppy"), (project / "prog.ppy",)):
        cold = harness.ppy(*args, env=env)
        assert cold.returncode == 0, cold.stderr
        assert cold.stdout == python.stdout
        # no "ppy: built ..." off a terminal: only the program's own line (what a cold
        # start loaded to build differs, of course)
        assert [x for x in cold.stderr.splitlines() if not x.startswith("loaded:")] == [], args
    loud = harness.ppy(
        "-v", "run", project / "prog.ppy", env=harness.env(PPY_CACHE_DIR=str(tmp_path / "cold-v"))
    )
    assert loud.returncode == 0, loud.stderr
    assert "ppy: built " in loud.stderr
    assert loud.stdout == python.stdout
