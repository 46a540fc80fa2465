"""`scipy.special` ufuncs fused with the arithmetic around them: one loop that calls
SciPy's own inner loop, bit for bit SciPy's answer on ordinary and special inputs,
the fast path asserted by `ppy.stats()`; a function whose proof fails stays SciPy."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.special as sc
from _fused import HEADER, compile_pair, same, special_inputs
from _fused import counts as _site_counts
from _fused import unit as _site_unit

import ppy
from ppy_scipy.tables import FUSIBLE_UNARY

pytestmark = pytest.mark.fused

#: every fusible function is proven and compiled with ``PPY_SCIPY_ALL=1`` (minutes);
#: by default a set covering each family (error function, logistic, gamma, normal
#: distribution, Bessel, entropy), which keeps the suite's cold run short
SAMPLE = ("erf", "erfc", "expit", "logit", "gamma", "gammaln", "psi", "ndtr", "ndtri")
SAMPLE += ("log_ndtr", "j0", "y1", "i0e", "entr")
NAMES = sorted(FUSIBLE_UNARY) if os.environ.get("PPY_SCIPY_ALL") == "1" else sorted(SAMPLE)
FUNC = (
    "\n\ndef f_{n}(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:\n"
    "    return special.{n}(x * y) * 2.0 + y\n"
)
SOURCE = (
    HEADER
    + "".join(FUNC.format(n=n) for n in NAMES)
    + (
        "\n\ndef mixed(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:\n"
        "    return special.erf(x) * 2.0 + np.exp(y) - special.gammaln(y)\n"
        "\n\ndef untyped(x, y):\n"
        "    return special.gammaln(x) - special.xlogy(x, y)\n"
    )
)
MODULE = "special_fused"


def _inputs(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed + 1000)
    x = special_inputs(seed, n)
    y = np.where(rng.random(n) < 0.85, 1.0, rng.uniform(0.5, 1.5, n))  # x*y is mostly x
    return x, y


@pytest.fixture(scope="module")
def pair(project: Path) -> tuple[Any, Any, dict[str, Any]]:
    """The module compiled by ppy, the same source as Python, the compile's manifest."""
    return compile_pair(project, MODULE, SOURCE)


def _counts(function: str, manifest: dict[str, Any]) -> tuple[int, int]:
    return _site_counts(MODULE, function, manifest)


def _unit(function: str, manifest: dict[str, Any]) -> dict[str, Any] | None:
    return _site_unit(function, manifest)


def _same(got: np.ndarray, want: np.ndarray) -> str | None:
    return same(got, want)


@pytest.fixture(scope="module")
def verdict(pair: Any) -> dict[str, str]:
    """The llvm backend's proof verdict per function on this SciPy build and CPU
    (computed while `pair` compiled; read from the cache here)."""
    from ppy_llvm._proof import proven

    return proven("numpy", loops=tuple(f"scipy.special:{n}" for n in NAMES))


@pytest.mark.parametrize("name", NAMES)
def test_a_special_function_fuses_and_gives_scipys_bits(
    name: str, pair: Any, verdict: dict[str, str]
) -> None:
    fast, plain, manifest = pair
    unit = _unit(f"f_{name}", manifest)
    if verdict[f"scipy.special:{name}"] != "ok":  # its proof failed: SciPy answers
        assert unit is None
    else:
        assert unit is not None, f"f_{name} got no kernel"
        assert [f"scipy.special:{name}", "d->d"] in unit["data"]["signature"]["loops"]
    before = _counts(f"f_{name}", manifest)
    calls = 0
    for seed, n in enumerate((1, 2, 7, 33, 257, 1000, 20_000)):
        x, y = _inputs(seed, n)
        with np.errstate(all="ignore"):
            got, want = getattr(fast, f"f_{name}")(x, y), getattr(plain, f"f_{name}")(x, y)
        calls += 1
        assert _same(got, want) is None, (name, n, _same(got, want))
    after = _counts(f"f_{name}", manifest)
    assert after[0] - before[0] == (calls if unit else 0)  # every call ran the kernel
    assert after[1] - before[1] == 0


def test_most_special_functions_pass_their_proof_here(pair: Any, verdict: dict[str, str]) -> None:
    failed = {n: v for n, v in verdict.items() if n.startswith("scipy.") and v != "ok"}
    assert len(failed) <= len(NAMES) // 4, failed
    fast, _plain, manifest = pair
    for name in ("erf", "expit", "gammaln", "ndtr"):
        x, y = _inputs(7, 100)
        with np.errstate(all="ignore"):
            getattr(fast, f"f_{name}")(x, y)
        assert _counts(f"f_{name}", manifest)[0] > 0, f"{name} did not run fused"


