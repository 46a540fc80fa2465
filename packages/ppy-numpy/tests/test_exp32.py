"""float32 ``np.exp`` fused inline (ppy-llvm's `_exp32`): NumPy's own float32 exp loop,
step for step, proven per build against NumPy itself (`_proof.inline32_verdicts`).

Unannotated functions over float32 arrays (NPBench's softmax among them) take the fast
path where the proof holds, with NumPy's bits, warnings and exceptions; where it does
not hold the site stays NumPy's with E2048 and every answer is still NumPy's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, outcome_difference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ppy

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def shifted(x, m):
    return np.exp(x - m)


def scaled(x, s):
    return np.exp(x * s) + 1.0


def softmax(x):
    tmp_max = np.max(x, axis=-1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.sum(tmp_out, axis=-1, keepdims=True)
    return tmp_out / tmp_sum
"""


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "exp32", SOURCE)


@pytest.fixture(scope="module")
def proven() -> bool:
    from ppy_llvm._exp32 import INLINE_EXP32
    from ppy_llvm._proof import inline32_verdicts

    return inline32_verdicts("numpy").get(INLINE_EXP32) == "ok"


def test_proven_on_avx512(proven: bool) -> None:
    """On an AVX-512 host (NumPy's AVX512F loop: the one `_exp32` follows, matched there
    on all 2^32 inputs) the proof holds; elsewhere it decides by itself."""
    from ppy_llvm._lower import x86_isa

    if x86_isa() != "avx512":
        pytest.skip("not an AVX-512 host: the proof decides by itself")
    assert proven


def fast_of(function: str) -> int:
    """Fast-path calls of `function`'s sites, its specializations' included."""
    prefix = f"exp32:{function}."
    return sum(int(s["fast"]) for k, s in ppy.stats().items() if k.startswith(prefix))


_SPECIAL32 = np.array(
    [0x7FC00000, 0xFFC00000, 0x7FA00000, 0x00000001, 0x80000001, 0x007FFFFF, 0x7F7FFFFF],
    dtype=np.uint32,
).view(np.float32)
_VALUES = st.one_of(
    st.floats(-110.0, 95.0, width=32),
    st.sampled_from(
        [0.0, -0.0, np.inf, -np.inf, 88.72283935546875, -103.97208404541015625, 88.7228, -87.4]
        + [float(v) for v in _SPECIAL32]
    ),
)
_SHAPES = st.sampled_from([(0,), (1,), (7,), (16,), (17,), (33,), (3, 0), (4, 5), (2, 3, 19)])
_ERRSTATES = st.sampled_from(
    [{"all": "ignore"}, {}, {"over": "raise"}, {"under": "warn"}, {"all": "raise"}]
)


def _array(draw: Any, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    return np.array(draw(st.lists(_VALUES, min_size=n, max_size=n)), dtype=np.float32).reshape(
        shape
    )


@st.composite
def _operands(draw: Any) -> tuple[np.ndarray, np.ndarray]:
    shape = draw(_SHAPES)
    x = _array(draw, shape)
    broadcast = draw(st.booleans()) and len(shape) > 1
    m = _array(draw, (*shape[:-1], 1)) if broadcast else _array(draw, shape)
    return x, m


def _ordinary(*arrays: np.ndarray) -> bool:
    """No NaN can come out and no flag is raised (the fast path answers itself)."""
    with np.errstate(all="raise"):
        try:
            out = np.exp(arrays[0] - arrays[1]) if len(arrays) == 2 else np.exp(arrays[0])
        except FloatingPointError:
            return False
    return arrays[0].size > 0 and not bool(np.isnan(out).any())


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operands=_operands(), errstate=_ERRSTATES)
def test_shifted_exp_is_numpys(
    pair: Pair, proven: bool, operands: tuple[np.ndarray, np.ndarray], errstate: dict[str, str]
) -> None:
    x, m = operands
    before = fast_of("shifted")
    got = call(pair.fast.shifted, (x, m), **errstate)
    want = call(pair.plain.shifted, (x, m), **errstate)
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    if proven and _ordinary(x, m):
        assert fast_of("shifted") == before + 1
    if not proven:
        assert fast_of("shifted") == before


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shape=st.sampled_from([(1, 1, 5, 5), (2, 3, 4, 16), (2, 2, 8, 33), (1, 1, 0, 4)]),
    seed=st.integers(0, 2**16),
    scale=st.sampled_from([1.0, 30.0, 1e4]),
)
def test_softmax_unannotated(
    pair: Pair, proven: bool, shape: tuple[int, ...], seed: int, scale: float
) -> None:
    x = (np.random.default_rng(seed).random(shape, dtype=np.float32) - 0.5) * np.float32(scale)
    before = fast_of("softmax")
    got = call(pair.fast.softmax, (x,))
    want = call(pair.plain.softmax, (x,))
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    assert got.value.dtype == np.float32
    if proven and x.size:
        assert fast_of("softmax") > before


def test_every_exponent_and_the_cut_offs(pair: Pair, proven: bool) -> None:
    """A 1-in-1021 sample of all 2^32 float32 bit patterns in one call: NumPy's bits, or
    (a NaN comes out) NumPy answers itself; then every float32 in a stretch around each
    cut-off, where NumPy returns inf / 0 and raises the flag itself."""
    bits = (np.arange(0, 2**32, 1021, dtype=np.uint64)).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[~np.isnan(x)]
    zero = np.zeros_like(x)
    before = fast_of("shifted")
    got = call(pair.fast.shifted, (x, zero), all="ignore")
    want = call(pair.plain.shifted, (x, zero), all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    for edge in (88.72283935546875, -103.97208404541015625, -87.33654):
        centre = int(np.array([edge], dtype=np.float32).view(np.uint32)[0])
        near = np.arange(centre - 4096, centre + 4096, dtype=np.uint32).view(np.float32)
        for errstate in ({"all": "ignore"}, {"all": "warn"}, {"over": "raise"}):
            got = call(pair.fast.scaled, (near, 1.0), **errstate)
            want = call(pair.plain.scaled, (near, 1.0), **errstate)
            assert outcome_difference(got, want) is None, (edge, errstate)
    assert (fast_of("shifted") == before + 1) if proven else fast_of("shifted") == before


def test_refused_where_not_proven(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a passing proof a float32 exp is E2048, as before `_exp32`: the site
    stays NumPy's, and its answer is NumPy's."""
    from ppy_llvm import _proof

    monkeypatch.setattr(_proof, "inline32_verdicts", lambda library: {"exp_f32_inline": "no"})
    source = (
        "import numpy as np\nimport numpy.typing as npt\n\n\n"
        "def annotated(x: npt.NDArray[np.float32]):\n    return np.exp(x * 0.5) + 1.0\n"
    )
    unproven = compile_pair(project, "exp32_unproven", source)
    records = unproven.records("annotated")
    assert records, unproven.manifest
    assert all(r["unit"] is None for r in records), records
    reasons = " ".join(" ".join(r["reasons"]) for r in records)
    assert "E2048" in reasons, reasons
    x = np.linspace(-3, 3, 50, dtype=np.float32)
    got, want = call(unproven.fast.annotated, (x,)), call(unproven.plain.annotated, (x,))
    assert outcome_difference(got, want) is None
