"""Arrow's null semantics through the fused kernel, case by case (the cases the
issue names), each asserting the kernel ran and the answer is Arrow's own."""

from __future__ import annotations

import pyarrow as pa
import pytest
from _arrowcheck import assert_same, compile_pair, outcome, site_counts

pytestmark = pytest.mark.needs_llvm

SOURCE = """
import pyarrow as pa
import pyarrow.compute as pc


def kleene(p: pa.BooleanArray, q: pa.BooleanArray):
    return pc.or_kleene(pc.and_kleene(p, q), pc.and_(p, q))


def guarded(x: pa.Array):
    return pc.if_else(pc.not_equal(x, 0), pc.divide_checked(10.0, x), 0.0)


def unguarded(x: pa.Array):
    return pc.if_else(pc.not_equal(x, 0), pc.divide(10.0, x), 0.0)


def filled(x: pa.Array, y: pa.Array):
    return pc.add(pc.fill_null(x, 0), y)


def tests(x: pa.Array):
    return pc.and_kleene(pc.is_null(x), pc.is_valid(x))


def choose(c: pa.BooleanArray, x: pa.Array, y: pa.Array):
    return pc.if_else(c, x, y)
"""


@pytest.fixture(scope="module")
def mod(project):
    return compile_pair(project, "arrow_semantics", SOURCE)


def _same(mod, name: str, *args) -> None:
    fast_before = site_counts(mod.name, name)[0]
    got = outcome(getattr(mod.fast, name), args)
    want = outcome(getattr(mod.plain, name), args)
    assert got[0] == want[0]
    if got[0] == "value":
        assert_same(got[1], want[1], name)
    else:
        assert got[1] == want[1]
    assert site_counts(mod.name, name)[0] == fast_before + 1  # the kernel ran


def test_kleene_logic(mod) -> None:
    p = pa.array([True, True, True, False, False, False, None, None, None])
    q = pa.array([True, False, None, True, False, None, True, False, None])
    _same(mod, "kleene", p, q)
    got = mod.fast.kleene(p, q).to_pylist()
    assert got == [True, False, None, False, False, None, None, None, None]


def test_if_else_is_eager_like_arrow(mod) -> None:
    """`divide_checked` in the unchosen branch still raises, exactly as Arrow does
    (the kernel finds it and Arrow's compute raises its own error)."""
    x = pa.array([1.0, 0.0, None, 4.0])
    with pytest.raises(pa.ArrowInvalid, match="divide by zero"):
        mod.plain.guarded(x)
    with pytest.raises(pa.ArrowInvalid, match="divide by zero"):
        mod.fast.guarded(x)
    _same(mod, "guarded", pa.array([1.0, None, 4.0]))  # no zero: no error
    _same(mod, "unguarded", x)  # float division by zero: inf, no error


def test_null_under_a_zero_divisor_does_not_raise(mod) -> None:
    x = pa.array([2.0, 0.0, 5.0], mask=[False, True, False])
    _same(mod, "guarded", x)


def test_fill_null_casts_its_fill_and_keeps_a_bitmap(mod) -> None:
    x = pa.array([1.5, None, float("nan"), None])
    y = pa.array([1.0, 2.0, 3.0, None])
    _same(mod, "filled", x, y)
    _same(mod, "filled", pa.array([1.0, 2.0]), pa.array([3.0, 4.0]))
    out = mod.fast.filled(x, y)
    assert out.to_pylist()[1] == 2.0  # 0 filled as 0.0


def test_nan_is_a_value_not_a_null(mod) -> None:
    x = pa.array([float("nan"), None, 1.0])
    _same(mod, "tests", x)
    assert mod.fast.tests(x).to_pylist() == [False, False, False]


def test_if_else_null_condition_and_unchosen_null(mod) -> None:
    c = pa.array([True, None, False, True])
    x = pa.array([1.0, 2.0, None, None])
    y = pa.array([None, 5.0, 6.0, 7.0])
    _same(mod, "choose", c, x, y)
    assert mod.fast.choose(c, x, y).to_pylist() == [1.0, None, 6.0, None]


def test_byte_aligned_slice_is_read_in_place_and_inner_slice_falls_back(mod) -> None:
    x = pa.array([float(i) if i % 3 else None for i in range(40)])
    y = pa.array([float(-i) for i in range(40)])
    _same(mod, "filled", x.slice(16, 20), y.slice(8, 20))
    fast, fallbacks = site_counts(mod.name, "filled")
    assert mod.fast.filled(x.slice(3, 20), y.slice(8, 20)).equals(
        mod.plain.filled(x.slice(3, 20), y.slice(8, 20))
    )
    assert site_counts(mod.name, "filled") == (fast, fallbacks + 1)


def test_an_aggregation_stays_with_arrow_saying_why(project) -> None:
    """`sum(a*b)` converges (columnar.reduce over columnar.mul) but no kernel sums in
    Arrow's order: the site stays Python with E2015, and still gives Arrow's answer."""
    from ppy_core.compiler.cached import compile_file, load_manifest

    path = project / "arrow_sum.py"
    path.write_text(
        "import pyarrow as pa\nimport pyarrow.compute as pc\n\n"
        "def f(a: pa.Array, b: pa.Array):\n    return pc.sum(pc.multiply(a, b))\n",
        encoding="utf-8",
    )
    (site,) = load_manifest(compile_file(path).entry)["expr_sites"]
    assert site["unit"] is None
    assert any("[E2015]" in r and "columnar.reduce" in r for r in site["reasons"]), site
    pair = compile_pair(project, "arrow_sum2", path.read_text(encoding="utf-8"))
    a = pa.array([1.0, None, 3.0])
    assert pair.fast.f(a, a).equals(pair.plain.f(a, a))
