"""Literal hoisting (`_hoist`): kernels that differ only in literals are one kernel.

Random elementwise trees with random literals (0.0, -0.0, 1.0, inf, NaN, subnormals,
huge values among them) are compiled with their literals hoisted and without; every
entry's answer (whole arrays, a scalar leaf, row-broadcast operands: the _splat and
_rows_nan entries) must equal NumPy's bit for bit, and the two builds each other's.
Two kernels differing in one literal compile to one body object.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SPECIALS, make_site, same_bits
from ppy_core.cache import using_root
from ppy_llvm import KernelBuilder, KernelSpec
from ppy_llvm._build import compile_specs
from ppy_llvm._hoist import hoist

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

#: literals a tree may hold: the special ones, and any double
LITERALS = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 5e-324, 1e308]),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
)

# A tree is ("x",) | ("y",) (arrays), or (op, *operands); an operand that is not a
# tree is ("s",) (the scalar leaf) or ("lit",) (the next literal). Every operation
# reads at least one array, as an expression site's tree does.
ARRAY = st.sampled_from([("x",), ("y",)])
OTHER = st.sampled_from([("s",), ("lit",), ("lit",)])
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum")
PREDICATES = ("lt", "le", "gt", "ge", "eq", "ne")


def _extend(tree: st.SearchStrategy[tuple]) -> st.SearchStrategy[tuple]:
    operand = st.one_of(tree, OTHER)
    return st.one_of(
        st.tuples(st.sampled_from(BINARY), tree, operand),
        st.tuples(st.sampled_from(BINARY), operand, tree),
        st.tuples(st.sampled_from(("neg", "abs", "sqrt")), tree),
        st.tuples(st.just("pow"), tree, st.sampled_from([2.0, 0.5, -1.0])),
        st.tuples(st.just("where"), st.sampled_from(PREDICATES), tree, operand, tree, operand),
    )


TREES = _extend(st.recursive(ARRAY, _extend, max_leaves=6))  # one operation or more
NUMPY: dict[str, Callable[..., Any]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "neg": np.negative,
    "abs": np.absolute,
    "sqrt": np.sqrt,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}


def literal_count(tree: tuple) -> int:
    if tree == ("lit",):
        return 1
    return sum(literal_count(t) for t in tree[1:] if isinstance(t, tuple))


def used(tree: tuple) -> list[str]:
    """The leaves `tree` reads, of x, s, y in that order (the kernel's parameters)."""
    names: set[str] = set()

    def walk(t: tuple) -> None:
        if t[0] in ("x", "s", "y"):
            names.add(t[0])
        for a in t[1:]:
            if isinstance(a, tuple):
                walk(a)

    walk(tree)
    return [n for n in ("x", "s", "y") if n in names]


def spec_of(tree: tuple, literals: list[float]) -> KernelSpec:
    """The kernel of `tree` over its leaves (`used`), its literals in order."""
    b = KernelBuilder()
    leaves = {n: b.leaf("scalar" if n == "s" else "array") for n in used(tree)}
    values = iter(literals)

    def build(t: tuple) -> int:
        if t[0] in leaves:
            return leaves[t[0]]
        if t == ("lit",):
            return b.const(next(values))
        if t[0] in ("neg", "abs"):
            return b.op(t[0], build(t[1]))
        if t[0] == "sqrt":
            return b.op("unary", build(t[1]), op="sqrt")
        if t[0] == "pow":  # `a ** 2.0`: NumPy's fast path picks square/sqrt/reciprocal
            return b.op("pow", build(t[1]), b.const(t[2]), scalar_fast_path=True)
        if t[0] == "where":
            cond = b.op("compare", build(t[2]), build(t[3]), pred=t[1])
            return b.op("select", cond, build(t[4]), build(t[5]))
        return b.op(t[0], build(t[1]), build(t[2]))

    return b.build(build(tree))


def reference(tree: tuple, literals: list[float]) -> Callable[..., Any]:
    """NumPy's answer to `tree` as Python runs it: literals are Python floats."""

    def run(*args: Any) -> Any:
        values, bound = iter(literals), dict(zip(used(tree), args, strict=True))

        def ev(t: tuple) -> Any:
            if t[0] in bound:
                return bound[t[0]]
            if t == ("lit",):
                return next(values)
            if t[0] == "pow":
                return operator.pow(ev(t[1]), t[2])
            if t[0] == "where":
                cond = NUMPY[t[1]](ev(t[2]), ev(t[3]))
                return np.where(cond, ev(t[4]), ev(t[5]))
            return NUMPY[t[0]](*(ev(a) for a in t[1:]))

        return ev(tree)

    return run


def sites(specs: list[KernelSpec], refs: list[Callable[..., Any]], hoisting: bool) -> list[Any]:
    """A dispatcher site per spec, all compiled into one library."""
    from ppy_core.runtime.abi import kernel_address

    kernels = compile_specs(specs, "hoist_tests", hoisting=hoisting)
    out = []
    for k, ref in zip(kernels, refs, strict=True):
        addr, lib = kernel_address(k)  # type: ignore[misc]
        sig = k.signature
        out.append(make_site(addr, sig.kind, sig.leaves, sig.loops, ref, "hoisted", lib))
    return out


def inputs(rng: np.random.Generator) -> list[tuple[Any, float, Any]]:
    """(x, s, y) calls: lengths across the vector body and tail, NaN payloads and the
    other specials mixed in, and row-broadcast operands (the _splat/_rows_nan entries)."""
    out = []
    for n in (1, 7, 9, 33, 300):
        x, y = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n), rng.standard_normal(n)
        for arr in (x, y):
            mask = rng.random(n) < 0.3
            arr[mask] = SPECIALS[rng.integers(0, len(SPECIALS), int(mask.sum()))]
        out.append((x, float(rng.choice(SPECIALS)), y))
    rows = rng.standard_normal((6, 40))
    rows[1, 3], rows[4, 0] = np.nan, -np.inf
    out.append((rows, 0.75, rng.standard_normal((6, 1))))
    out.append((rng.standard_normal((6, 1)), -2.5, rows))
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=TREES, data=st.data())
def test_hoisted_kernels_give_numpys_bits_and_the_unhoisted_ones(
    tree: tuple, data: st.DataObject
) -> None:
    count = literal_count(tree)
    sets = [data.draw(st.lists(LITERALS, min_size=count, max_size=count)) for _ in range(3)]
    specs = [spec_of(tree, lits) for lits in sets]
    refs = [reference(tree, lits) for lits in sets]
    hoisted, plain = sites(specs, refs, True), sites(specs, refs, False)
    calls = inputs(np.random.default_rng(len(sets[0])))
    with np.errstate(all="ignore"):
        for site, unhoisted, ref in zip(hoisted, plain, refs, strict=True):
            for x, s, y in calls:
                args = [{"x": x, "s": s, "y": y}[n] for n in used(tree)]
                got, want = site(*args), ref(*args)
                assert same_bits(got, want), (tree, args)
                assert same_bits(unhoisted(*args), got), (tree, args)
            # the kernel ran (a NaN result it cannot vouch for goes to NumPy: both alike)
            stats, plain_stats = site.stats(), unhoisted.stats()
            assert stats["fast"] >= 1
            assert (stats["fast"], stats["fallback"]) == (
                plain_stats["fast"],
                plain_stats["fallback"],
            )


