"""Hypothesis-generated expression trees over the fused operations, compiled once (one
module, one `ppy.load`), then driven with random, special and hypothesis-drawn data;
each call is compared bit for bit with the same source run by plain Python/NumPy and
must have taken the fast path unless the guard has to refuse.

``PPY_NUMPY_TREES`` (default 64) sets how many trees; ``PPY_NUMPY_TREE_SEED`` (an int)
draws another batch (by default the batch is hypothesis' derandomized one).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from _exprtrees import draw_trees, module_source, reduction_kind, render
from _npharness import (
    Pair,
    call,
    compile_pair,
    counting,
    difference,
    expect_refusal,
    outcome_difference,
    random_array,
    shapes,
    special_array,
    with_reasons,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ppy_llvm._spec import LOOP_UNARY

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

COUNT = int(os.environ.get("PPY_NUMPY_TREES", "64"))
SEED = os.environ.get("PPY_NUMPY_TREE_SEED")


class Batch:
    """The compiled batch: trees, their module pair, their reduction kinds."""

    def __init__(self, trees: list[Any], pair: Pair) -> None:
        self.trees, self.pair = trees, pair
        self.kinds = [reduction_kind(t) for t in trees]

    def functions(self) -> list[tuple[int, str]]:
        return [(i, f"f{i}") for i in range(len(self.trees))]

    def by_cost(self, name: str) -> bool:
        """Whether the llvm backend's cost rule keeps the tree NumPy's (`_cost.py`,
        E2109: a reduction over NumPy loop calls alone cannot beat NumPy)."""
        records = self.pair.records(name)
        return bool(records) and all(
            any("[E2109]" in reason for reason in r["reasons"]) for r in records
        )


@pytest.fixture(scope="module")
def batch(project, proven) -> Batch:
    unary = tuple(f"np.{name}" for name in LOOP_UNARY if proven.get(name) == "ok")
    trees = draw_trees(unary, COUNT, None if SEED is None else int(SEED))
    pair = compile_pair(project, "random_trees", module_source(trees))
    return Batch(trees, pair)


def _args(rng: np.random.Generator, shape: Any, specials_only: bool) -> tuple[Any, ...]:
    make = special_array if specials_only else random_array
    s = float(make(rng, (1,))[0]) if rng.random() < 0.5 else float(rng.standard_normal())
    return (make(rng, shape), make(rng, shape), make(rng, shape), s)


def test_every_tree_is_one_compiled_site(batch: Batch) -> None:
    """The trees use only fused operations: each function is exactly one kernel."""
    assert not batch.pair.diagnostics, batch.pair.diagnostics
    bad = [
        (name, render(batch.trees[i]), [r["reasons"] for r in batch.pair.records(name)])
        for i, name in batch.functions()
        if (len(batch.pair.records(name)) != 1 or not batch.pair.compiled(name))
        and not batch.by_cost(name)
    ]
    assert not bad, bad


def test_bitwise_on_random_and_special_inputs(batch: Batch) -> None:
    """Every tree, every shape (lengths 0-9, 127-129, 255-257, 2-D), random and
    special-only data: same bits as NumPy, and the fast path ran."""
    rng = np.random.default_rng(20251130)
    failures: list[str] = []
    for i, name in batch.functions():
        fast_fn, plain_fn = getattr(batch.pair.fast, name), getattr(batch.pair.plain, name)
        for shape in shapes():
            for specials_only in (False, True):
                args = _args(rng, shape, specials_only)
                with counting(batch.pair, name) as counts:
                    got = call(fast_fn, args, all="ignore")
                want = call(plain_fn, args, all="ignore")
                problem = outcome_difference(got, want)
                refuse = expect_refusal(want.value, batch.kinds[i], args[0].size)
                refuse = refuse or batch.by_cost(name)
                if not problem and not refuse and counts["fast"] != 1:
                    problem = f"fast path did not run: {with_reasons(counts)}"
                if problem:
                    failures.append(f"{name} = {render(batch.trees[i])} shape={shape}: {problem}")
    assert not failures, "\n".join(failures[:20]) + f"\n({len(failures)} failures)"


def test_default_errstate_warnings_are_numpys(batch: Batch) -> None:
    """Under NumPy's default errstate the same warnings appear (an FP flag NumPy would
    report sends the call to NumPy), with the same answer."""
    rng = np.random.default_rng(7)
    failures = []
    for i, name in batch.functions():
        fast_fn, plain_fn = getattr(batch.pair.fast, name), getattr(batch.pair.plain, name)
        for shape in ((5,), (129,)):
            args = _args(rng, shape, specials_only=i % 2 == 0)
            with counting(batch.pair, name) as counts:
                got = call(fast_fn, args)
            want = call(plain_fn, args)
            problem = outcome_difference(got, want)
            if not problem and want.warnings and counts["fast"]:
                problem = f"NumPy warned {want.warnings} but the fast path ran"
            if problem:
                failures.append(f"{name} = {render(batch.trees[i])}: {problem}")
    assert not failures, "\n".join(failures[:20])


floats = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True, width=64)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_data(batch: Batch, data: st.DataObject) -> None:
    """Hypothesis draws the tree, the shape and every float (any bit pattern class)."""
    i = data.draw(st.integers(0, len(batch.trees) - 1), label="tree")
    name = f"f{i}"
    shape = data.draw(
        st.one_of(
            hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=20), st.just((300,))
        ),
        label="shape",
    )
    arrays = [data.draw(hnp.arrays(np.float64, shape, elements=floats)) for _ in range(3)]
    args = (*arrays, data.draw(floats, label="s"))
    with counting(batch.pair, name) as counts:
        got = call(getattr(batch.pair.fast, name), args, all="ignore")
    want = call(getattr(batch.pair.plain, name), args, all="ignore")
    assert outcome_difference(got, want) is None, (render(batch.trees[i]), args)
    if not expect_refusal(want.value, batch.kinds[i], arrays[0].size) and not batch.by_cost(name):
        assert counts["fast"] == 1, with_reasons(counts)


def test_reductions_at_large_lengths(batch: Batch) -> None:
    """Reduction trees at 1e6+3 elements and in 2-D (NumPy's pairwise blocks)."""
    rng = np.random.default_rng(3)
    big = tuple(rng.standard_normal(1_000_003) for _ in range(3))
    square = tuple(rng.standard_normal((1001, 999)) for _ in range(3))
    ran = 0
    for i, name in batch.functions():
        if batch.kinds[i] is None:
            continue
        for arrays in (big, square):
            args = (*arrays, 0.75)
            with counting(batch.pair, name) as counts:
                got = call(getattr(batch.pair.fast, name), args, all="ignore")
            want = call(getattr(batch.pair.plain, name), args, all="ignore")
            assert outcome_difference(got, want) is None, render(batch.trees[i])
            if not expect_refusal(want.value, batch.kinds[i], arrays[0].size, parallel=True):
                assert counts["fast"] == 1, (render(batch.trees[i]), with_reasons(counts))
                ran += 1
    assert ran > 0


def test_results_are_fresh_arrays(batch: Batch) -> None:
    """An elementwise result is a new, writeable, owning, C-contiguous float64 array."""
    rng = np.random.default_rng(11)
    args = _args(rng, (33,), specials_only=False)
    for i, name in batch.functions():
        if batch.kinds[i] is not None:
            continue
        with np.errstate(all="ignore"):
            out = getattr(batch.pair.fast, name)(*args)
            want = getattr(batch.pair.plain, name)(*args)
        assert difference(out, want) is None
        assert out.flags.writeable
        assert out.flags.owndata
        assert out.base is None
        assert all(not np.shares_memory(out, a) for a in args[:3])
