"""examples/31_torchrun: a built artifact launched by torchrun (2 CPU processes, gloo):
both ranks run their region (fast path) and agree on the all_reduce; started alone it
runs three ways with agreeing output."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from _examples import EXAMPLES, Runner, assert_agree, ppy_command, shared_cache

pytestmark = pytest.mark.needs_cc

PROGRAM = EXAMPLES / "31_torchrun" / "allreduce.ppy"


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(shared_cache(tmp_path_factory.mktemp("ex31")))


def torchrun() -> list[str]:
    script = Path(sys.executable).with_name("torchrun")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "torch.distributed.run"]


def test_artifact_under_torchrun(runner: Runner, tmp_path: Path) -> None:
    out = tmp_path / "build"
    runner.run([*ppy_command(), "build", str(PROGRAM), "-o", str(out)], PROGRAM.parent)
    launcher = out / PROGRAM.stem
    assert launcher.read_text().startswith("#!")  # a Python script torchrun can start
    env = runner.env(OMP_NUM_THREADS="1")
    env.pop("PPY_CACHE_DIR")  # the artifact needs no cache and no compiler
    done = runner.run(
        [*torchrun(), "--standalone", "--nproc_per_node=2", str(launcher)],
        tmp_path,
        timeout=300,
        env=env,
    )
    active = re.findall(
        r"^# rank (\d): region active (\w+) \((\d+) fast calls\)$", done.stdout, re.M
    )
    assert sorted(active) == [("0", "True", "1"), ("1", "True", "1")], done.stdout
    sums = re.findall(r"^rank (\d) of 2: all_reduce sum (\S+)$", done.stdout, re.M)
    assert [rank for rank, _ in sums] == ["0", "1"], done.stdout
    assert sums[0][1] == sums[1][1]


def test_single_process_runs_three_ways(runner: Runner) -> None:
    outputs = runner.three_ways(PROGRAM, timeout=300)
    assert_agree(outputs)
    assert "# rank 0: region active False (0 fast calls)" in outputs["python"]
    for way in ("ppy", "run"):
        assert "# rank 0: region active True (1 fast calls)" in outputs[way], outputs[way]
    assert re.search(r"^rank 0 of 1: all_reduce sum \S+$", outputs["python"], re.M)
