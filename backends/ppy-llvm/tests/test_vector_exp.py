"""The inline float64 exp (`ppy_llvm._exp`): glibc's steps on VEC lanes, used in place
of NumPy's exp loop only where the proof says it gives NumPy's bits (and flags).

On a host where NumPy's exp loop is glibc's scalar exp with FMA (x86-64 with AVX2 +
FMA and no AVX-512F, glibc), the proof must accept it, kernels must run it fast and
give NumPy's bits and warnings; anywhere, a wrong variant must fail the proof."""

from __future__ import annotations

import functools
import platform
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ppy_llvm import KernelBuilder, KernelSpec, _exp, compile_specs
from ppy_llvm._proof import inline_verdicts, run_inline_proof

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

#: the brief's and glibc's edges: overflow at 709.78..., subnormal results below
#: -708.39, zero below -745.13, the main path's ends 2^-54 and 512
EDGES = [
    0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 1e-310, -1e-310,
    2.2250738585072014e-308, 1e-300, -1e-300, 709.78, 709.79, 709.782712893384,
    709.7827128933841, -745.13, -745.14, -745.1332191019411, -745.1332191019412,
    -708.4, -708.39, 2.0**-54, -(2.0**-54), 2.0**-55, 511.99999999999994, 512.0, -512.0,
    -511.99999999999994, 1023.9, -1023.9, 1024.0, 1e300, -1e300, 1.7976931348623157e308,
    0.5, -0.5, 1.0, -1.0, 0.7, -20.0, 20.0, 100.0, -100.0,
]  # fmt: skip
NAN_PAYLOADS = np.array(
    [0x7FF8000000000ABC, 0xFFF80000DEADBEEF, 0x7FF0000000000001, 0xFFF0000000ABCDEF],
    dtype=np.uint64,
).view(np.float64)  # quiet with payloads, and signalling ones
SPECIALS = np.concatenate([np.array(EDGES), NAN_PAYLOADS])
LENGTHS = (0, *range(1, 34), 63, 64, 65, 255, 256, 257, 1000)


def glibc_exp_host() -> bool:
    """Whether NumPy's float64 exp loop here is glibc's exp with FMA: x86-64 with FMA
    but no AVX-512F (NumPy has its own exp for AVX-512F), and glibc."""
    from ppy_llvm._host import host

    features = set(host()[1].split(","))
    return (
        platform.machine() == "x86_64"
        and platform.libc_ver()[0] == "glibc"
        and "+fma" in features
        and "+avx512f" not in features
    )


needs_glibc_exp = pytest.mark.skipif(
    not glibc_exp_host(), reason="NumPy's exp here is not glibc's FMA exp"
)


def bits(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).view(np.uint64)


# -- the table and the emitted function on their own --------------------------------


def test_table_is_glibcs() -> None:
    """All 256 words equal glibc 2.36's __exp_data.tab (dumped with gdb: its sha256 and
    spot words)."""
    import hashlib

    tab = _exp.table()
    assert len(tab) == 256
    assert tab[:4] == (0, 0x3FF0000000000000, 0x3C9B3B4F1A88BF6E, 0x3FEFF63DA9FB3335)
    assert tab[-2:] == (0x3C5305C14160CC89, 0x3FEFF3C22B8F71F1)
    digest = hashlib.sha256(b"".join(w.to_bytes(8, "little") for w in tab)).hexdigest()
    assert digest == "a4014caf214c2bab90ea0fdf3f57941e0235ae04dc2282a6c2f72e7a480c87e4"


def _spec(kind: str, op: str = _exp.INLINE_EXP, fastmath: bool = False) -> KernelSpec:
    """`exp(x)`, the gaussian of benchmarks/numpy_programs.py, or sum(exp(x*y))."""
    b = KernelBuilder()
    x, y = b.leaf(), b.leaf()
    if kind == "bare":
        return b.build(b.op("unary", x, op=op), fastmath=fastmath)
    if kind == "sum":
        return b.build(b.op("unary", b.op("mul", x, y), op=op), reduce="add")
    z = b.op("div", b.op("sub", x, b.const(0.1)), b.const(0.7))
    e = b.op("unary", b.op("mul", b.op("mul", b.const(-0.5), z), z), op=op)
    return b.build(b.op("div", e, b.const(0.7 * 2.5066282746310002)), fastmath=fastmath)


