"""PPY_VERIFY=1 with a typed-loops function that writes its arrays (NPBench's trmm,
`B[i, j] += np.dot(...)`): the Python path runs on copies of the arguments, so each
side writes once. It once ran on the same arrays after the kernel, writing twice:
the program's answer changed under PPY_VERIFY, and the call still counted verified."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

MODULE = """\
import numpy as np


def trmm_like(alpha: float, A: np.ndarray, B: np.ndarray) -> None:
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1 :, i], B[i + 1 :, j])
    B *= alpha


def shift(A: np.ndarray, B: np.ndarray) -> float:
    s = 0.0
    for i in range(B.shape[0]):
        B[i] += A[i] * 2.0
        s += B[i]
    return s
"""

DRIVER = """\
import importlib.util, sys
import numpy as np
import ppy

fast = ppy.load(sys.argv[1], "writes")
spec = importlib.util.spec_from_file_location("writes_plain", sys.argv[1])
plain = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plain)
rng = np.random.default_rng(4)
A, B = rng.random((12, 12)), rng.random((12, 9))
b1, b2 = B.copy(), B.copy()
fast.trmm_like(1.5, A, b1)
plain.trmm_like(1.5, A, b2)
print("trmm", b1.tobytes() == b2.tobytes())
a, c1 = rng.random(10), rng.random(10)
c2 = c1.copy()
print("shift", fast.shift(a, c1) == plain.shift(a, c2), c1.tobytes() == c2.tobytes())
stats = ppy.stats()
print("verified", sorted(v.get("verified", 0) for k, v in stats.items() if v.get("fast")))
"""


def test_verify_runs_a_writing_loop_once_on_each_side(tmp_path: Path) -> None:
    module = tmp_path / "writes.py"
    module.write_text(MODULE)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "PPY_VERIFY": "1", "PPY_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, str(driver), str(module)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["trmm True", "shift True True", "verified [1, 1]"]
