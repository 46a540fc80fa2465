"""Typed loops with a scalar prologue run as Python (`loops_prologue`), arrays made
later in the body (`loops_locals`) and array statements over whole 2-D arrays (flat
views, `loops_flat`): NPBench's deriche unmodified and unannotated, and random
bodies of those forms, bit for bit against Python with the fast path asserted."""

from __future__ import annotations

import random
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from loops_harness import FLOATS, SPECIALS, load_both, outcome, random_programs

DERICHE = (
    Path(__file__).resolve().parents[3]
    / "benchmarks/corpus/npbench/npbench/benchmarks/polybench/deriche/deriche_numpy.py"
)


@pytest.fixture(scope="module")
def deriche(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return load_both(tmp_path_factory.mktemp("deriche"), "deriche_numpy", DERICHE.read_text())


def _image(rng: np.random.Generator, h: int, w: int, special: bool) -> np.ndarray:
    img = rng.standard_normal((h, w))
    if special and img.size:
        picks = rng.random(img.shape) < 0.3
        img[picks] = rng.choice(SPECIALS, size=int(picks.sum()))
    return img


def _layout(x: np.ndarray, how: int) -> np.ndarray:
    """The same values as a C-order, Fortran-order or strided array."""
    if how == 1:
        return np.asfortranarray(x)
    if how == 2:
        return np.repeat(x, 2, axis=-1)[..., ::2]
    return x


def _run(fn: object, first: object, M: np.ndarray, how: int) -> tuple:
    """What `fn(first, M')` does, M' a fresh copy of M in layout `how` (the harness's
    `outcome` would copy it C-ordered): the value, M' after, the warnings' messages."""
    x = _layout(M.copy(), how)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(first, x)  # type: ignore[operator]
            what: tuple = ("ok", type(value), np.asarray(value).tobytes(), np.shape(value))
            what += (getattr(value, "strides", None), getattr(value, "flags", {}) == {})
        except Exception as exc:  # compared, never swallowed
            what = ("raise", type(exc), str(exc))
    return (*what, x.tobytes(), sorted({str(w.message) for w in caught}))


def test_deriche_bit_identical(deriche) -> None:
    mod, plain = deriche
    rng = np.random.default_rng(27)
    shapes = [(0, 0), (1, 1), (2, 2), (1, 5), (5, 1), (2, 7), (3, 3), (9, 17), (40, 20)]
    for h, w in shapes:
        for special in (False, True):
            for alpha in (np.float64(0.25), 0.25, np.float64(-800.0), np.float64(1e-300)):
                for how in (0, 1, 2):
                    img = _image(rng, h, w, special)
                    want = _run(plain.kernel, alpha, img, how)
                    assert _run(mod.kernel, alpha, img, how) == want, (h, w, special, alpha, how)


def test_deriche_fast_path_counted(deriche) -> None:
    """The whole kernel is one typed-loops function: C-order images take it."""
    import ppy

    mod, plain = deriche
    ppy.reset_stats()
    img = _image(np.random.default_rng(1), 12, 10, False)
    assert outcome(mod.kernel, np.float64(0.25), img) == outcome(plain.kernel, 0.25, img)
    fast = {site: s for site, s in ppy.stats().items() if s.get("fast")}
    assert any(site.startswith("deriche_numpy:kernel.1@") for site in fast), fast
    assert not any(s.get("fallback") for s in fast.values())


def _warned(fn: object, *args: object) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)  # type: ignore[operator]
    return [f"{w.category.__name__}: {w.message} (line {w.lineno})" for w in caught]


def test_prologue_warnings_once_when_python_runs_the_rest(deriche) -> None:
    """alpha = -800 overflows np.exp in the prologue; a Fortran-order image makes the
    compiled function hand the call back (flat views need C order): the prologue's
    warnings come once, on the program's lines, as in Python."""
    import ppy

    mod, plain = deriche
    img = np.asfortranarray(_image(np.random.default_rng(2), 6, 5, False))
    ppy.reset_stats()
    got = _warned(mod.kernel, np.float64(-800.0), img.copy(order="F"))
    assert got == _warned(plain.kernel, np.float64(-800.0), img.copy(order="F"))
    assert got  # the overflow warnings do come
    stats = [s for site, s in ppy.stats().items() if site.startswith("deriche_numpy:kernel.1@")]
    assert any(s["fallback"] for s in stats), stats  # the rest ran as Python


def test_deriche_read_only_and_other_types_run_python(deriche) -> None:
    mod, plain = deriche
    img = _image(np.random.default_rng(3), 4, 4, False)
    img.setflags(write=False)  # read-only input: the function writes only its own arrays
    assert outcome(mod.kernel, np.float64(0.5), img) == outcome(plain.kernel, 0.5, img)
    ints = np.arange(12).reshape(3, 4)
    assert outcome(mod.kernel, 0.5, ints) == outcome(plain.kernel, 0.5, ints)
    # float32 stays Python (array statements compile over float64 only): NumPy's bits
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        single = _image(np.random.default_rng(5), 5, 6, True).astype(np.float32)
    alpha = np.float32(0.5)
    assert outcome(mod.kernel, alpha, single) == outcome(plain.kernel, alpha, single)
    assert outcome(mod.kernel, np.float64(0.5), single) == outcome(
        plain.kernel, np.float64(0.5), single
    )
    assert outcome(mod.kernel, 1, img) == outcome(plain.kernel, 1, img)


