"""A module with a NumPy site and a pandas site: the llvm backend builds their kernels
into two libraries (tensor and columnar), and each keeps its own file in the entry
(they once shared a name, and the NumPy kernel's symbol went missing: E2004)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _pdcheck import assert_same, compile_pair

import ppy

pytestmark = pytest.mark.needs_llvm

SOURCE = """import numpy as np
import pandas as pd


def f(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * 2.0 + b * b


def g(s: pd.Series, t: pd.Series) -> pd.Series:
    return s * 2.0 + t * t
"""


def test_numpy_and_pandas_sites_of_one_module_both_run_fast(project) -> None:
    pair = compile_pair(project, "mixed_libraries", SOURCE)
    x = np.linspace(-1.0, 1.0, 33)
    s = pd.Series(x, name="s")
    before = ppy.stats()
    got = pair.fast.f(x, x[::-1].copy())
    assert got.tobytes() == pair.plain.f(x, x[::-1].copy()).tobytes()
    assert_same(pair.fast.g(s, s), pair.plain.g(s, s), "g")
    after = ppy.stats()
    for site in ("mixed_libraries:f.1", "mixed_libraries:g.2"):
        assert after[site]["fast"] == before.get(site, {}).get("fast", 0) + 1, after[site]
