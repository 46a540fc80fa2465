"""Issue 32 item 6: a long cold compile says what it is doing on a terminal (stderr a
pty), for `ppy FILE` and `ppy build`: one line, redrawn in place with the build's
latest step, erased when done; with -v, lines that stay; piped, and on a warm start,
it says nothing."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
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
ERASE = "\r\x1b[2K"  # back to the line's start, the line cleared
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
    # 300 columns: the line is cut to the terminal's width, and the paths are long
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 300, 0, 0))
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
    assert f"{ERASE}ppy: compiling {program}" in shown, shown  # drawn at the line's start
    assert shown.endswith(ERASE), shown  # and erased: nothing of it stays
    assert "\n" not in shown, shown
    code, out, shown = _on_a_terminal([str(program)], env, tmp_path, PPY)  # warm: silent
    assert (code, out) == (0, "22.0\n")
    assert "ppy:" not in shown, shown
    app = tmp_path / "app"
    env["PPY_CACHE_DIR"] = str(tmp_path / "cache-build")  # cold again, for the build
    code, out, shown = _on_a_terminal(["build", str(program), "-o", str(app)], env, tmp_path)
    assert code == 0, shown
    assert f"{ERASE}ppy: building {program}" in shown, shown
    assert shown.endswith(f"{ERASE}ppy: built {app}\r\n"), shown  # what was built stays
    env["PPY_CACHE_DIR"] = str(tmp_path / "cache-verbose")  # cold, -v: lines that stay
    code, out, shown = _on_a_terminal(["-v", str(program)], env, tmp_path)
    assert (code, out) == (0, "22.0\n"), shown
    assert f"ppy: compiling {program} ...\r\n" in shown, shown
    assert f"ppy: compiling {program}: done in " in shown, shown
    assert ERASE not in shown, shown
    env["PPY_CACHE_DIR"] = str(tmp_path / "cache-piped")  # cold, stderr piped: nothing
    piped = subprocess.run(
        [*PPY, str(program)], env=env, cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, "22.0\n", "")


def test_the_line_shows_the_builds_latest_step_and_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process, stderr a pty: the line is redrawn with what the build says it is
    doing (`interface.progress`), cut to the terminal's width, and erased at the end."""
    from ppy_core.cli import progress as cli
    from ppy_core.interface import progress as steps

    master, slave = pty.openpty()
    stream = os.fdopen(slave, "w")
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(cli, "FIRST_S", 0.0)
    monkeypatch.setattr(cli, "REDRAW_S", 0.01)
    monkeypatch.delenv("TERM", raising=False)
    with cli.progress("compiling big.py"):
        for line in (1, 3000, 6578):
            steps.step("typing line", line, 6578)
            time.sleep(0.1)
        for _ in steps.counted("preparing sites", list(range(5))):
            time.sleep(0.05)
    stream.close()
    shown = b""
    while select.select([master], [], [], 0.5)[0]:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    text = shown.decode()
    assert f"{ERASE}ppy: compiling big.py: typing line 3000/6578, 0 s" in text, text
    assert "preparing sites 2/5" in text or "preparing sites 3/5" in text, text
    assert text.endswith(ERASE), text
    assert "\n" not in text
    assert steps.status() == ""  # the build is over: no step is left for the next
    assert cli.fitted("ppy: compiling x.py", "typing line 1/2", 1.0) == (
        "ppy: compiling x.py: typing line 1/2, 1 s"
    )