# -- random bodies: a scalar prologue, arrays made later, whole-array statements ----------
PROLOGUE = [
    "np.exp(-s)",
    "2.0 ** (-s)",
    "s * 0.5 - 1.0",
    "np.sqrt(s)",
    "(1.0 - np.exp(-s)) / (1.0 + s)",
    "-np.exp(-2.0 * s)",
]
SCALARS = ["c", "d", "e", "k"]
COLUMN = [
    "y[:, j] = {a} * M[:, j] + {b} * y[:, j - 1]",
    "y[:, j] = {a} * M[:, j - 1] - {b} * y[:, j - 1] + M[:, j]",
    "y[:, j] = {a} * (M[:, j] + y[:, j - 1])",
]
ROW = [
    "w[i, :] = {a} * y[i + 1, :] + {b} * w[i + 1, :]",
    "w[i, :] = {a} * M[i, :] / ({b} + w[i + 1, :])",
]
WHOLE = [
    "z = {a} * (y + w)",
    "z = (y - w) * {a}",
    "z = y + w",
    "z = {a} * (M + y) / ({b} * w + M)",
]
AFTER = ["z[:] = {a} * (y + z)", "z += w * {a}", "z[:] = z / {a} - M", "z *= y - w"]


def _pick(r: random.Random, template: str) -> str:
    return template.format(a=r.choice(SCALARS), b=r.choice(SCALARS))


def _program(r: random.Random, k: int) -> str:
    lines = [
        f"def p{k}(s, M):",
        f"    c = {r.choice(PROLOGUE)}",
        f"    d = e = c * {r.choice(['s', '0.5', 'c'])} + {r.choice(PROLOGUE)}",
        f"    k = {r.choice(['1', '2', '-3'])}",
        "    y = np.zeros_like(M)",
        "    for j in range(1, M.shape[1]):",
        f"        {_pick(r, r.choice(COLUMN))}",
        "    w = np.zeros_like(M)",
        "    for i in range(M.shape[0] - 2, -1, -1):",
        f"        {_pick(r, r.choice(ROW))}",
        f"    {_pick(r, r.choice(WHOLE))}",
        f"    {_pick(r, r.choice(AFTER))}",
        "    return z",
    ]
    return "\n".join(lines)


COUNT = 10


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> tuple[types.ModuleType, ...]:
    return random_programs(tmp_path_factory, "loops_prologue", 20261201, COUNT, _program)


def test_random_bodies_compile_whole(bodies) -> None:
    """Each generated function runs as one typed-loops function on C-order input."""
    import ppy

    mod, plain = bodies
    M = np.random.default_rng(4).standard_normal((5, 6))
    for k in range(COUNT):
        ppy.reset_stats()
        fn = getattr(mod, f"p{k}")
        assert outcome(fn, 0.75, M) == outcome(getattr(plain, f"p{k}"), 0.75, M), k
        fast = [s for site, s in ppy.stats().items() if f":p{k}.1@" in site and s["fast"]]
        assert fast, (k, ppy.stats())


ELEMENTS = st.one_of(FLOATS, st.sampled_from(SPECIALS))


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k=st.integers(0, COUNT - 1),
    M=hnp.arrays(np.float64, st.tuples(st.integers(0, 6), st.integers(0, 7)), elements=ELEMENTS),
    s=st.one_of(FLOATS, st.sampled_from(SPECIALS)),
    how=st.sampled_from([0, 0, 0, 1, 2]),
)
def test_random_bodies_match_python(bodies, k: int, M, s: float, how: int) -> None:
    import ppy

    mod, plain = bodies
    fn = getattr(mod, f"p{k}")
    ppy.reset_stats()
    got = _run(fn, s, M, how)
    assert got == _run(getattr(plain, f"p{k}"), s, M, how)
    ran = [v for site, v in ppy.stats().items() if f":p{k}.1@" in site]
    if how == 0 and got[0] == "ok":  # C order (and a prologue that did not raise, as
        # `2.0 ** 1024` does): the compiled function ran, or handed the call back
        assert ran, k
        assert ran[0]["fast"] + sum(ran[0]["fallback"].values()) == 1, ran


BROADCAST = """
import numpy as np


def scaled_sum(s, A, B):
    c = np.exp(-s)
    for i in range(A.shape[0]):
        A[i, :] = c * A[i, :]
    z = c * (A + B)
    z += B * c
    return z
"""


def test_flat_statements_of_shapes_numpy_broadcasts_run_python(tmp_path: Path) -> None:
    """`z = c * (A + B)` with B broadcast (or A, so that z is not A's shape): the
    function hands the call back on entry, Python broadcasts; equal shapes run fast."""
    import ppy

    mod, plain = load_both(tmp_path, "broadcast_flat", BROADCAST)
    rng = np.random.default_rng(6)
    cases = [
        ((3, 4), (1, 4)),
        ((1, 4), (3, 4)),
        ((3, 4), (3, 1)),
        ((2, 3), (3, 2)),
        ((3, 4), (3, 4)),
    ]
    for a, b in cases:
        A, B = rng.standard_normal(a), rng.standard_normal(b)
        ppy.reset_stats()
        assert outcome(mod.scaled_sum, 0.5, A, B) == outcome(plain.scaled_sum, 0.5, A, B), (a, b)
        ran = [
            s for site, s in ppy.stats().items() if site.startswith("broadcast_flat:scaled_sum.1@")
        ]
        fast = sum(s["fast"] for s in ran)
        assert fast == int(a == b), (a, b, ran)
        assert fast + sum(sum(s["fallback"].values()) for s in ran) == 1, (a, b, ran)
