"""Two-input `scipy.special` ufuncs (`xlogy`, `gammainc`, `beta`, `jv`, ...) fused with
the arithmetic around them: one loop that calls SciPy's own ``dd->d`` loop blockwise
after its per-build proof, bit for bit SciPy's answer on ordinary and special inputs
(hypothesis included), with numbers for either argument, the fast path asserted by
`ppy.stats()`; the FP warnings of the arithmetic before a SciPy loop are NumPy's."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.special as sc
from _fused import HEADER, compile_pair, counts, loops, same, special_inputs, unit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ppy_scipy.tables import FUSIBLE_BINARY

pytestmark = pytest.mark.fused

#: every two-input fusible function with ``PPY_SCIPY_ALL=1`` (its proofs take about a
#: minute); by default one of each family: logarithms and entropies, incomplete gamma,
#: beta and binomial, Bessel of real order, Box-Cox
SAMPLE = ("xlogy", "xlog1py", "kl_div", "rel_entr", "gammainc", "gammaincc", "beta")
SAMPLE += ("betaln", "binom", "poch", "jv", "boxcox")
NAMES = sorted(FUSIBLE_BINARY) if os.environ.get("PPY_SCIPY_ALL") == "1" else sorted(SAMPLE)
ARRAYS = "x: NDArray[np.float64], y: NDArray[np.float64]"
FUNC = (
    "\n\ndef f_{n}(" + ARRAYS + ") -> NDArray[np.float64]:\n"
    "    return special.{n}(x, y) * 2.0 + y\n"
)
SOURCE = (
    HEADER
    + "".join(FUNC.format(n=n) for n in NAMES)
    + f"""

def score({ARRAYS}) -> NDArray[np.float64]:
    return special.gammaln(x) - special.xlogy(x, y)


