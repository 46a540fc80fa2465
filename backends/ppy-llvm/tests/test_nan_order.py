"""Fewer first-NaN selects, same bits (`_nan_order`, `_kernel_map`).

An add/sub/mul/div whose operands are never both NaN with different bits needs no
select; a map runs a copy without any and reruns the exact copy only if a result is
NaN; one calling another library's loops, with scalars, has a copy for non-NaN scalars.
Unit tests of the classes, the kernels' shape, and bitwise equality with NumPy on
NaNs of many payloads and signs (where each copy must give NumPy's bits).
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from conftest import same_bits
from ppy_llvm import KernelBuilder, KernelSpec
from ppy_llvm._kernel_map import elision_table
from ppy_llvm._kernels import emit_kernel
from ppy_llvm._lower import default_lowerings, x86_isa
from ppy_llvm._nan_order import RIGHT_IS_LEAF, swap_nodes, unordered_nodes

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]


def horner() -> KernelSpec:
    b = KernelBuilder()
    x = b.leaf()
    t = b.op("sub", b.op("mul", b.const(0.5), x), b.const(1.2))
    t = b.op("add", b.op("mul", t, x), b.const(3.3))
    return b.build(b.op("sub", b.op("mul", t, x), b.const(0.7)))


def triad() -> KernelSpec:
    b = KernelBuilder()
    x, y, z = b.leaf(), b.leaf(), b.leaf()
    return b.build(b.op("add", b.op("mul", x, y), z))


def poly() -> KernelSpec:  # LLVM was seen swapping this one's pinned add: the rerun fixes it
    b = KernelBuilder()
    x, y, z = b.leaf(), b.leaf(), b.leaf()
    left = b.op("add", b.op("mul", b.const(2.0), x), b.op("mul", b.op("mul", b.const(3.0), y), z))
    return b.build(b.op("sub", left, b.op("div", x, y)))


def neg_times() -> KernelSpec:  # (-a) * a: the negation changes the NaN's sign
    b = KernelBuilder()
    x = b.leaf()
    return b.build(b.op("mul", b.op("neg", x), x))


def exp_scaled() -> KernelSpec:  # exp(a) + b*s: a library loop and a scalar
    b = KernelBuilder()
    x, s, y = b.leaf(), b.leaf("scalar"), b.leaf()
    return b.build(b.op("add", b.op("unary", x, op="exp"), b.op("mul", y, s)))


def erf_scaled() -> KernelSpec:  # another library's loop: only the scalar split
    b = KernelBuilder()
    x, s, y = b.leaf(), b.leaf("scalar"), b.leaf()
    return b.build(b.op("add", b.op("unary", x, op="scipy.special:erf"), b.op("mul", y, s)))


def cmp_of_products() -> KernelSpec:  # a*b > c: a bool result never sees NaN bits
    b = KernelBuilder()
    x, y, z = b.leaf(), b.leaf(), b.leaf()
    return b.build(b.op("compare", b.op("mul", x, y), z, pred="gt"))


def _erf(x: Any) -> Any:
    from scipy.special import erf

    return erf(x)


CASES: dict[str, tuple[Callable[[], KernelSpec], Callable[..., Any], str]] = {
    "horner": (horner, lambda a: ((0.5 * a - 1.2) * a + 3.3) * a - 0.7, "a"),
    "triad": (triad, lambda a, b, c: a * b + c, "aaa"),
    "poly": (poly, lambda a, b, c: 2.0 * a + 3.0 * b * c - a / b, "aaa"),
    "neg_times": (neg_times, lambda a: -a * a, "a"),
    "exp_scaled": (exp_scaled, lambda a, s, b: np.exp(a) + b * s, "asa"),
    "erf_scaled": (erf_scaled, lambda a, s, b: _erf(a) + b * s, "asa"),
    "cmp": (cmp_of_products, lambda a, b, c: a * b > c, "aaa"),
}


def test_classes_of_values() -> None:
    h = horner()
    assert unordered_nodes(h) == frozenset(n for n in h.nodes if n.op != "const")
    assert unordered_nodes(triad()) == frozenset()  # a*b and (a*b)+c: two leaves each
    assert unordered_nodes(neg_times()) == frozenset()
    e = exp_scaled()
    mul = next(n for n in e.nodes if n.op == "mul")
    assert unordered_nodes(e) == frozenset()
    assert unordered_nodes(e, frozenset({1})) == frozenset({mul})  # s is not NaN
    b = KernelBuilder()
    x = b.leaf()
    nan = b.const(float("nan"))
    spec = b.build(b.op("add", b.op("mul", x, nan), x))
    assert unordered_nodes(spec) == frozenset()  # x*NaN has x's NaN or the constant's


def _ir(spec: KernelSpec) -> str:
    return emit_kernel(spec, "k", default_lowerings(), set())


@pytest.mark.skipif(not x86_isa(), reason="the selects are x86's")
def test_kernel_copies() -> None:
    """The copies each spec gets: the NaN-checked one and its exact rerun only where
    a select is needed; with another library's loop, the scalar split instead."""
    for spec in (triad(), neg_times(), exp_scaled()):
        assert "exact" in _ir(spec)
    for spec in (horner(), cmp_of_products(), erf_scaled()):
        assert "exact" not in _ir(spec)
    assert "nan_scalar" in _ir(erf_scaled())
    assert "nan_scalar" not in _ir(exp_scaled())
    assert "uno" not in _ir(horner())
    assert "uno" not in _ir(cmp_of_products())


