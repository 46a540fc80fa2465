"""PPY_VERIFY=1: every fast-path call also runs the Python path and compares.

The whole suite honours it (``PPY_VERIFY=1 pytest packages/ppy-numpy/tests``: the
runtime reads the variable when a module's sites are bound, after the session
started). Here: a representative module runs in shadow mode in a fresh process, and
a wrong kernel is caught and named.
"""

from __future__ import annotations

import operator
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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

from ppy_core.runtime.module import bound

mod = ppy.load(sys.argv[1], "verified")
assert not type(bound(mod.__dict__["__ppy_site_0"])).__name__ == "Site", "not wrapped"
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


STORES = """\
import numpy as np
import numpy.typing as npt


def interior(B, A):
    B[1:-1, 1:-1] = 0.25 * (A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])


def shift(u):
    u[1:-1] = 0.5 * (u[2:] + u[:-2]) - u[1:-1] * 0.25


def scale_row(A, i, v, w):
    A[i, :] -= v * w + 1.0


def f32_iadd(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]):
    a += b * 2.5 - 1.0


def i64_assign(t: npt.NDArray[np.int64], a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]):
    t[...] = a * 3 + b
"""

STORES_DRIVER = """\
import sys
import numpy as np
import ppy

mod = ppy.load(sys.argv[1], "verified_stores")
rng = np.random.default_rng(1)
with np.errstate(all="ignore"):
    for n in (3, 4, 17, 130):
        A = rng.standard_normal((n, n))
        A[rng.random((n, n)) < 0.2] = rng.choice([-0.0, 5e-324, 1e300])  # a NaN: NumPy's
        mod.interior(np.zeros((n, n)), A)
        mod.interior(A, A)  # in place: the right side first
        u = rng.standard_normal(n * 7)
        mod.shift(u)
        mod.scale_row(A, 1, A[2], A[0, ::-1])
        a32, b32 = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
        mod.f32_iadd(a32, b32)
        base = rng.integers(-(2**63), 2**63 - 1, n * 3, endpoint=True)
        mod.i64_assign(base[1:], base[:-1], base[:-1])  # overlapping views
stats = ppy.stats()
fast = sum(s["fast"] for s in stats.values())
verified = sum(s.get("verified", 0) for s in stats.values())
print("store calls verified:", verified)
assert fast >= 24 and verified == fast, stats
"""


@pytest.mark.parametrize(
    ("module", "driver", "said"),
    [(MODULE, DRIVER, "fast calls verified:"), (STORES, STORES_DRIVER, "store calls verified:")],
    ids=["expressions", "stores"],
)
def test_module_in_shadow_mode_subprocess(
    project: Path, tmp_path: Path, module: str, driver: str, said: str
) -> None:
    """A module's every fast call, stores too (their Python on a copy of the target,
    the right side read first), checked against Python in a `PPY_VERIFY=1` process."""
    source = project / f"verify_{tmp_path.name}.py"
    source.write_text(module, encoding="utf-8")
    drive = tmp_path / "drive.py"
    drive.write_text(driver, encoding="utf-8")
    env = {**os.environ, "PPY_VERIFY": "1"}
    done = subprocess.run(
        [sys.executable, str(drive), str(source)],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert said in done.stdout


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


def _add_kernel() -> tuple[int, Any, Any]:
    """A compiled `x + y` kernel: its address, what keeps it loaded, its signature."""
    from ppy_core.runtime.abi import kernel_address
    from ppy_llvm import KernelBuilder, compile_specs

    b = KernelBuilder()
    x, y = b.leaf(), b.leaf()
    kernel = compile_specs([b.build(b.op("add", x, y))], "verify_test")[0]
    address, keep = kernel_address(kernel)  # type: ignore[misc]
    return address, keep, kernel.signature


def test_a_wrong_store_is_caught_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A store site writing a + b whose statement is `t[k] = a - b`: the target differs
    from the copy Python wrote, and the site is named. The same kernel behind
    `t[k] = a + b` passes, an overlapping right side included (read before the write)."""
    import ppy
    from ppy_core.runtime import dispatch
    from ppy_numpy._runtime import make_site

    address, keep, sig = _add_kernel()
    monkeypatch.setenv("PPY_VERIFY", "1")

    def python(plus: bool) -> Any:
        def statement(t: Any, k: Any, a: Any, b: Any) -> None:
            operator.setitem(t, k, a + b if plus else a - b)

        return statement

    for plus in (False, True):
        name = f"store:{int(plus)}"
        site = make_site(
            address, sig.kind, sig.leaves, sig.loops, python(plus), name, keep, store="="
        )
        dispatch.register(name, site)
        checked = dispatch.wrap(name, site, python(plus))
        base = np.arange(9.0)
        if not plus:
            with pytest.raises(ppy.VerifyError, match=r"store:0.*the target"):
                checked(base, slice(1, None), base[:-1], np.ones(8))
            continue
        checked(base, slice(1, None), base[:-1], base[:-1])
        assert base.tolist() == [0.0, *(2.0 * np.arange(8.0)).tolist()]
        assert ppy.stats()[name]["verified"] == 1


def test_this_session_honours_ppy_verify(project: Path) -> None:
    """In a `PPY_VERIFY=1` session every site the tests load is wrapped in the check."""
    from _npharness import compile_pair, verify_mode

    from ppy_core.runtime.module import bound

    pair = compile_pair(project, "verify_session", MODULE)
    site = bound(pair.fast.__dict__["__ppy_site_0"])  # a site binds at its first call
    wrapped = verify_mode() or os.environ.get("PPY_FALLBACK") in ("warn", "error")
    assert (type(site).__name__ != "Site") == wrapped