def test_special_and_numpy_functions_fuse_into_one_loop(pair: Any) -> None:
    fast, plain, manifest = pair
    unit = _unit("mixed", manifest)
    assert unit is not None
    loops = [name for name, _ in unit["data"]["signature"]["loops"]]
    # NumPy's exp: its loop, or computed inline where that is proven (ppy-llvm `_exp`)
    assert [name for name in loops if name != "exp"] == [
        "scipy.special:erf",
        "scipy.special:gammaln",
    ]
    for seed in range(5):
        x, y = _inputs(100 + seed, 5000)
        before = _counts("mixed", manifest)[0]
        with np.errstate(all="ignore"):
            got, want = fast.mixed(x, y), plain.mixed(x, y)
        assert _same(got, want) is None
        assert _counts("mixed", manifest)[0] == before + 1


def test_unannotated_leaves_fuse_one_and_two_input_functions_into_one_loop(pair: Any) -> None:
    fast, plain, manifest = pair
    (record,) = [r for r in manifest["expr_sites"] if r["function"] == "untyped"]
    assert record["leaves"] == ["x", "y"]  # xlogy is in the loop, not a leaf SciPy runs
    assert [name for name, _ in _unit("untyped", manifest)["data"]["signature"]["loops"]] == [
        "scipy.special:gammaln",
        "scipy.special:xlogy",
    ]
    x, y = _inputs(5, 3000)
    y = np.abs(y)
    before = _counts("untyped", manifest)[0]
    with np.errstate(all="ignore"):
        got, want = fast.untyped(x, y), plain.untyped(x, y)
    assert _same(got, want) is None
    assert _counts("untyped", manifest)[0] == before + 1
    # not float64 arrays: the guard sends the call to Python, same answer
    lists = ([1.0, 2.0], [3.0, 4.0])
    assert fast.untyped(*lists).tolist() == plain.untyped(*lists).tolist()


def test_fp_warnings_are_numpys_under_errstate(pair: Any) -> None:
    fast, plain, _manifest = pair
    x = np.array([0.0, -1.0, -2.0, 3.0, 0.5] * 4000)
    y = np.ones_like(x)
    for mode in ("ignore", "warn", "raise"):
        outcome = []
        for module in (fast, plain):
            with warnings.catch_warnings(record=True) as caught, np.errstate(all=mode):
                warnings.simplefilter("always")
                try:
                    value, err = module.f_gammaln(x, y), None
                except FloatingPointError as exc:
                    value, err = None, str(exc)
            outcome.append((value, err, sorted(str(w.message) for w in caught)))
        (gv, ge, gw), (wv, we, ww) = outcome
        assert (ge, gw) == (we, ww), mode
        if gv is not None:
            assert _same(gv, wv) is None


def test_scipy_special_errstate_is_scipys(pair: Any) -> None:
    """Under `special.errstate(...)` other than "ignore" SciPy's loop reports through
    Python (per element, from any thread): the call runs as Python, so the warnings
    and the SpecialFunctionError are SciPy's own; counted as that fallback."""
    from ppy_numpy._runtime.foreign import REASON

    fast, plain, manifest = pair
    x, y = np.array([-1.0, 0.0, 2.0] * 10_000), np.ones(30_000)
    for mode in ("warn", "raise"):
        seen = []
        for module in (fast, plain):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with sc.errstate(all=mode), np.errstate(all="ignore"):
                    try:
                        value, err = module.f_gamma(x, y), None
                    except sc.SpecialFunctionError as exc:
                        value, err = None, str(exc)
            seen.append((value, err, [str(w.message) for w in caught]))
        assert seen[0][1:] == seen[1][1:], mode
        if seen[0][0] is not None:
            assert _same(seen[0][0], seen[1][0]) is None
    (record,) = [r for r in manifest["expr_sites"] if r["function"] == "f_gamma"]
    data = ppy.stats()[f"special_fused:{record['id']}"]
    assert data["fallback"].get(REASON, 0) == 2  # "warn" and "raise": Python ran it
    before = _counts("f_gamma", manifest)[0]
    with np.errstate(all="ignore"):
        fast.f_gamma(x, y)  # back to SciPy's default error state: fused again
    assert _counts("f_gamma", manifest)[0] == before + 1