def _reference(kind: str, x: np.ndarray, y: np.ndarray) -> Any:
    if kind == "bare":
        return np.exp(x)
    if kind == "sum":
        return np.sum(np.exp(x * y))
    return np.exp(-0.5 * ((x - 0.1) / 0.7) * ((x - 0.1) / 0.7)) / (0.7 * 2.5066282746310002)


@functools.cache
def site(kind: str, op: str = _exp.INLINE_EXP, fastmath: bool = False) -> Any:
    """A dispatcher site of `_spec(kind, op)` whose fallback is NumPy's answer."""
    from ppy_core.runtime.abi import kernel_address
    from ppy_numpy._runtime import make_site

    (kernel,) = compile_specs([_spec(kind, op, fastmath)], "tests-vexp")
    found = kernel_address(kernel)
    assert found is not None
    sig = kernel.signature
    return make_site(
        found[0], sig.kind, sig.leaves, sig.loops, lambda x, y: _reference(kind, x, y),
        f"vexp:{kind}:{op}:{fastmath}", found[1],
    )  # fmt: skip


def test_the_inline_exp_calls_no_library_loop() -> None:
    from ppy_llvm._build import signature_of

    assert _spec("bare").loop_ops() == ()
    assert _spec("gaussian").loop_ops() == ()
    assert _spec("bare", "exp").loop_ops() == ("exp",)
    # a Python float still may not stand in below it (the exp loop's rule, `weak_leaves`)
    for kind in ("bare", "gaussian"):
        assert signature_of(_spec(kind)).leaves == signature_of(_spec(kind, "exp")).leaves
    assert signature_of(_spec("bare")).leaves == "aw"


def run_fast(kind: str, x: np.ndarray, y: np.ndarray | None = None, **kw: Any) -> Any:
    """The site's answer, asserting the kernel ran (no fallback; an empty array is
    NumPy's, by the dispatcher's guard)."""
    s = site(kind, **kw)
    s.reset_stats()
    with np.errstate(all="ignore"):
        got = s(x, x if y is None else y)
    stats = s.stats()
    want = ({}, 1) if x.size else ({"guard: empty": 1}, 0)
    assert (stats["fallback"], stats["fast"]) == want, stats
    return got


@needs_glibc_exp
@pytest.mark.parametrize(
    ("kind", "fastmath"), [("bare", False), ("gaussian", False), ("bare", True)]
)  # a fastmath gaussian's own arithmetic is not NumPy's; its exp still is
def test_specials_at_every_length_and_offset(kind: str, fastmath: bool) -> None:
    rng = np.random.default_rng(7)
    for n in LENGTHS:
        for off in (0, 1, 3):
            m = n + off
            buf = np.where(rng.random(m) < 0.5, rng.choice(SPECIALS, m), rng.uniform(-800, 800, m))
            x = buf[off:]
            got = run_fast(kind, x, fastmath=fastmath)
            with np.errstate(all="ignore"):
                want = _reference(kind, x, x)
            assert np.array_equal(bits(got), bits(want)), (n, off)


@needs_glibc_exp
def test_every_special_in_every_lane() -> None:
    for lane in range(8):
        for value in SPECIALS:
            x = np.full(19, 0.25)
            x[lane] = x[lane + 8] = value
            x[16 + lane % 3] = value  # the scalar tail too
            got = run_fast("bare", x)
            with np.errstate(all="ignore"):
                assert np.array_equal(bits(got), bits(np.exp(x))), (lane, value)


@needs_glibc_exp
def test_a_million_values_and_the_reduction() -> None:
    rng = np.random.default_rng(11)
    x = rng.uniform(-750, 750, 1_000_000)
    with np.errstate(all="ignore"):
        assert np.array_equal(bits(run_fast("bare", x)), bits(np.exp(x)))
        y = rng.uniform(0.0, 1.0, x.size)
        got = run_fast("sum", x * 1e-3, y)
        assert bits(got) == bits(np.sum(np.exp(x * 1e-3 * y)))


