"""Typed loops over NumPy's small ints (issue 28: nussinov, crc16): np.int32 arithmetic
wrapping as NumPy wraps (with its warnings), np.uint8 bitwise ops, Python ints proven
in range by masks and shifts (a Python int result stays a Python int), negative-step
ranges, `for x in a`, builtin max / min, module helpers built in place, and stores
into int32 / uint8 / int64 arrays: bit for bit against Python, the fast path asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from loops_harness import load_both, outcome
from loops_int_programs import module

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

NPBENCH = Path(__file__).resolve().parents[3] / "benchmarks/corpus/npbench/npbench/benchmarks"

COUNT = 24

FIXED = """
import numpy as np
import numpy.typing as npt


def match(b1, b2):
    if b1 + b2 == 3:
        return 1
    else:
        return 0


def nussinov(N: int, seq: npt.NDArray[np.int32], table: npt.NDArray[np.int32]):
    for i in range(N - 1, -1, -1):
        for j in range(i + 1, N):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < N:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < N:
                if i < j - 1:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1] + match(seq[i], seq[j]))
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])


def crc16(data: npt.NDArray[np.uint8], poly: int = 0x8408):
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)
    return crc & 0xFFFF


def grows(data: npt.NDArray[np.uint8]):
    h = 1
    for b in data:
        h = (h << 8) | int(b)
    return h


def wide_int(a: npt.NDArray[np.uint8], k: int):
    s = 0
    for i in range(len(a)):
        s = s + (a[i] & k)
    return s
"""


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("loops_ints"), "loops_ints", FIXED)


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("loops_int_programs"), "int_programs", module(COUNT))


def _same(mod: types.ModuleType, plain: types.ModuleType, name: str, *args: object) -> None:
    fn = getattr(mod, name)
    assert hasattr(fn, "ppy_stats"), f"{name} stayed Python"
    before = fn.ppy_stats()["fast"]
    assert outcome(fn, *args) == outcome(getattr(plain, name), *args)
    assert fn.ppy_stats()["fast"] == before + 1


def _seq(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 4, n, dtype=np.int32)


def test_nussinov_bits(fixed) -> None:
    mod, plain = fixed
    for n, seed in ((40, 0), (1, 1), (0, 2), (7, 3)):
        _same(mod, plain, "nussinov", n, _seq(n, seed), np.zeros((n, n), np.int32))


def test_nussinov_wraps_as_numpy(fixed) -> None:
    """A table near int32's top: `t[i+1, j-1] + 1` and the k-sums wrap, with the warning."""
    mod, plain = fixed
    table = np.full((6, 6), 2**31 - 1, np.int32)
    _same(mod, plain, "nussinov", 6, np.array([1, 2, 3, 0, 1, 2], np.int32), table)
    with np.errstate(over="raise"):  # NumPy raises mid-loop: the site runs Python
        fn = mod.nussinov
        assert outcome(fn, 6, _seq(6, 0), table) == outcome(plain.nussinov, 6, _seq(6, 0), table)


def test_crc16_is_a_python_int(fixed) -> None:
    mod, plain = fixed
    data = np.random.default_rng(42).integers(0, 256, 1600, dtype=np.uint8)
    for args in ((data,), (data, 0x1021), (data[:0],), (data[::3],), (data, 2**31)):
        _same(mod, plain, "crc16", *args)
    value = mod.crc16(data)
    assert type(value) is int
    assert value == plain.crc16(data)


def test_a_rebound_helper_runs_python(fixed) -> None:
    """Python calls whatever the module's `match` is now: rebound, the site runs Python."""
    mod, plain = fixed
    reason = "a helper it builds in place is rebound"
    args = (9, _seq(9, 5), np.zeros((9, 9), np.int32))
    saved = mod.match, plain.match
    try:
        mod.match = plain.match = lambda b1, b2: 2
        before = mod.nussinov.ppy_stats()
        assert outcome(mod.nussinov, *args) == outcome(plain.nussinov, *args)
        after = mod.nussinov.ppy_stats()
        assert after["fast"] == before["fast"]
        assert after["fallback"][reason] == before["fallback"].get(reason, 0) + 1
    finally:
        mod.match, plain.match = saved
    _same(mod, plain, "nussinov", *args)  # its own helper again: the fast path


