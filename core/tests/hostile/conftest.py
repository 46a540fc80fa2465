"""Fixtures of the hostile-user tests (issue 32): one tiny NumPy program with one
compiled kernel, compiled, run and built ONCE per session, then copied per test (the
cache, the artifact), so each test starts from a warm cache of its own in a second.

The program keeps one path for the whole session: cache keys and `ppy run`'s
artifact folder are derived from it, so a copied cache is warm for it. `run(...)`
runs `ppy` (or an artifact's launcher) as a user would, in a child process, with
the copied cache as PPY_CACHE_DIR and a time limit.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("numpy")
pytest.importorskip("ppy_llvm")

PROGRAM = """\
import numpy as np


def step(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * 3.0 + b


x = np.arange(8.0)
print(step(x, x).sum())
"""
PPY = [sys.executable, "-m", "ppy_core.cli"]
LIMIT_S = 60.0


@dataclass(frozen=True)
class Built:
    """The session's program, its Python output, a warm cache and a built artifact."""

    program: Path
    expected: str
    cache: Path
    app: Path


@dataclass(frozen=True)
class Copy:
    """One test's own copies: `cache` (warm), `app` (the artifact), `program`."""

    program: Path
    expected: str
    cache: Path
    app: Path
    env: dict[str, str]

    def warm(self) -> None:
        """Run `ppy FILE` once, so the cache holds the entry this very ppy looks up
        (another checkout's edits change the key of the session's entry)."""
        done = self.run(self.program)
        assert done.returncode == 0, done.stderr

    def run(
        self, *args: str | Path, timeout: float = LIMIT_S, **kw: object
    ) -> subprocess.CompletedProcess[str]:
        """`ppy ARGS` with this copy's cache; `app` as the first arg runs the launcher."""
        cmd = [str(a) for a in args]
        if cmd and cmd[0] == "app":
            cmd = [str(self.app / self.program.stem), *cmd[1:]]
        else:
            cmd = [*PPY, *cmd]
        env = dict(self.env, **kw.pop("env", {}))  # type: ignore[arg-type]
        return subprocess.run(
            cmd,
            env=env,
            cwd=self.program.parent,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            **kw,  # type: ignore[arg-type]
        )


def environment(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPY_")}
    env["PPY_CACHE_DIR"] = str(cache)
    env["PYTHONWARNINGS"] = "default"
    return env


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    base = tmp_path_factory.mktemp("hostile")
    program = base / "project" / "prog.ppy"
    program.parent.mkdir()
    program.write_text(PROGRAM)
    # edited a minute ago: a file changed within seconds of its record is not trusted
    os.utime(program, (time.time() - 60, time.time() - 60))
    cache, app = base / "cache", base / "app"
    env = environment(cache)
    expected = subprocess.run(
        [sys.executable, str(program)], capture_output=True, text=True, check=True
    ).stdout
    for cmd in ([str(program)], ["run", str(program)], ["build", str(program), "-o", str(app)]):
        done = subprocess.run([*PPY, *cmd], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout == ("" if cmd[0] == "build" else expected), done.stderr
    return Built(program, expected, cache, app)


@pytest.fixture
def copy(built: Built, tmp_path: Path) -> Copy:
    cache, app = tmp_path / "cache", tmp_path / "app"
    shutil.copytree(built.cache, cache, symlinks=True)
    shutil.copytree(built.app, app, symlinks=True)
    return Copy(built.program, built.expected, cache, app, environment(cache))


def kernel_files(folder: Path) -> list[Path]:
    """The compiled kernels (.so) under `folder`."""
    return sorted(folder.rglob("*.so"))


def edit_constant(library: Path) -> None:
    """Change the kernel's constant 3.0 to 3.5 in place (same size)."""
    data = bytearray(library.read_bytes())
    at = data.find(struct.pack("<d", 3.0))
    assert at >= 0, "the kernel holds its constant 3.0"
    data[at : at + 8] = struct.pack("<d", 3.5)
    library.write_bytes(bytes(data))


CONSTRUCTOR_C = """
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void hostile(void) {
    const char *mark = getenv("PPY_HOSTILE_MARK");
    FILE *f = fopen(mark ? mark : "/tmp/ppy-hostile-mark", "w");
    if (f) { fputs("constructor ran\\n", f); fclose(f); }
}
"""


def foreign_library(folder: Path) -> Path:
    """A shared library whose constructor writes $PPY_HOSTILE_MARK (skip: no C compiler)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build a foreign shared library with")
    source = folder / "hostile.c"
    source.write_text(CONSTRUCTOR_C)
    out = folder / "hostile.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(out), str(source)], check=True)
    return out


def assert_python_or_coded(done: subprocess.CompletedProcess[str], expected: str) -> None:
    """The program printed Python's answer, or ppy stopped with a coded error; never a
    signal, a traceback from ppy or another answer."""
    assert done.returncode >= 0, f"killed by signal {-done.returncode}: {done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    if done.returncode == 0:
        assert done.stdout == expected, done.stderr
    else:
        assert "[E" in done.stderr, done.stderr
        assert done.stdout in ("", expected), done.stderr


def modes(folder: Path) -> list[tuple[str, int]]:
    """(path, permission bits) of every folder and file under `folder`, itself included."""
    found = [(str(folder), folder.stat().st_mode & 0o777)]
    for path in folder.rglob("*"):
        if not path.is_symlink():
            found.append((str(path), path.stat().st_mode & 0o777))
    return found


def in_parallel(
    cmds: Sequence[Sequence[str]], env: dict[str, str], cwd: Path, timeout: float = 120
) -> list[subprocess.CompletedProcess[str]]:
    """Start every command at once; wait for all (each killed after `timeout`)."""
    procs = [
        subprocess.Popen(
            list(c), env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for c in cmds
    ]
    done = []
    for cmd, proc in zip(cmds, procs, strict=True):
        out, err = proc.communicate(timeout=timeout)
        done.append(subprocess.CompletedProcess(list(cmd), proc.returncode, out, err))
    return done


class Kit:
    """The helpers above, for the test modules (conftest is not importable by name
    under `--import-mode=importlib`)."""

    PPY = PPY
    kernel_files = staticmethod(kernel_files)
    edit_constant = staticmethod(edit_constant)
    foreign_library = staticmethod(foreign_library)
    assert_python_or_coded = staticmethod(assert_python_or_coded)
    modes = staticmethod(modes)
    in_parallel = staticmethod(in_parallel)
    environment = staticmethod(environment)


@pytest.fixture
def kit() -> type[Kit]:
    return Kit
