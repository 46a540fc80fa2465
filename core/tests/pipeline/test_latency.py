"""Latency, reported not asserted (run with -s to see it): `ppy FILE` and `ppy run FILE`
on a cached tiny program against `python FILE`, and a cold compile of a module with
five sites (in-process compile time, and the whole cold `ppy FILE`)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pipeline_harness import VECMATH_ON, Harness, write

TINY = 'import sys\n\nprint("hi", len(sys.argv))\n'

FIVE_SITES = """\
import vecmath
from vecmath import Vec


def s1(a: Vec, b: Vec) -> Vec:
    return a * b + 1.0


def s2(a: Vec, b: Vec) -> Vec:
    return (a - b) / 2.0


def s3(a: Vec) -> float:
    return vecmath.total(vecmath.sin(a) * a)


def s4(a: Vec, k: float) -> Vec:
    return -(a * k) + a


def s5(a: Vec, b: Vec, c: Vec) -> Vec:
    return a * b + b * c - c


x = Vec([1.0, 2.0, 3.0])
print(s1(x, x), s2(x, x), s3(x), s4(x, 2.0), s5(x, x, x))
"""

COMPILE_TIMER = """\
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
from ppy_core.compiler.cached import compile_file
t1 = time.perf_counter()
compiled = compile_file(Path(sys.argv[1]))
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "compile": t2 - t1, "hit": compiled.hit}))
"""


def _best(run: Callable[[], object], n: int = 7) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


@pytest.mark.slow
def test_report_latency(harness: Harness) -> None:
    folder = write(harness.tmp / "latency", {"tiny.ppy": TINY, "timer.py": COMPILE_TIMER})
    vec = write(
        harness.tmp / "latency-vec",
        {
            "pyproject.toml": VECMATH_ON,
            "tiny.ppy": "import vecmath\n" + TINY,
            "five.ppy": FIVE_SITES,
        },
    )

    def ok(done: object) -> None:
        assert getattr(done, "returncode", 1) == 0, getattr(done, "stderr", "")

    # bytecode as an installed ppy has it (this workspace may say DONTWRITEBYTECODE)
    env = harness.env(PYTHONPYCACHEPREFIX=str(harness.tmp / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    ok(harness.ppy(folder / "tiny.ppy", env=env))  # warm the cache and the bytecode
    ok(harness.ppy("run", folder / "tiny.ppy", env=env))
    ok(harness.ppy(vec / "tiny.ppy", env=env))
    python = _best(lambda: ok(harness.python(folder / "tiny.ppy", env=env)))
    warm = _best(lambda: ok(harness.ppy(folder / "tiny.ppy", env=env)))
    warm_run = _best(lambda: ok(harness.ppy("run", folder / "tiny.ppy", env=env)))
    warm_plugin = _best(lambda: ok(harness.ppy(vec / "tiny.ppy", env=env)))

    colds, walls = [], []
    for i in range(3):
        env = {**env, "PPY_CACHE_DIR": str(harness.tmp / f"cold-cache-{i}")}
        done = harness._run(
            [sys.executable, str(folder / "timer.py"), str(vec / "five.ppy")], vec, env, 120
        )
        ok(done)
        data = json.loads(done.stdout)
        assert data["hit"] is False
        colds.append(data["compile"])
        env = {**env, "PPY_CACHE_DIR": str(harness.tmp / f"cold-wall-{i}")}
        start = time.perf_counter()
        ok(harness.ppy(vec / "five.ppy", env=env))
        walls.append(time.perf_counter() - start)
    explain = harness.ppy("explain", vec / "five.ppy")
    assert explain.stdout.count("-> compiled by pyloop") == 5, explain.stdout

    ms = 1000
    print(
        f"\nlatency (best of 7, ms): python FILE {python * ms:.0f}; "
        f"ppy FILE warm {warm * ms:.0f} (+{(warm - python) * ms:.0f}); "
        f"ppy run FILE warm {warm_run * ms:.0f} (+{(warm_run - python) * ms:.0f}); "
        f"ppy FILE warm with the vecmath plugin {warm_plugin * ms:.0f} "
        f"(+{(warm_plugin - python) * ms:.0f})"
    )
    print(
        f"cold compile of 5 sites (in-process compile_file, best of 3): "
        f"{min(colds) * ms:.0f} ms; whole cold `ppy FILE`: {min(walls) * ms:.0f} ms"
    )
    Path(harness.tmp / "latency.txt").write_text(
        json.dumps(
            {
                "python": python,
                "warm": warm,
                "warm_run": warm_run,
                "warm_plugin": warm_plugin,
                "cold_compile": min(colds),
                "cold_wall": min(walls),
            }
        )
    )