def _shift(c: float) -> KernelSpec:  # a * c + b
    b = KernelBuilder()
    x, y = b.leaf(), b.leaf()
    return b.build(b.op("add", b.op("mul", x, b.const(c)), y))


def _objects(root: Path, specs: list[KernelSpec], hoisting: bool) -> int:
    """How many objects LLVM compiled for `specs` into a fresh cache under `root`."""
    with using_root(root):
        from ppy_llvm._toolchain import cache_dir

        compile_specs(specs, "count", hoisting=hoisting)
        return len(list(cache_dir().glob("obj-*.o")))


def test_kernels_differing_in_a_literal_share_one_compiled_kernel(tmp_path: Path) -> None:
    specs = [_shift(1.5), _shift(1.75), _shift(-0.0)]
    assert len({hoist(s).body.key() for s in specs}) == 1  # type: ignore[union-attr]
    # one body and one module of the three sites' small wrappers; unhoisted, three;
    # a kernel no other shares keeps its literal (no wrapper)
    assert _objects(tmp_path / "hoisted", specs, True) == 2
    assert _objects(tmp_path / "plain", specs, False) == 3
    assert _objects(tmp_path / "one", specs[:1], True) == 1
    refs = [lambda x, y, c=c: x * c + y for c in (1.5, 1.75, -0.0)]
    x, y = np.linspace(-3.0, 3.0, 50), np.linspace(1.0, 2.0, 50)
    for site, c in zip(sites(specs, refs, True), (1.5, 1.75, -0.0), strict=True):
        assert same_bits(site(x, y), x * c + y)
        assert site.stats()["fast"] == 1