@needs_glibc_exp
@settings(max_examples=300, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.integers(0, 70),
        elements=st.one_of(
            st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
            st.floats(-760.0, 760.0),
            st.sampled_from(list(SPECIALS)),
        ),
    )
)
def test_hypothesis_bitwise(x: np.ndarray) -> None:
    for kind in ("bare", "gaussian"):
        got = run_fast(kind, x)
        with np.errstate(all="ignore"):
            want = _reference(kind, x, x)
        assert np.array_equal(bits(got), bits(want)), kind


@needs_glibc_exp
@pytest.mark.parametrize(
    "values",
    [[710.0], [-746.0], [-720.0], [1.0, 2.0, 709.79, 3.0], [0.5] * 9 + [-745.14] + [0.5] * 9,
     [1e-310] * 17, [np.inf, -np.inf, np.nan], [NAN_PAYLOADS[2]] * 3, [0.3] * 33],
)  # fmt: skip
@pytest.mark.parametrize("mode", ["raise", "warn", "ignore"])
def test_flags_as_numpys_warnings(values: list[float], mode: str) -> None:
    """Under np.errstate(all=mode) the site falls back (NumPy warns or raises) exactly
    where NumPy's own exp reports; with no reported flag the kernel's answer stands."""
    x = np.array(values)

    def outcome(fn: Any) -> tuple[Any, ...]:
        with warnings.catch_warnings(record=True) as caught, np.errstate(all=mode):
            warnings.simplefilter("always")
            try:
                value, error = fn(), None
            except FloatingPointError as exc:
                value, error = None, str(exc)
        got = None if value is None else bits(value).tobytes()
        return got, error, [str(w.message) for w in caught]

    s = site("bare")
    s.reset_stats()
    want = outcome(lambda: np.exp(x))
    assert outcome(lambda: s(x, x)) == want
    numpy_reports = want[1] is not None or bool(want[2])
    assert (s.stats()["fast"] == 1) == (not numpy_reports), s.stats()


# -- the proof ----------------------------------------------------------------------


@needs_glibc_exp
def test_the_proof_accepts_it_here() -> None:
    assert inline_verdicts("numpy")[_exp.INLINE_EXP] == "ok"


def _unfused(self: Any, a: str, b: str, c: str) -> str:
    """glibc's non-FMA build: a*b + c rounded twice."""
    return self.binop("fadd", self.binop("fmul", a, b), c)