@pytest.fixture(scope="module")
def sites() -> dict[str, Any]:
    from ppy_core.runtime.abi import kernel_address
    from ppy_llvm import LlvmBackend, compile_specs
    from ppy_numpy._runtime import make_site

    names = [
        n
        for n, (spec, _, _) in CASES.items()
        if LlvmBackend().can_lower_spec(spec(), "numpy") is None
        and (n != "erf_scaled" or importlib.util.find_spec("scipy") is not None)
    ]
    kernels = compile_specs([CASES[n][0]() for n in names], "nan_order_tests")
    out = {}
    for name, k in zip(names, kernels, strict=True):
        addr, lib = kernel_address(k)  # type: ignore[misc]
        sig = k.signature
        with contextlib.suppress(LookupError):
            out[name] = make_site(addr, sig.kind, sig.leaves, sig.loops, CASES[name][1], name, lib)
    return out


PAYLOADS = np.array(
    [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF800000000ABCD, 0xFFF80000DEAD0001],
    dtype=np.uint64,
).view(np.float64)
VALUES = np.concatenate([PAYLOADS, [0.0, -0.0, np.inf, -np.inf, 1.5, -2.0, 5e-324, 1e300]])


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("n", [1, 7, 8, 9, 17, 129, 1000, 4099])
def test_bits_of_nan_payloads(sites: dict[str, Any], name: str, n: int) -> None:
    if name not in sites:
        pytest.skip("the proof refused this kernel's library loop")
    site, ref, leaves = sites[name], CASES[name][1], CASES[name][2]
    rng = np.random.default_rng(n)
    for trial in range(6):
        nan_share = (0.0, 0.01, 0.5, 1.0, 0.3, 0.0)[trial]
        args: list[Any] = []
        for kind in leaves:
            if kind == "s":
                args.append(float(VALUES[rng.integers(0, len(VALUES))]) if trial > 2 else 0.75)
                continue
            x = rng.uniform(-3, 3, n)
            mask = rng.random(n) < nan_share
            x[mask] = VALUES[rng.integers(0, len(VALUES), int(mask.sum()))]
            args.append(x)
        site.reset_stats()
        with np.errstate(all="ignore"):
            assert same_bits(site(*args), ref(*args)), (name, n, trial)
        assert site.stats()["fast"] == 1


def test_swap_nodes_are_numpys_elided_operators() -> None:
    """``l + r`` / ``l * r`` with `l` an array leaf and `r` an array intermediate: NumPy
    may run it as ``np.add(r, l, out=r)`` (temporary elision); with `r` an array leaf,
    where the call's argument is a temporary (`RIGHT_IS_LEAF`). A temporary on the
    left, `-`, a scalar-only right side, or operands never both NaN: no swap node. The
    kernel's marker lists each with its left leaf and its right side's leaves."""
    b = KernelBuilder()
    x, s, v, w = b.leaf(), b.leaf("scalar"), b.leaf(), b.leaf()
    inner = b.op("mul", v, w)
    spec = b.build(b.op("add", x, inner))
    mul, add = spec.nodes[-2:]
    assert dict(swap_nodes(spec)) == {mul: (1, 0b100 | RIGHT_IS_LEAF), add: (0, 0b110)}
    assert elision_table(spec)[1:] == (1, 0b100 | RIGHT_IS_LEAF, 0, 0b110)
    assert elision_table(spec)[0] == (1 if x86_isa() else 2) | 4  # the result's last
    b = KernelBuilder()
    x, s, v, w = b.leaf(), b.leaf("scalar"), b.leaf(), b.leaf()
    left_temp = b.op("add", b.op("mul", b.const(2.0), x), b.op("sub", v, w))
    minus = b.op("sub", x, b.op("sub", v, w))
    scalars = b.op("add", x, b.op("mul", s, s))
    spec = b.build(b.op("mul", b.op("add", left_temp, minus), scalars))
    assert not swap_nodes(spec)
    assert elision_table(spec) == ()
    mul = triad().nodes[0]  # (a*b) + c: a temporary on the left; a*b of two leaves
    assert dict(swap_nodes(triad())) == {mul: (0, 0b10 | RIGHT_IS_LEAF)}
    assert not swap_nodes(horner())
    b = KernelBuilder()
    x = b.leaf()
    assert not swap_nodes(b.build(b.op("add", x, b.op("mul", x, x))))  # one NaN label


