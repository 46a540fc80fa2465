"""Which array leaves a finite Python float may fill (``w`` in the kernel signature):
every power and library loop keeps one leaf below it an array (``a``)."""

from __future__ import annotations

from ppy_llvm._build import signature_of, weak_leaves
from ppy_llvm._spec import KernelBuilder


def test_arithmetic_leaves_are_weak_and_scalars_stay_scalars() -> None:
    b = KernelBuilder()
    x, v, f, dt = b.leaf(), b.leaf(), b.leaf(), b.leaf("scalar")
    step = b.op("add", b.op("add", x, b.op("mul", dt, v)), b.op("div", f, b.op("sub", x, v)))
    spec = b.build(step)
    assert weak_leaves(spec) == {x, v, f}
    assert signature_of(spec).leaves == "wwws"


def test_a_power_or_loop_keeps_one_leaf_below_it_an_array() -> None:
    b = KernelBuilder()
    x, mu, s = b.leaf(), b.leaf(), b.leaf()
    z = b.op("div", b.op("sub", x, mu), s)
    g = b.op("unary", b.op("mul", z, z), op="exp")  # exp: NumPy's loop
    root = b.op("add", b.op("pow", s, b.const(0.5), scalar_fast_path=True), g)
    spec = b.build(root)
    # the power's only leaf is s; the exp then has s below it already: x, mu are weak
    assert weak_leaves(spec) == {x, mu}
    assert signature_of(spec).leaves == "wwa"


def test_reductions_take_arrays_only() -> None:
    b = KernelBuilder()
    x, y = b.leaf(), b.leaf()
    spec = b.build(b.op("mul", x, y), reduce="add")
    assert signature_of(spec).leaves == "aa"
