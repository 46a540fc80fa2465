"""PPY_VERIFY=1: every fast-path call also runs the Python path and compares.

The whole suite honours it (``PPY_VERIFY=1 pytest packages/ppy-numpy/tests``: the
runtime reads the variable when a module's sites are bound, after the session
started). Here: a representative module runs in shadow mode in a fresh process, and
a wrong kernel is caught and named.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

MODULE = """\
import numpy as np
import numpy.typing as npt


def triad(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    return a * b + c


def poly(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], c: npt.NDArray[np.float64]):
    return 2.0 * a + 3.0 * b * c - a / b


def trig(a: np.ndarray, b: np.ndarray):
    return np.sin(a) * 2.0 + np.exp(b)


def select(a: np.ndarray, b: np.ndarray, c: np.ndarray):
    return np.where(a > b, a * c, b - c)


def dot(a: np.ndarray, b: np.ndarray):
    return np.sum(a * b)


def stats(a: np.ndarray):
    return (a * a).mean(), np.max(np.abs(a)), a.min(), np.prod(a * 0.5)
"""

DRIVER = """\
import sys
import numpy as np
import ppy

mod = ppy.load(sys.argv[1], "verified")
assert not type(mod.__dict__["__ppy_site_0"]).__name__ == "Site", "not wrapped"
rng = np.random.default_rng(0)
specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, 1e308, 1.0])
with np.errstate(all="ignore"):
    for n in (*range(10), 127, 128, 129, 255, 256, 257, 100_003):
        a, b, c = (rng.standard_normal(n) for _ in range(3))
        for x in (a, b, c):
            x[rng.random(n) < 0.2] = specials[0]
            x[rng.random(n) < 0.1] = specials[rng.integers(0, len(specials))]
        mod.triad(a, b, c), mod.poly(a, b, c), mod.trig(a, b), mod.select(a, b, c)
        mod.dot(a, b)
        if n:
            mod.stats(a)
fast = sum(s["fast"] for s in ppy.stats().values())
print("fast calls verified:", fast)
assert fast > 50, ppy.stats()
"""


def test_module_in_shadow_mode_subprocess(project: Path, tmp_path: Path) -> None:
    source = project / "verify_module.py"
    source.write_text(MODULE, encoding="utf-8")
    driver = tmp_path / "drive.py"
    driver.write_text(DRIVER, encoding="utf-8")
    env = {**os.environ, "PPY_VERIFY": "1"}
    done = subprocess.run(
        [sys.executable, str(driver), str(source)],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fast calls verified:" in done.stdout


def test_a_wrong_kernel_is_caught_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel computing a + b behind a site whose Python path is a - b."""
    import ppy
    from ppy_core.runtime import dispatch
    from ppy_core.runtime.abi import kernel_address
    from ppy_llvm import KernelBuilder, compile_specs
    from ppy_numpy._runtime import make_site

    b = KernelBuilder()
    x, y = b.leaf(), b.leaf()
    kernel = compile_specs([b.build(b.op("add", x, y))], "verify_test")[0]
    address, keep = kernel_address(kernel)  # type: ignore[misc]
    sig = kernel.signature
    site = make_site(address, sig.kind, sig.leaves, sig.loops, np.subtract, "wrong:1", keep)
    monkeypatch.setenv("PPY_VERIFY", "1")
    checked = dispatch.wrap("wrong:1", site, np.subtract)
    ones = np.ones(4)
    with pytest.raises(ppy.VerifyError, match="wrong:1"):
        checked(ones, ones)
    # NaN results compare NaN-aware; the same kernel behind a + b passes
    fine = dispatch.wrap("right:1", site, np.add)
    assert np.isnan(fine(np.full(4, np.nan), ones)).all()


def test_this_session_honours_ppy_verify(project: Path) -> None:
    """In a `PPY_VERIFY=1` session every site the tests load is wrapped in the check."""
    from _npharness import compile_pair, verify_mode

    pair = compile_pair(project, "verify_session", MODULE)
    site = pair.fast.__dict__["__ppy_site_0"]
    wrapped = verify_mode() or os.environ.get("PPY_FALLBACK") in ("warn", "error")
    assert (type(site).__name__ != "Site") == wrapped
