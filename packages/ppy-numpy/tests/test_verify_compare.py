"""PPY_VERIFY's comparison on NumPy values (bits, dtype, shape, type) and the IEEE-flags
rule on real compiled sites: a kernel site whose operands overflow reports the same
floating-point warnings as NumPy (it reruns NumPy's path), so verify mode passes,
counts the call verified, and the program still sees NumPy's warning."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import ppy
from ppy_core.runtime.verify import compare

NAN_OTHER = np.array([0x7FF8000000000001], dtype=np.uint64).view(np.float64)[0]


@pytest.mark.parametrize(
    ("got", "want", "named"),
    [
        (np.zeros(3, np.float32), np.zeros(3), "dtype"),
        (np.zeros((2, 2)), np.zeros(4), "shape"),
        (np.float64(1.0), np.array(1.0), "type"),
        (np.array([0.0]), np.array([-0.0]), "flat index 0"),
        (np.array([1.0, 5e-324]), np.array([1.0, 0.0]), "flat index 1"),
        (np.array([True, False]), np.array([True, True]), "flat index 1"),
        (np.arange(6.0).reshape(2, 3).T, np.arange(6.0).reshape(3, 2), "flat index 1"),
        (np.array(["2020-01-01"], "M8[D]"), np.array(["2020-01-02"], "M8[D]"), "[0]"),
        (np.array([1, "a"], dtype=object), np.array([1, "b"], dtype=object), "!="),
    ],
    ids=[
        "dtype",
        "shape",
        "scalar-vs-0d",
        "signed-zero",
        "subnormal",
        "bool",
        "strided",
        "M8",
        "O",
    ],
)
def test_differences_are_named(got: object, want: object, named: str) -> None:
    problem = compare(got, want)
    assert problem is not None
    assert named in problem


@pytest.mark.parametrize(
    "value",
    [
        np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1e308]),
        np.empty(0),
        np.empty((0, 3), np.float32),
        np.arange(12.0).reshape(3, 4)[:, ::2],  # not contiguous
        np.float64(-0.0),
        np.array(["2020-01-01"], "M8[D]"),
        np.array([1, "a", None], dtype=object),
    ],
    ids=["specials", "empty", "empty-2d", "strided", "scalar", "M8", "O"],
)
def test_equal_values_pass(value: np.ndarray) -> None:
    assert compare(value, value.copy()) is None


def test_nan_payloads_are_equal() -> None:
    assert compare(np.array([np.nan]), np.array([NAN_OTHER])) is None


@pytest.mark.needs_llvm
@pytest.mark.needs_cc
def test_ieee_flags_rule_on_a_real_site(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = project / "verify_flags.py"
    path.write_text(
        "import numpy as np\n\n\ndef f(a: np.ndarray, b: np.ndarray):\n    return a * b + a\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PPY_VERIFY", "1")
    mod = ppy.load(path, "verify_flags")
    ppy.reset_stats()
    big = np.full(16, 1e308)
    ordinary = np.linspace(-1.0, 1.0, 16)
    with np.errstate(over="warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = mod.f(big, big)
    assert any("overflow" in str(w.message) for w in caught), [str(w.message) for w in caught]
    with np.errstate(over="ignore"):
        want = big * big + big
    assert compare(got, want) is None
    for _ in range(5):
        mod.f(ordinary, ordinary)
    [data] = [v for k, v in ppy.stats().items() if k.startswith("verify_flags:")]
    assert data["fast"] >= 5, data
    assert data["verified"] >= 5, data
