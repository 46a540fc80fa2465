"""Issue 32 item 6, a warm start within 50 ms of Python: a cached program whose
specializing dispatchers are called with plain Python objects (a list) describes
them without asking the installed metadata which runtime adapters exist (a builtin
class is no library's): `ppy_core.interface.discovery` (~20 ms to import on a
start) is never loaded."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from pipeline_harness import Harness, write

from ppy_core.cache.records import RACY_NS

pytest.importorskip("numpy")

PROGRAM = """\
import sys

import numpy as np


def joined(items: list) -> int:
    words = [str(x) for x in items]
    return len("-".join(words)) + 3


def scaled(a: np.ndarray) -> np.ndarray:
    return a * 2.0 + 1.0


print(joined([1, 2, 3]), float(np.sum(scaled(np.ones(4)))))
print("discovery:", "ppy_core.interface.discovery" in sys.modules, file=sys.stderr)
"""


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPY_")}
    env.pop("PYTHONPATH", None)
    return {**env, "PPY_CACHE_DIR": str(cache)}


def test_a_warm_start_describes_a_list_without_a_metadata_scan(
    harness: Harness, tmp_path: Path
) -> None:
    folder = write(tmp_path / "proj", {"pyproject.toml": '[project]\nname = "warm"\n'})
    program = folder / "prog.py"
    program.write_text(PROGRAM)
    old = time.time() - 60  # a file changed seconds ago is not trusted by the records
    os.utime(program, (old, old))
    env = _env(harness.cache)
    want = harness.python(program, env=env)
    assert want.returncode == 0, want.stderr
    assert harness.ppy(program, env=env).stdout == want.stdout  # the cold compile
    # an entry's files seconds old are checked again by the next start (`records`)
    time.sleep(RACY_NS / 1e9 + 0.5)
    for _attempt in range(4):  # a record taken within seconds of an edit is retaken
        warm = harness.ppy(program, env=env)
        assert warm.returncode == 0, warm.stderr
        assert warm.stdout == want.stdout
        if "discovery: False" in warm.stderr:
            break
    assert "discovery: False" in warm.stderr, warm.stderr
