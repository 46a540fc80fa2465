"""Issue 32 item 6: a long cold compile says what it is doing on a terminal (stderr a
pty), for `ppy FILE` and `ppy build`; piped, and on a warm start, it says nothing."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numpy")
pytest.importorskip("ppy_llvm")

PROGRAM = """\
import numpy as np


def step(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * 3.0 + b


print(step(np.arange(4.0), np.ones(4)).sum())
"""
PPY = [sys.executable, "-m", "ppy_core.cli"]
# On a terminal the first line comes once a compile has taken FIRST_S; a tiny program on
# a fast machine compiles in less, so the terminal runs say it from the start.
PPY_AT_ONCE = [
    sys.executable,
    "-c",
    "import sys; import ppy_core.cli.progress as p; p.FIRST_S = 0.0; "
    "from ppy_core.cli import main; sys.argv[0] = 'ppy'; sys.exit(main())",
]


def _on_a_terminal(
    args: list[str], env: dict[str, str], cwd: Path, ppy: list[str] = PPY_AT_ONCE
) -> tuple[int, str, str]:
    """Run `ppy ARGS` with stderr on a pty: (exit status, stdout, what the pty showed)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*ppy, *args], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=slave, text=True
    )
    os.close(slave)
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        shown += chunk
    assert proc.stdout is not None
    with proc.stdout:
        out = proc.stdout.read()
    code = proc.wait(timeout=120)
    os.close(master)
    return code, out, shown.decode("utf-8", "replace")


def test_a_cold_compile_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPY_")}
    env["PPY_CACHE_DIR"] = str(tmp_path / "cache")
    code, out, shown = _on_a_terminal([str(program)], env, tmp_path)  # cold: compiles
    assert code == 0, shown
    assert out == "22.0\n"
    assert f"ppy: compiling {program} ..." in shown, shown
    assert f"ppy: compiling {program}: done in " in shown, shown
    code, out, shown = _on_a_terminal([str(program)], env, tmp_path, PPY)  # warm: silent
    assert (code, out) == (0, "22.0\n")
    assert "ppy:" not in shown, shown
    app = tmp_path / "app"
    env["PPY_CACHE_DIR"] = str(tmp_path / "cache-build")  # cold again, for the build
    code, out, shown = _on_a_terminal(["build", str(program), "-o", str(app)], env, tmp_path)
    assert code == 0, shown
    assert f"ppy: building {program} ..." in shown, shown
    assert f"ppy: built {app}" in shown, shown
    env["PPY_CACHE_DIR"] = str(tmp_path / "cache-piped")  # cold, stderr piped: nothing
    piped = subprocess.run(
        [*PPY, str(program)], env=env, cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, "22.0\n", "")