def numbers(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return special.xlogy(x, 2.0) + special.binom(x, 3) - special.jv(2.5, x)


def product_first({ARRAYS}) -> NDArray[np.float64]:
    return special.xlogy(x * y, y) + special.erf(x * y)


def left_to_scipy({ARRAYS}) -> NDArray[np.float64]:
    return special.zeta(x, y) * 2.0 + special.hyp0f1(x, y)
"""
)
MODULE = "special_binary"


@pytest.fixture(scope="module")
def pair(project: Path) -> tuple[Any, Any, dict[str, Any]]:
    """The module compiled by ppy, the same source as Python, the compile's manifest."""
    return compile_pair(project, MODULE, SOURCE)


@pytest.fixture(scope="module")
def verdict(pair: Any) -> dict[str, str]:
    """The llvm backend's proof verdict per function on this SciPy build and CPU
    (computed while `pair` compiled; read from the cache here)."""
    from ppy_llvm._proof import proven

    names = [f"scipy.special:{n}" for n in NAMES]
    return proven("numpy", loops=names, binary=names)


def _inputs(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Both arguments from the special mix; a third of the second one positive and
    small (the domain of most of these functions), some equal to the first."""
    rng = np.random.default_rng(seed + 2000)
    x, y = special_inputs(seed, n), special_inputs(seed + 500, n)
    y = np.where(rng.random(n) < 0.35, rng.uniform(0.0, 5.0, n), y)
    y = np.where(rng.random(n) < 0.1, x, y)
    return x, y


def _call(module: Any, name: str, *args: Any) -> Any:
    with np.errstate(all="ignore"):
        return getattr(module, name)(*args)


@pytest.mark.parametrize("name", NAMES)
def test_a_two_input_function_fuses_and_gives_scipys_bits(
    name: str, pair: Any, verdict: dict[str, str]
) -> None:
    fast, plain, manifest = pair
    function = f"f_{name}"
    if verdict[f"scipy.special:{name}"] != "ok":  # its proof failed: SciPy answers
        assert unit(function, manifest) is None
    else:
        assert [f"scipy.special:{name}", "dd->d"] in loops(function, manifest)
    before = counts(MODULE, function, manifest)
    sizes = (1, 2, 7, 33, 257, 1000, 20_000)
    for seed, n in enumerate(sizes):
        x, y = _inputs(seed, n)
        got, want = _call(fast, function, x, y), _call(plain, function, x, y)
        assert same(got, want) is None, (name, n, same(got, want))
    after = counts(MODULE, function, manifest)
    assert after[0] - before[0] == (len(sizes) if unit(function, manifest) else 0)
    assert after[1] == before[1]


def test_every_sampled_two_input_function_passes_its_proof_here(verdict: dict[str, str]) -> None:
    failed = {n: v for n, v in verdict.items() if n.startswith("scipy.") and v != "ok"}
    assert not failed, failed


def test_gammaln_minus_xlogy_is_one_loop(pair: Any) -> None:
    fast, plain, manifest = pair
    (record,) = [r for r in manifest["expr_sites"] if r["function"] == "score"]
    assert record["leaves"] == ["x", "y"]
    assert loops("score", manifest) == [
        ["scipy.special:gammaln", "d->d"],
        ["scipy.special:xlogy", "dd->d"],
    ]
    for seed in range(4):
        x, y = _inputs(40 + seed, 4099)
        before = counts(MODULE, "score", manifest)[0]
        assert same(_call(fast, "score", x, y), _call(plain, "score", x, y)) is None
        assert counts(MODULE, "score", manifest)[0] == before + 1
    # a float standing in for `y` broadcasts (NumPy's scalar rules), still fused where
    # no FP flag is raised (one would send the call to Python: it may raise there)
    x = np.random.default_rng(50).uniform(0.5, 30.0, 1000)
    before = counts(MODULE, "score", manifest)[0]
    assert same(_call(fast, "score", x, 3.5), _call(plain, "score", x, 3.5)) is None
    assert counts(MODULE, "score", manifest)[0] == before + 1


def test_views_and_broadcast_shapes_give_scipys_bits(pair: Any) -> None:
    """2-D operands, a row broadcast against a matrix and strided views: NumPy's
    broadcasting and result layout; fused wherever each loop input's rows lie in place
    (a column broadcast against a matrix is read with stride 0: NumPy answers it, as
    it does a broadcast map with a NaN result, whose payload follows NumPy's order)."""
    fast, plain, manifest = pair
    x, y = _inputs(70, 2000)
    x2, y2 = x.reshape(50, 40), y.reshape(50, 40)
    rng = np.random.default_rng(71)
    a2, b2 = rng.uniform(0.5, 30.0, (50, 40)), rng.uniform(0.0, 5.0, (50, 40))
    cases = [
        ((x2, y2), True),
        ((x2.T, y2.T), True),
        ((x2, np.abs(y2[0])), False),
        ((a2, b2[0]), True),
        ((a2[:, ::2], b2[:, 1::2]), False),
        ((a2, b2[:, :1]), False),
    ]
    for args, must_fuse in cases:
        before = counts(MODULE, "score", manifest)[0]
        got, want = _call(fast, "score", *args), _call(plain, "score", *args)
        assert same(got, want) is None, [a.shape for a in args]
        assert got.flags.c_contiguous == want.flags.c_contiguous
        if must_fuse:
            assert counts(MODULE, "score", manifest)[0] == before + 1, [a.shape for a in args]


def test_numbers_for_either_argument(pair: Any) -> None:
    """`xlogy(x, 2.0)`, `binom(x, 3)`, `jv(2.5, x)`: the number is a constant the loop
    reads with stride 0, as SciPy's own call does."""
    fast, plain, manifest = pair
    assert [name for name, _ in loops("numbers", manifest)] == [
        "scipy.special:xlogy",
        "scipy.special:binom",
        "scipy.special:jv",
    ]
    for seed, n in enumerate((1, 9, 300, 5000)):
        x, _ = _inputs(60 + seed, n)
        before = counts(MODULE, "numbers", manifest)[0]
        assert same(_call(fast, "numbers", x), _call(plain, "numbers", x)) is None
        assert counts(MODULE, "numbers", manifest)[0] == before + 1


def test_other_dtypes_run_scipy(pair: Any) -> None:
    fast, plain, manifest = pair
    x = np.arange(1, 40, dtype=np.int64)
    y = np.arange(1, 40, dtype=np.float32)
    before = counts(MODULE, "score", manifest)
    for args in ((x, x), (y, y), (x.astype(np.float64), y)):
        assert same(_call(fast, "score", *args), _call(plain, "score", *args)) is None
    after = counts(MODULE, "score", manifest)
    assert after == (before[0], before[1] + 3)  # each a guard fallback: SciPy answered


def test_functions_left_to_scipy_are_leaves(pair: Any) -> None:
    """`zeta` (a Python function) and `hyp0f1` (its loop reports through Python) are
    not fused: SciPy runs them, the arithmetic around them is one loop."""
    fast, plain, manifest = pair
    (record,) = [r for r in manifest["expr_sites"] if r["function"] == "left_to_scipy"]
    assert record["leaves"] == ["special.zeta(x, y)", "special.hyp0f1(x, y)"]
    x, y = np.linspace(1.5, 9.0, 500), np.linspace(0.5, 3.0, 500)
    before = counts(MODULE, "left_to_scipy", manifest)[0]
    got, want = _call(fast, "left_to_scipy", x, y), _call(plain, "left_to_scipy", x, y)
    assert same(got, want) is None
    assert counts(MODULE, "left_to_scipy", manifest)[0] == before + 1


@pytest.mark.parametrize("mode", ["ignore", "warn", "raise"])
def test_flags_of_the_arithmetic_before_a_scipy_loop_are_numpys(pair: Any, mode: str) -> None:
    """SciPy's loops test and clear the FP flags (to report through `sf_error`): the
    kernel keeps the overflow of `x * y` across them, so NumPy's warning or error for
    the multiplication is raised as by the Python expression."""
    fast, plain, _manifest = pair
    x = np.array([1e300, 2.0, -3.0, 0.5] * 300)
    y = np.array([1e10, 1.0, 2.0, 4.0] * 300)
    outcome = []
    for module in (fast, plain):
        with warnings.catch_warnings(record=True) as caught, np.errstate(all=mode):
            warnings.simplefilter("always")
            try:
                value, err = module.product_first(x, y), None
            except FloatingPointError as exc:
                value, err = None, str(exc)
        outcome.append((value, err, sorted(str(w.message) for w in caught)))
    (gv, ge, gw), (wv, we, ww) = outcome
    assert (ge, gw) == (we, ww)
    if mode == "warn":
        assert ww, "the multiplication overflows: NumPy warns"
    if gv is not None:
        assert same(gv, wv) is None


FLOATS = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True, width=64)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    data=st.data(),
    name=st.sampled_from(NAMES),
    n=st.integers(min_value=1, max_value=300),
)
def test_hypothesis_two_input_functions_match_scipy(
    pair: Any, data: Any, name: str, n: int
) -> None:
    fast, plain, manifest = pair
    x = data.draw(hnp.arrays(np.float64, n, elements=FLOATS))
    y = data.draw(hnp.arrays(np.float64, n, elements=FLOATS))
    function = f"f_{name}"
    before = counts(MODULE, function, manifest)[0]
    got, want = _call(fast, function, x, y), _call(plain, function, x, y)
    assert same(got, want) is None, (name, same(got, want))
    if unit(function, manifest) is not None:
        assert counts(MODULE, function, manifest)[0] == before + 1


def test_scipy_loops_are_the_ones_numpy_resolves() -> None:
    """Every fusible two-input function resolves float64 inputs to its ``dd->d`` loop
    on this SciPy (the table's premise)."""
    f8 = np.dtype(np.float64)
    for name in FUSIBLE_BINARY:
        ufunc = getattr(sc, name)
        assert isinstance(ufunc, np.ufunc), name
        assert ufunc.nin == 2, name
        assert ufunc.resolve_dtypes((f8, f8, None)) == (f8, f8, f8), name
