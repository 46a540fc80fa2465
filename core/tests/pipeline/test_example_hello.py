"""examples/00_hello runs three ways (and through its launcher) with identical output."""

from __future__ import annotations

import pytest
from pipeline_harness import REPO, WAYS, Harness

HELLO = REPO / "examples" / "00_hello" / "hello.ppy"


@pytest.mark.skipif(not HELLO.is_file(), reason="examples/ is not in this checkout")
def test_hello_runs_three_ways_with_identical_output(harness: Harness) -> None:
    runs = harness.three_ways(HELLO, "PPy tests", out=harness.tmp / "hello.app")
    for way in WAYS:
        assert runs[way].returncode == 0, (way, runs[way].stderr)
        assert "Traceback" not in runs[way].stderr, way
    expected = runs["python"].stdout
    assert expected.startswith("Hello, PPy tests, from PPy ")
    assert "starts at 6171: 261 steps." in expected
    for way in WAYS[1:]:
        assert runs[way].stdout == expected, way
    assert not (HELLO.parent / "hello.ppyapp").exists()  # nothing written next to the example


@pytest.mark.skipif(not HELLO.is_file(), reason="examples/ is not in this checkout")
def test_hello_is_quiet_cold_off_a_terminal_and_identical_warm(harness: Harness) -> None:
    env = harness.env(PPY_CACHE_DIR=str(harness.tmp / "hello-quiet-cache"))
    cold = harness.three_ways(HELLO, "quiet", env=env, out=harness.tmp / "hello-q.app")
    warm = harness.three_ways(HELLO, "quiet", env=env, out=harness.tmp / "hello-q.app")
    python = warm["python"]
    assert python.returncode == 0, python.stderr
    for way in WAYS[1:]:
        assert cold[way].stdout == python.stdout, way
        assert cold[way].stderr == python.stderr, way  # building says nothing off a terminal
        assert warm[way].stdout == python.stdout, way
        assert warm[way].stderr == python.stderr, way
