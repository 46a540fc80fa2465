"""Sites whose kernels differ only in their literals (ppy-llvm's `_hoist`): one body,
each site's wrapper passing its own table of literals (issue 32 item 6).

Each function of the generated module is the same expression with literals of its
own (one or two slots; 0.0 and -0.0, a subnormal, a huge value, inf, equal literals
sharing a slot): every site's answer must equal Python's bit for bit on the fast
path, all of them from one compiled body. Binding the sites (a warm start binds
each at its first call) looks each entry up with one dlsym on the library's handle
(`abi.address_in`): no ctypes function object is made per site (~13 µs each, the
cost that put a module of 600 such sites 80 ms behind Python's start).
"""

from __future__ import annotations

import _ctypes
import ctypes
from pathlib import Path

import numpy as np
import pytest
from _npharness import compile_pair

import ppy

pytestmark = pytest.mark.needs_llvm

#: each function's (c, d) in `np.maximum(a * c, b) - b / d + c`: literals written as
#: Python reads them (1e309 is inf; -0.0 is a negated zero)
TABLES = [
    ("1.5", "0.25"),
    ("-0.0", "3.0"),
    ("0.0", "7.0"),
    ("5e-324", "1e308"),
    ("1e309", "2.0"),
    ("0.1", "0.1"),  # equal literals: one slot
    ("-2.75", "1e-300"),
    ("123456.789", "-0.5"),
]


def source() -> str:
    lines = ["import numpy as np", ""]
    for i, (c, d) in enumerate(TABLES):
        lines += [f"def f{i}(a: np.ndarray, b: np.ndarray) -> np.ndarray:"]
        lines += [f"    return np.maximum(a * {c}, b) - b / {d} + {c}", ""]
    return "\n".join(lines)


@pytest.fixture
def emits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The IR texts LLVM compiles while the test runs (`_toolchain._emit`)."""
    from ppy_llvm import _toolchain

    seen: list[str] = []
    real = _toolchain._emit

    def counting(ir_text: str, ir_path: Path) -> bytes:
        seen.append(ir_text)
        return real(ir_text, ir_path)

    monkeypatch.setattr(_toolchain, "_emit", counting)
    return seen


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts (the test resets them) of dlsym calls on a handle (`_ctypes.dlsym`) and of
    ctypes function objects made from a library (`CDLL.__getitem__`, what `getattr`
    on a CDLL calls)."""
    counts = {"dlsym": 0, "function objects": 0}
    real_dlsym, real_item = _ctypes.dlsym, ctypes.CDLL.__getitem__

    def dlsym(handle: int, name: str) -> int:
        counts["dlsym"] += 1
        return real_dlsym(handle, name)  # type: ignore[no-any-return]

    def item(self: ctypes.CDLL, name: str) -> object:
        counts["function objects"] += 1
        return real_item(self, name)

    monkeypatch.setattr(_ctypes, "dlsym", dlsym)
    monkeypatch.setattr(ctypes.CDLL, "__getitem__", item)
    return counts


def test_each_site_answers_with_its_own_literals_from_one_body(
    project: Path, emits: list[str], lookups: dict[str, int]
) -> None:
    folder = project / "hoisted"
    folder.mkdir()
    (folder / "pyproject.toml").write_text((project / "pyproject.toml").read_text())
    pair = compile_pair(folder, "hoisted", source())
    names = [f"f{i}" for i in range(len(TABLES))]
    assert all(pair.compiled(name) for name in names)
    # one body takes the tables; every site has a wrapper of its own (its symbol)
    assert sum("ptr noalias %consts" in text for text in emits) == 1
    symbols = {r["unit"]["data"]["symbol"] for name in names for r in pair.records(name)}
    assert len(symbols) == len(TABLES)

    a = np.array([-2.0, -0.0, 0.0, 1e-310, 0.5, 3.0, np.inf, -np.inf, np.nan, 1e300])
    b = np.array([1.0, -1.0, 0.0, -0.0, 2.0, np.nan, 1.0, -3.0, 4.0, -1e300])
    before = {sid: v["fast"] for sid, v in ppy.stats().items()}
    lookups.update(dict.fromkeys(lookups, 0))  # the compile's (its proofs) aside
    for name in names:
        with np.errstate(all="ignore"):
            got = getattr(pair.fast, name)(a, b)
            want = getattr(pair.plain, name)(a, b)
        assert got.tobytes() == want.tobytes(), name
    stats = ppy.stats()
    for name in names:
        (sid,) = pair.site_ids(name)
        assert stats[sid]["fast"] == before.get(sid, 0) + 1, name  # the kernel ran
    # binding the sites made no ctypes function object (the one: the library's CPU
    # check when it was opened), one dlsym per entry looked up (the site's symbol, its
    # _splat, _rows_nan and _swaps entries), and calling them again none
    assert lookups["function objects"] <= 1
    assert 0 < lookups["dlsym"] <= 4 * len(TABLES)
    calls = lookups["dlsym"]
    for name in names:
        with np.errstate(all="ignore"):
            getattr(pair.fast, name)(a, b)
    assert lookups["dlsym"] == calls
