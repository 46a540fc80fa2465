"""A `ppy FILE` killed (SIGKILL) during its first build costs the next run seconds.

The first run is stopped while it links its kernel library, so it holds both the
compile cache's lock of the module and the llvm backend's lock of the library. The
next run must break both at once (their holder is dead) instead of waiting for
them to expire, and print what plain Python prints, through the fast path.

The link is made slow by pointing `CC` at a wrapper that, while a `slow` file
exists, says so and sleeps before running the real compiler; the same `CC` is
used by every run, so every run computes the same cache keys.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

PROGRAM = textwrap.dedent("""\
    import numpy as np

    import ppy


    def poly(a: np.ndarray, b: np.ndarray, c: np.ndarray):
        return 2.0 * a + 3.0 * b * c - a / b


    a = np.linspace(1.0, 2.0, 1001)
    b = np.linspace(0.5, 3.0, 1001)
    c = np.linspace(-1.0, 1.0, 1001)
    r = poly(a, b, c)
    print(r.tobytes().hex(), float(r.sum()).hex())
    print("fast", sum(s["fast"] for s in ppy.stats().values()))
    """)

WRAPPER = """#!/bin/sh
if [ -e "{slow}" ]; then
    touch "{linking}"
    sleep 60
fi
exec {cc} "$@"
"""

# What a dead holder may cost beyond a normal cold build: polls, not an expiry.
SLACK_S = 5.0


def ppy_command() -> list[str]:
    script = Path(sys.executable).with_name("ppy")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "ppy_core.cli"]


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.monotonic()
    proc = subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    return elapsed, proc.stdout


def test_a_killed_first_build_costs_the_next_run_seconds(tmp_path: Path) -> None:
    cc = next(shutil.which(c) for c in ("cc", "gcc", "clang") if shutil.which(c))
    slow, linking = tmp_path / "slow", tmp_path / "linking"
    wrapper = tmp_path / "cc-wrapper"
    wrapper.write_text(WRAPPER.format(slow=slow, linking=linking, cc=cc))
    wrapper.chmod(0o755)
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPY_")}
    env.update(CC=str(wrapper), PYTHONUNBUFFERED="1")

    _, want = run([sys.executable, str(program)], env, tmp_path)
    cold_s, baseline = run(
        [*ppy_command(), str(program)], {**env, "PPY_CACHE_DIR": str(tmp_path / "c0")}, tmp_path
    )
    assert baseline.splitlines()[0] == want.splitlines()[0]
    assert baseline.splitlines()[1] == "fast 1"

    cache = tmp_path / "c1"
    slow.touch()
    victim = subprocess.Popen(
        [*ppy_command(), str(program)],
        env={**env, "PPY_CACHE_DIR": str(cache)},
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its compiler child goes down with it
    )
    try:
        deadline = time.monotonic() + 120
        while not linking.exists():
            assert victim.poll() is None, "the first run ended before it linked"
            assert time.monotonic() < deadline, "the first run never reached the link"
            time.sleep(0.01)
        held = sorted(p.relative_to(cache).parts[0] for p in cache.rglob("*.lock"))
        assert held == ["llvm", "locks"]  # the module's lock and the library's
    finally:
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait()
    slow.unlink()

    again_s, got = run(
        [*ppy_command(), str(program)], {**env, "PPY_CACHE_DIR": str(cache)}, tmp_path
    )
    assert got.splitlines()[0] == want.splitlines()[0]
    assert got.splitlines()[1] == "fast 1"
    assert again_s < cold_s + SLACK_S, f"{again_s:.1f} s after a kill, {cold_s:.1f} s cold"
    assert not list(cache.rglob("*.lock"))


def test_a_projects_cache_dir_holds_the_kernel_libraries_too(tmp_path: Path) -> None:
    """`[tool.ppy] cache-dir` moves the llvm backend's builds with the compile cache."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\n\n[tool.ppy]\ncache-dir = "c"\n'
    )
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPY_")}
    env["PPY_CACHE_DIR"] = str(tmp_path / "elsewhere")
    _, want = run([sys.executable, str(program)], env, tmp_path)
    _, got = run([*ppy_command(), str(program)], env, tmp_path)
    assert got.splitlines() == [want.splitlines()[0], "fast 1"]
    assert list((tmp_path / "c" / "llvm").glob("*.so"))
    assert not (tmp_path / "elsewhere").exists()
