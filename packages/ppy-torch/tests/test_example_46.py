"""examples/46_gpt2 (small config, CPU): three ways agree apart from `#` lines, the
blocks are regions when compiled, their logits equal eager's bit for bit, and the
region path makes one Python-level call per block."""

from __future__ import annotations

import re
import sys

import pytest
from _examples import EXAMPLES, Runner, assert_agree, shared_cache

pytestmark = pytest.mark.needs_cc

GPT2 = EXAMPLES / "46_gpt2" / "gpt2.ppy"
ARGS = ("--config", "small", "--device", "cpu", "--rounds", "2", "--no-compile")


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(shared_cache(tmp_path_factory.mktemp("ex46")))


def test_gpt2_small_runs_three_ways(runner: Runner) -> None:
    outputs = runner.three_ways(GPT2, *ARGS)
    assert_agree(outputs)
    lines = outputs["python"].splitlines()
    assert lines[1].startswith("config small: 4 layers, 128 dim, 4 heads")
    assert "regions give eager's logits bit for bit: True" in lines
    eager = re.search(
        r"^eager: (\d+) ATen ops, (\d+) Python-level torch calls", outputs["ppy"], re.M
    )
    assert eager is not None
    assert "# regions active: False" in outputs["python"]
    for way in ("ppy", "run"):
        assert "# regions active: True" in outputs[way]
        found = re.search(
            r"^# regions: (\d+) ATen ops, (\d+) Python-level calls per forward "
            r"\((\d+) of them region calls\)",
            outputs[way],
            re.M,
        )
        assert found is not None, outputs[way]
        aten, calls, regions = map(int, found.groups())
        assert aten == int(eager[1])  # the same ATen work, through the same dispatcher
        assert regions == 4
        assert calls < int(eager[2]) // 4  # one call per block instead of one per operator
        assert re.search(r"^# regions +[0-9.]+ ms/forward", outputs[way], re.M)


@pytest.mark.slow
def test_gpt2_small_with_torch_compile(runner: Runner) -> None:
    out = runner.run(
        [sys.executable, str(GPT2), "--config", "small", "--rounds", "2"], GPT2.parent
    ).stdout
    assert re.search(
        r"^# torch.compile +[0-9.]+ ms/forward .*matches eager to 1e-4: True", out, re.M
    ), out