@pytest.mark.parametrize("verdict", ["ok", "bits differ at n=3", "this CPU has no FMA"])
def test_only_a_proven_inline_exp_replaces_the_loop(
    verdict: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Proven: the kernel calls no loop. Not: it calls NumPy's exp loop as before (and
    meets that loop's own proof, E2104 where it fails); other loops stay."""
    from ppy_llvm import _proof

    monkeypatch.setattr(_proof, "inline_verdicts", lambda library: {_exp.INLINE_EXP: verdict})
    spec = _spec("gaussian", "exp")
    got = _proof.inline_proven(spec, "numpy")
    assert got.loop_ops() == (() if verdict == "ok" else ("exp",))
    assert [n.op for n in got.nodes] == [n.op for n in spec.nodes]
    sin = KernelBuilder()
    x = sin.leaf()
    other = sin.build(sin.op("unary", sin.op("unary", x, op="sin"), op="exp"))
    assert _proof.inline_proven(other, "numpy").loop_ops() == (
        ("sin",) if verdict == "ok" else ("sin", "exp")
    )


def test_no_adapter_keeps_the_loop_and_its_refusal() -> None:
    from ppy_llvm import LlvmBackend
    from ppy_llvm._proof import inline_proven

    spec = inline_proven(_spec("bare", "exp"), "no-such-library")
    assert spec.loop_ops() == ("exp",)
    refusal = LlvmBackend().can_lower_spec(spec, "no-such-library")
    assert refusal is not None
    assert "[E2104]" in refusal


_TABLE = _exp.table
WRONG = {
    "a constant off": ("C2", _exp.C2 + (1 << 20)),
    "a table word off by one": (
        "table",
        lambda: tuple(w + (k == 2 * 77 + 1) for k, w in enumerate(_TABLE())),
    ),
    "no fused multiply-add": ("fma", _unfused),
    # the same bits, but subnormal inputs run the main path: r*r raises underflow
    "flags only": ("TINY_TOP", 0),
}


@pytest.mark.parametrize("variant", list(WRONG))
def test_the_proof_rejects_a_wrong_variant(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name, value = WRONG[variant]
    if name == "fma":
        monkeypatch.setattr(_exp._Ops, "fma", value)
    else:
        monkeypatch.setattr(_exp, name, value)
    verdict = run_inline_proof("numpy", (_exp.INLINE_EXP,))[_exp.INLINE_EXP]
    assert verdict != "ok"
    if variant == "flags only" and glibc_exp_host():  # the bits agree: only flags tell
        assert verdict.startswith("FP flags differ"), verdict


# -- through the pipeline -----------------------------------------------------------

SOURCE = """import numpy as np


def gaussian(x, mu, s):
    return np.exp(-0.5 * ((x - mu) / s) * ((x - mu) / s)) / (s * 2.5066282746310002)


def bare(x):
    return np.exp(x)
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Any]:
    """(ppy module, plain module, manifest) of SOURCE."""
    import importlib.util

    import ppy
    from ppy_core.compiler.cached import compile_file, load_manifest

    folder = tmp_path_factory.mktemp("vexp")
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "vexp-tests"\n\n[tool.ppy]\nbackends = ["llvm"]\n'
    )
    path = Path(folder / "vexpprog.py")
    path.write_text(SOURCE)
    manifest = load_manifest(compile_file(path).entry)
    fast = ppy.load(path, "vexpprog")
    spec = importlib.util.spec_from_file_location("vexpprog_plain", path)
    assert spec is not None
    assert spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    return fast, plain, manifest


@needs_glibc_exp
def test_programs_compile_with_no_exp_loop(program: tuple[Any, Any, Any]) -> None:
    _, _, manifest = program
    units = {r["function"]: r["unit"] for r in manifest["expr_sites"]}
    assert None not in (units["gaussian"], units["bare"])
    for unit in units.values():
        assert unit["data"]["signature"]["loops"] == []  # NumPy's exp loop: [["exp", "d->d"]]


@needs_glibc_exp
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 33, 1_000_000])
def test_programs_run_fast_and_bitwise(program: tuple[Any, Any, Any], n: int) -> None:
    """Ordinary inputs run the kernel; with specials (whose flags may send a call to
    NumPy) the answer is still NumPy's."""
    import ppy

    fast, plain, _ = program
    rng = np.random.default_rng(n)
    ordinary = rng.uniform(-3, 3, n)
    special = np.where(rng.random(n) < 0.2, rng.choice(SPECIALS, n), rng.uniform(-40, 40, n))
    for x in (ordinary, special):
        for name, args in (("gaussian", (x, 0.1, 0.7)), ("bare", (x,))):
            ppy.reset_stats()
            with np.errstate(all="ignore"):
                got, want = getattr(fast, name)(*args), getattr(plain, name)(*args)
            assert (type(got), got.shape) == (type(want), want.shape)
            assert np.array_equal(bits(got), bits(want)), name
            if n and x is ordinary:
                ran = [v for k, v in ppy.stats().items() if k.startswith(f"vexpprog:{name}")]
                assert ran
                assert all((v["fast"], v["fallback"]) == (1, {}) for v in ran), ran


@needs_glibc_exp
@pytest.mark.parametrize("mode", ["raise", "warn"])
def test_programs_warn_as_numpy(program: tuple[Any, Any, Any], mode: str) -> None:
    fast, plain, _ = program
    x = np.array([1.0, 800.0, -800.0, 2.0, np.nan] + [0.5] * 12)

    def outcome(fn: Any) -> tuple[Any, ...]:
        with warnings.catch_warnings(record=True) as caught, np.errstate(all=mode):
            warnings.simplefilter("always")
            try:
                value, error = bits(fn(x)).tobytes(), None
            except FloatingPointError as exc:
                value, error = None, str(exc)
        return value, error, sorted(str(w.message) for w in caught)

    assert outcome(fast.bare) == outcome(plain.bare)
    assert outcome(fast.bare)[1 if mode == "raise" else 2]  # it did report
