"""Annotations that say the exact type NPBench passes compile what its observed
signatures compile (issue 27, `benchmarks/_npbench_annotate.py`).

* `x: A | B`, arrays of one element and library and two ranks (lenet's relu takes its
  convolutions' rank-4 outputs and its dense layers' rank-2 ones): an array of that
  element of unknown rank (`typer._either`), as the rankless annotation was, not
  Unknown (which kept relu a speculative float64 site whose guard refused float32).
  A call with another element runs Python (the guard checks the element).
* `x: f32 array | f64 array` (resnet's helpers) has no one type: typed by each call's
  signature, as unannotated (`Typer.parameter`), not Unknown in every specialization.
* `float_n: np.float64` (polybench's `datatype(N)`) types as the observed NumPy scalar
  (`described_type` of ("instance", "numpy", "numpy.float64"): both the plugin's
  `external_types`), whose arithmetic is NumPy's: the site is over the array.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, outcome_difference

import ppy
from ppy_core.runtime.observed import explain

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
from typing import Annotated

import numpy as np
import numpy.typing as npt

import ppy


def relu(
    x: Annotated[npt.NDArray[np.float32], ppy.Shape(None, None, None, None)]
    | Annotated[npt.NDArray[np.float32], ppy.Shape(None, None)],
):
    return np.maximum(x, 0)


def doubled(
    x: Annotated[npt.NDArray[np.float32], ppy.Shape(None)]
    | Annotated[npt.NDArray[np.float64], ppy.Shape(None)],
):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0 + 1.0
    return out


def doubled_plain(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0 + 1.0
    return out


def scaled(X: Annotated[npt.NDArray[np.float64], ppy.Shape(None, None)], float_n: np.float64):
    return np.sqrt(float_n) * X - X / float_n
"""


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "exact_annotations", SOURCE)


def _fast(pair: Pair, function: str) -> int:
    return sum(
        int(d.get("fast", 0))
        for k, d in ppy.stats().items()
        if k.startswith(f"{pair.name}:{function}.")
    )


def _same(pair: Pair, function: str, *args: object) -> int:
    """Both builds on `args`: outcomes equal bit for bit; the fast calls it made."""
    before = _fast(pair, function)
    got = call(getattr(pair.fast, function), args, all="ignore")
    want = call(getattr(pair.plain, function), args, all="ignore")
    assert outcome_difference(got, want) is None, (function, outcome_difference(got, want))
    return _fast(pair, function) - before


def test_a_union_of_ranks_is_an_array_of_its_element(pair: Pair) -> None:
    rng = np.random.default_rng(3)
    four = rng.standard_normal((2, 5, 5, 3)).astype(np.float32)
    two = rng.standard_normal((4, 7)).astype(np.float32)
    two[0, :2] = [-0.0, np.inf]
    assert _same(pair, "relu", four) == 1
    assert _same(pair, "relu", two) == 1
    two[1, 1] = np.nan  # a NaN: NumPy's bits, from the fast call or not
    _same(pair, "relu", two)
    assert _same(pair, "relu", two.astype(np.float64)) == 0  # another element: Python


def _outcomes(function: object) -> list[str]:
    """What each signature of a specializing dispatcher ran (`explain`), ids dropped."""
    return [line.split(" (")[0] for line in explain(function)]


def test_a_union_of_elements_is_typed_by_each_call(pair: Pair) -> None:
    # no one type: the parameter is typed by its signature, as unannotated (resnet's
    # helpers take float32 and, after a float64 convolution, float64); Unknown in the
    # specialization kept the float64 loop Python
    x = np.random.default_rng(5).standard_normal(37)
    for name in ("doubled", "doubled_plain"):
        assert _same(pair, name, x) == 1
        _same(pair, name, x.astype(np.float32))
        assert _same(pair, name, x) == 1
    assert _outcomes(pair.fast.doubled) == _outcomes(pair.fast.doubled_plain)
    assert "numpy f64[1-D, C]: specialized" in _outcomes(pair.fast.doubled)


def test_an_annotated_numpy_scalar_is_the_observed_one(pair: Pair) -> None:
    (record,) = pair.records("scaled")
    assert "X" in record["leaves"]
    X = np.random.default_rng(4).standard_normal((6, 5))
    assert _same(pair, "scaled", X, np.float64(600.0)) == 1
    assert _same(pair, "scaled", X, np.float64(0.0)) >= 0  # NumPy's warnings and inf
