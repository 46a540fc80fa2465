"""examples/09_torch: `torch_region.ppy` and `compare/` agree three ways (timing lines
excluded), the region is active when compiled, and the counterparts agree in value."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _examples import EXAMPLES, Runner, assert_agree, comparable, shared_cache

pytestmark = pytest.mark.needs_cc

HERE = EXAMPLES / "09_torch"


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(shared_cache(tmp_path_factory.mktemp("ex09")))


def test_torch_region_runs_three_ways(runner: Runner) -> None:
    outputs = runner.three_ways(HERE / "torch_region.ppy")
    assert_agree(outputs)
    assert "# region active: False" in outputs["python"]
    for way in ("ppy", "run"):
        assert "# region active: True" in outputs[way], outputs[way]
    lines = comparable(outputs["python"])
    assert lines[0].startswith("torch ")
    assert any(line.startswith("layer on cpu") and "us/call" in line for line in lines)
    assert lines[-1] == "autograd survives the region: True"


def test_layer_bench_runs_three_ways_and_matches_eager(runner: Runner) -> None:
    outputs = runner.three_ways(HERE / "compare" / "layer_bench.ppy")
    assert_agree(outputs)
    assert any(line.startswith("# layer, per call:") for line in outputs["ppy"].splitlines())
    eager = runner.run([sys.executable, "layer_eager.py"], HERE / "compare").stdout
    assert comparable(eager) == comparable(outputs["python"])


@pytest.mark.slow
def test_layer_compile_matches(runner: Runner) -> None:
    """torch.compile of the same layer prints the same sample (Inductor builds C++)."""
    bench = runner.way("python", HERE / "compare" / "layer_bench.ppy").stdout
    compiled = runner.run([sys.executable, "layer_compile.py"], HERE / "compare").stdout
    assert comparable(compiled) == comparable(bench)


@pytest.mark.slow
def test_compare_prints_the_table(runner: Runner) -> None:
    out = runner.run([sys.executable, "compare.py", "--processes", "1"], HERE / "compare").stdout
    assert "# outputs agree: True" in out, out
    assert "layer, per call" in out
    assert "best / eager best" in out


def test_examples_folder_is_where_the_tests_look() -> None:
    assert (HERE / "torch_region.ppy").is_file()
    assert Path(HERE / "compare" / "compare.py").is_file()
