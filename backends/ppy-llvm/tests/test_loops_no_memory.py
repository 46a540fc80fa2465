"""A typed loop whose scratch buffer cannot be allocated (malloc's NULL) answers as
Python does, never with a signal: in a real process whose address space is capped
(`RLIMIT_AS`) just above what it uses, each function is called on views whose copy
or temporary would need gigabytes (stride-0 views of one element, so the inputs
themselves cost nothing), then the same source as plain Python. Each case's
exception is Python's (its type and NumPy's message), and `ppy.stats()` shows the
compiled function took the call: answered with NumPy's MemoryError itself (np.dot's
copy, `x[idx]`'s gathered copy, an array statement's temporary, an integer outer
update's copies), or handed to
Python after it ran, as the fallback it counts (`np.flip`'s temporary, a masked
mean's selection, a float64 outer update's copy of X). A function that makes no
array is called through the C caller, which hands such a call (RERUN) to the site's
Python too: an empty masked mean is NumPy's NaN and warnings there, not an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """
import numpy as np


def dotted(u, v):
    s = 0.0
    for i in range(2):
        s += np.dot(u, v)
    return s


def gathered(A_row, A_col, A_val, x):
    s = 0.0
    for i in range(len(A_row) - 1):
        s = s * 0.5 + np.dot(x[A_col[A_row[i]:A_row[i + 1]]], A_val[A_row[i]:A_row[i + 1]])
    return s


def flipped(r, n):
    y = np.zeros_like(r)
    s = 1.0
    for k in range(1, 3):
        y[0:n] += 0.5 * np.flip(r[0:n])
        s += y[k]
    return y


def masked(a, s, t, n):
    out = np.zeros(n, dtype=np.float64)
    for i in range(n):
        lo = s + i * t
        hi = lo + t
        m = (a >= lo) & (a < hi)
        v = a[m]
        out[i] = v.mean()
    return out


def masked_total(a: np.ndarray, s: float, t: float, n: int) -> float:
    total = 0.0
    for i in range(n):
        lo = s + i * t
        hi = lo + t
        m = (a >= lo) & (a < hi)
        v = a[m]
        r = v.mean()
        total += r
    return total


def behind(y, n):
    for k in range(2):
        y[1:n] += 0.5 * y[0:n - 1]


def floyd(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path, np.add.outer(path[:, k], path[k, :]))
"""

CHILD = r"""
import json, resource, sys, types, warnings
import numpy as np
from numpy.lib.stride_tricks import as_strided
import ppy

path = sys.argv[1]
mod = ppy.load(path)
plain = types.ModuleType("plain")
exec(compile(open(path).read(), path, "exec"), plain.__dict__)
BIG = 2**31  # a copy of BIG float64s is 16 GiB; every dimension stays below 2**32


def zero_stride(x, shape):
    return as_strided(x, shape=shape, strides=(0,) * len(shape))


def cases(small):
    # (name, args, address space allowed beyond what the process uses)
    one, index, ints = np.ones(1), np.zeros(1, np.int64), np.ones(1, np.int64)
    rows = np.array([0, 2 if small else BIG], np.int64)
    n = 4 if small else BIG
    flip_n = 4 if small else 2**25  # y (256 MiB) is made; its temporary then is not had
    return [
        ("dotted", (zero_stride(one, (n,)), zero_stride(one, (n,))), 512 << 20),
        ("gathered", (rows, zero_stride(index, (n,)), zero_stride(one, (n,)), np.ones(3)),
         512 << 20),
        ("flipped", (zero_stride(one, (flip_n,)), flip_n), 384 << 20),
        ("masked", (zero_stride(0.5 * one, (n,)), 0.0, 1.0, 1), 512 << 20),
        # no array made: the C caller takes the call (RERUN hands it to the site)
        ("masked_total", (zero_stride(0.5 * one, (n,)), 0.0, 1.0, 1), 512 << 20),
        ("behind", (zero_stride(one, (n,)), n), 512 << 20),
        ("floyd", (zero_stride(ints.reshape(1, 1), (n, 2)),), 512 << 20),
        ("floyd", (zero_stride(one.reshape(1, 1), (n, 2)),), 512 << 20),
    ]


def counts(name):
    fast = fallback = 0
    for key, s in ppy.stats().items():
        if key.startswith("nomem:" + name + ".") and "site" not in s:  # function sites
            fast += int(s["fast"])
            fallback += sum(int(v) for v in s["fallback"].values())
    return fast, fallback


def outcome(fn, args):
    try:
        value = fn(*args)
    except Exception as exc:  # what Python raises is the answer compared
        return [type(exc).__name__, str(exc)]
    return ["ok", repr(value)[:200]]


for name, args, _ in cases(True):  # compiled (each signature) and loaded, memory uncapped
    assert outcome(getattr(mod, name), args) == outcome(getattr(plain, name), args), name
assert type(mod.masked_total).__name__ == "LoopCall", type(mod.masked_total)
with warnings.catch_warnings(record=True) as seen:  # an empty mean: NumPy's NaN and warnings
    warnings.simplefilter("always")
    empty = (np.linspace(0.0, 1.0, 5), 5.0, 1.0, 2)
    got_empty = outcome(mod.masked_total, empty)
    got_warned = [str(w.message) for w in seen]
    seen.clear()
    assert got_empty == outcome(plain.masked_total, empty), got_empty
    assert got_warned == [str(w.message) for w in seen], got_warned


def vm_bytes():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmSize")


soft, hard = resource.getrlimit(resource.RLIMIT_AS)
report = []
for name, args, margin in cases(False):
    before = counts(name)
    resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + margin, hard))
    try:
        got = outcome(getattr(mod, name), args)
        want = outcome(getattr(plain, name), args)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    after = counts(name)
    report.append([name, got, want, after[0] - before[0], after[1] - before[1]])
print(json.dumps(report))
"""


def test_no_memory_is_pythons_memory_error_not_a_signal(tmp_path: Path) -> None:
    if not hasattr(os, "fork") or not Path("/proc/self/status").exists():
        pytest.skip("RLIMIT_AS and /proc: Linux only")
    (tmp_path / "nomem.py").write_text(SOURCE)
    env = {**os.environ, "PPY_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "nomem.py")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-3000:])  # < 0: a signal
    report = json.loads(run.stdout.strip().splitlines()[-1])
    # answered by the compiled function (fast, 0 fallbacks) or handed to Python (0, 1)
    how = {
        "dotted": (1, 0),
        "gathered": (1, 0),
        "flipped": (0, 1),
        "masked": (0, 1),
        "masked_total": (0, 1),
        "behind": (1, 0),
    }
    floyd = [(1, 0), (0, 1)]  # int64: its own MemoryError; float64: X's copy, Python
    for name, got, want, fast, fallback in report:
        assert want[0] == "MemoryError", (name, want)
        assert got == want, name
        expected = how[name] if name != "floyd" else floyd.pop(0)
        assert (fast, fallback) == expected, (name, fast, fallback)