def test_swap_nodes_with_a_leaf_on_the_right() -> None:
    """``x + y`` / ``x * y`` of two array leaves: a swap node flagged `RIGHT_IS_LEAF`
    (elided where `y`'s argument is a call's result); ``x - y``, ``s + y``, ``x + x``
    never. A result node that is no swap node is flagged 8 (an augmented store's
    result is then never cleared)."""
    for op in ("add", "mul"):
        b = KernelBuilder()
        x, y = b.leaf(), b.leaf()
        spec = b.build(b.op("mul", b.op(op, x, y), b.const(2.0)))
        assert dict(swap_nodes(spec)) == {spec.nodes[-3]: (0, 0b10 | RIGHT_IS_LEAF)}
        assert elision_table(spec) == ((1 if x86_isa() else 2) | 8, 0, 0b10 | RIGHT_IS_LEAF)
    b = KernelBuilder()
    x, s, y = b.leaf(), b.leaf("scalar"), b.leaf()
    spec = b.build(b.op("mul", b.op("sub", x, y), b.op("add", s, y)))
    assert not swap_nodes(spec)
    b = KernelBuilder()
    x = b.leaf()
    assert not swap_nodes(b.build(b.op("add", x, x)))


def _elision_site(op: str) -> tuple[Any, Callable[..., Any]]:
    """A dispatcher over ``(x OP y) * 2.0`` given its kernel's elision table."""
    from ppy_core.runtime.abi import kernel_address
    from ppy_llvm import compile_specs
    from ppy_numpy._runtime import make_site

    b = KernelBuilder()
    x, y = b.leaf(), b.leaf()
    spec = b.build(b.op("mul", b.op(op, x, y), b.const(2.0)))
    (k,) = compile_specs([spec], f"elide_{op}")
    addr, lib = kernel_address(k)  # type: ignore[misc]
    sig = k.signature

    def ref(a: Any, c: Any) -> Any:
        return (a + c) * 2.0 if op == "add" else (a * c) * 2.0

    site = make_site(addr, sig.kind, sig.leaves, sig.loops, ref, op, lib, swaps=elision_table(spec))
    return site, ref


@pytest.mark.skipif(not x86_isa(), reason="the kernel follows NumPy's order on x86")
@pytest.mark.parametrize("op", ["add", "mul"])
@pytest.mark.parametrize("n", [32766, 32768, 40001])
def test_a_call_result_on_the_right_is_elided_into(op: str, n: int) -> None:
    """``x + np.hstack(...)``: NumPy elides into the call's result from 256 KiB (its NaN
    wins); the dispatcher sees the same temporary (reference count 1) and the kernel's
    exact copy follows. A name (`t`) is no temporary; nor is a result on the left."""
    site, _ref = _elision_site(op)
    rng = np.random.default_rng(n)
    x, a, c = rng.uniform(-2, 2, n), rng.uniform(-2, 2, n // 2), rng.uniform(-2, 2, n - n // 2)
    for k in (0, 5, n // 2 - 1):
        x[k], a[k] = PAYLOADS[2], PAYLOADS[3]
    with np.errstate(all="ignore"):
        site.reset_stats()
        if op == "add":
            assert same_bits(site(x, np.hstack((a, c))), (x + np.hstack((a, c))) * 2.0)
            assert same_bits(site(np.hstack((a, c)), x), (np.hstack((a, c)) + x) * 2.0)
        else:
            assert same_bits(site(x, np.hstack((a, c))), (x * np.hstack((a, c))) * 2.0)
            assert same_bits(site(np.hstack((a, c)), x), (np.hstack((a, c)) * x) * 2.0)
        t = np.hstack((a, c))
        assert same_bits(site(x, t), _ref(x, t))
        assert site.stats()["fast"] == 3
    got = site(x, np.hstack((a, c))).view(np.uint64)[5]
    assert got == PAYLOADS.view(np.uint64)[3 if n >= 32768 else 2]  # the model is NumPy's
