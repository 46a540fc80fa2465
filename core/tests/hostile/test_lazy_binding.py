"""Issue 32, item 6: a module's sites bind their kernels at their first call, and a
kernel file is still checked before it is opened: one edited after the module was
imported (and its entry checked), before any site ran, is caught then: one coded
warning, the Python answer, nothing of it opened."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MODULE = """\
import numpy as np


def f(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * 3.0 + b


def g(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * 3.0 - b
"""

DRIVER = """\
import os
import struct
import sys
from pathlib import Path

import numpy as np

import ppy
import lazymod
from ppy_core.runtime import abi
from ppy_core.runtime.module import Unbound

names = [n for n in vars(lazymod) if n.startswith("__ppy_site_")]
assert len(names) == 2, names
assert all(type(vars(lazymod)[n]) is Unbound for n in names)  # nothing bound yet
assert not abi._LIBS, abi._LIBS  # no kernel library opened by the import
if sys.argv[1] == "tamper":  # the entry passed its check at import: edit it now
    for library in Path(os.environ["PPY_CACHE_DIR"], "entries").rglob("*.so"):
        data = bytearray(library.read_bytes())
        at = data.find(struct.pack("<d", 3.0))
        data[at : at + 8] = struct.pack("<d", 3.5)
        library.write_bytes(bytes(data))
x = np.arange(8.0)
print(lazymod.f(x, x).sum(), lazymod.g(x, x).sum())
assert all(type(vars(lazymod)[n]) is not Unbound for n in names)  # bound by their calls
stats = ppy.stats()
print(sorted((k, v["fast"], sorted(v["fallback"].items())) for k, v in stats.items()))
print("opened", len(abi._LIBS))
"""


def test_a_kernel_edited_before_its_first_call_is_never_opened(copy, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "lazymod.ppy").write_text(MODULE)
    (project / "driver.py").write_text(DRIVER)
    env = dict(copy.env, PYTHONPATH=str(project))

    def drive(mode: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(project / "driver.py"), mode],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    intact = drive("intact")  # compiles the module, then runs it (its sites bind at calls)
    assert intact.returncode == 0, intact.stderr
    lines = intact.stdout.splitlines()
    assert lines[0] == "112.0 56.0"  # Python's: (3x + x) and (3x - x) summed over 0..7
    assert lines[1] == "[('lazymod:f.1', 1, []), ('lazymod:g.2', 1, [])]"  # the fast path
    assert lines[2] == "opened 1"
    assert "E30" not in intact.stderr, intact.stderr

    tampered = drive("tamper")  # a warm start: checked at import, edited before any call
    assert tampered.returncode == 0, tampered.stderr
    lines = tampered.stdout.splitlines()
    assert lines[0] == "112.0 56.0", tampered.stderr  # Python's answer, not 3.5's
    assert lines[1] == (
        "[('lazymod:f.1', 0, [('failed its check', 1)]), "
        "('lazymod:g.2', 0, [('failed its check', 1)])]"
    )
    assert lines[2] == "opened 0"  # the edited library was never opened
    assert tampered.stderr.count("[E3004]") == 1, tampered.stderr  # one warning, the file's
    assert "failed its check" in tampered.stderr