def _fast_calls(module: str, function: str) -> int:
    """Fast calls of `function`'s sites and specializations (`ppy.stats()`)."""
    stats = ppy.stats().items()
    return sum(int(s["fast"]) for k, s in stats if k.startswith(f"{module}:{function}."))


@pytest.mark.parametrize(
    ("path", "args"),
    [
        ("polybench/nussinov/nussinov_numpy.py", [(40, 0), (1, 1), (0, 2), (13, 3)]),
        ("crc16/crc16_numpy.py", [(1600, 42), (0, 1), (1, 2), (333, 3)]),
    ],
)
def test_npbench_unannotated(tmp_path, path: str, args: list[tuple[int, int]]) -> None:
    """The vendored kernels as written: typed by their calls, the fast path taken, the
    value (its dtype, a Python int's type) and the arrays bit for bit NumPy's."""
    source = (NPBENCH / path).read_text()
    name = Path(path).stem
    mod, plain = load_both(tmp_path, name, source)
    fn = "kernel" if "nussinov" in name else "crc16"
    for n, seed in args:
        rng = np.random.default_rng(seed)
        if fn == "kernel":
            call: tuple[object, ...] = (n, rng.integers(0, 4, n, dtype=np.int32))
        else:
            call = (rng.integers(0, 256, n, dtype=np.uint8),)
        before = _fast_calls(name, fn)
        assert outcome(getattr(mod, fn), *call) == outcome(getattr(plain, fn), *call)
        assert _fast_calls(name, fn) == before + 1


DEFAULTS = """\
import importlib.util, sys
import numpy as np
import ppy

fast = ppy.load(sys.argv[1], "crc16_numpy")
spec = importlib.util.spec_from_file_location("crc_plain", sys.argv[1])
plain = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plain)
data = np.random.default_rng(7).integers(0, 256, 300, dtype=np.uint8)
for args in ((data,), (data, 0x1021), (data,)):
    print(fast.crc16(*args) == plain.crc16(*args))
print(sum(int(v["fast"]) for k, v in ppy.stats().items() if k.startswith("crc16_numpy:crc16.")))
"""


def test_a_default_omitted_under_ppy_verify(tmp_path) -> None:
    """`crc16(data)` leaves `poly` to its default: the specialization is handed every
    argument (its own defaults are placeholders), checked by PPY_VERIFY's Python too."""
    driver = tmp_path / "driver.py"
    driver.write_text(DEFAULTS)
    env = {**os.environ, "PPY_VERIFY": "1", "PPY_CACHE_DIR": str(tmp_path / "cache")}
    source = str(NPBENCH / "crc16/crc16_numpy.py")
    done = subprocess.run(
        [sys.executable, str(driver), source],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True", "True", "True", "3"]


def test_unproven_ints_stay_python(tmp_path) -> None:
    """An int that grows with every iteration, and a Python int beside an np.uint8 not
    proven in 0..255 (NumPy would raise OverflowError), refuse their functions."""
    from ppy_core.compiler.cached import compile_file, load_manifest

    path = tmp_path / "unproven.py"
    path.write_text(FIXED)
    remarks = load_manifest(compile_file(path).entry)["remarks"]
    why = {r["function"]: r["message"] for r in remarks if "typed loops" in r["message"]}
    assert "not proven to fit 64 bits" in why["grows"]
    assert "not proven in 0..255" in why["wide_int"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    k=st.integers(0, COUNT - 1),
    a=hnp.arrays(np.int32, st.integers(0, 7), elements=st.integers(-(2**31), 2**31 - 1)),
    u=hnp.arrays(np.uint8, st.integers(0, 7)),
    w=hnp.arrays(np.int64, st.integers(0, 4), elements=st.integers(-9, 9)),
    n=st.integers(-2, 9),
)
def test_random_int_programs(programs, k, a, u, w, n) -> None:
    mod, plain = programs
    _same(mod, plain, f"q{k}", a, u, w, n)


def test_every_program_compiles(programs) -> None:
    mod, _ = programs
    stayed = [k for k in range(COUNT) if not hasattr(getattr(mod, f"q{k}"), "ppy_stats")]
    assert not stayed