def test_what_picks_code_stays_in_the_kernel() -> None:
    b = KernelBuilder()
    x = b.leaf()
    square = b.op("pow", x, b.const(2.0), scalar_fast_path=True)  # picks x*x
    sine = b.op("unary", b.op("mul", x, b.const(3.0)), op="sin")
    looped = b.op("unary", b.const(0.25), op="cos")  # a library loop's operand
    spec = b.build(b.op("add", b.op("add", square, sine), looped))
    split = hoist(spec)
    assert split is not None
    assert split.values == (3.0,)  # only the multiplication's
    nan = KernelBuilder()
    y = nan.leaf()
    assert hoist(nan.build(nan.op("add", y, nan.const(float("nan"))))) is None
    for dtype, fastmath in (("f32", False), ("f64", True)):
        k = KernelBuilder()
        z = k.leaf()
        assert hoist(k.build(k.op("mul", z, k.const(1.5)), fastmath=fastmath, dtype=dtype)) is None


def test_an_edited_literal_changes_one_module_of_wrappers() -> None:
    from ppy_llvm._build import symbol_of
    from ppy_llvm._hoist import wrappers_modules

    def site(c: float) -> tuple[KernelSpec, str, str, tuple[float, ...]]:
        spec, split = _shift(c), hoist(_shift(c))
        assert split is not None
        return spec, symbol_of(spec), symbol_of(split.body), split.values

    sites = [site(0.25 * i + 1.5) for i in range(1000)]
    before = wrappers_modules(sites)
    assert len(before) == 16  # split by symbol: the builder's workers share them
    assert sum(text.count(" = private unnamed_addr constant") for text in before) == 1000
    after = wrappers_modules([site(9.75), *sites[1:]])
    assert len(set(after) - set(before)) <= 2  # the edited site left its group, joined one
    assert len(wrappers_modules(sites[:3])) == 1  # few sites: one module


def test_kernels_of_the_same_code_are_compiled_once(tmp_path: Path) -> None:
    """``sin(x) * y`` and ``cos(x) * y`` call their loop through the table the adapter
    fills: the same machine code, one function under three names (aliases, no
    wrapper), one object; each site still calls its own loop."""
    from ppy_llvm import LlvmBackend

    def loop_times(op: str) -> KernelSpec:
        b = KernelBuilder()
        x, y = b.leaf(), b.leaf()
        return b.build(b.op("mul", b.op("unary", x, op=op), y))

    specs = [loop_times("sin"), loop_times("cos"), loop_times("tan")]
    for spec in specs:
        why = LlvmBackend().can_lower_spec(spec, "numpy")
        if why is not None:
            pytest.skip(f"refused by the proof: {why}")
    assert _objects(tmp_path / "shared", specs, True) == 1
    refs = [lambda x, y, f=f: f(x) * y for f in (np.sin, np.cos, np.tan)]
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(1000) * 5, rng.standard_normal(1000)
    for site, ref in zip(sites(specs, refs, True), refs, strict=True):
        assert same_bits(site(x, y), ref(x, y))
        assert site.stats()["fast"] == 1


def test_proof_kernels_have_the_plain_entry_only(tmp_path: Path) -> None:
    """The loop proofs call their kernels on whole arrays: no _splat/_rows_nan entries
    (the inline exp's fused kernel was 356 KB of IR with them)."""
    import ctypes

    from ppy_llvm._proof import INLINE, _cases, proof_specs

    named = [(n, s, e) for n, pair in proof_specs(tuple(INLINE)).items() for s, e in pair]
    with using_root(tmp_path / "cache"):
        (case, *_) = _cases(named, "wide", "proof-entries")
        plain = compile_specs([named[0][1]], "entries")[0]
        proof_lib, lib = ctypes.CDLL(case.kernel.path), ctypes.CDLL(plain.path)
    assert hasattr(lib, plain.symbol + "_splat")  # as a site's kernel: every entry
    assert hasattr(proof_lib, case.kernel.symbol)
    assert not hasattr(proof_lib, case.kernel.symbol + "_splat")
