"""Sites over several strided views gather their rows together (`_strided.h`).

Views of one array at neighbouring offsets along its last axis (`u[:, :, k - 1]`,
`u[:, :, k]`, `u[:, :, k + 1]`: vadv's columns) stride through the same cache lines and
pages. The runtime gathers every strided operand of a chunk of a row in one pass
(`gather_many`, up to four per loop) over chunks of `PPY_GATHER_CHUNK` elements, for
fresh results and for stores into strided targets (`_store.h`). What is computed is
unchanged: each program below, generated at random over one to seven such views (of one
array or two, beside contiguous operands and a float), gives NumPy's answer bit for bit
on the fast path; a result holding a NaN is still NumPy's (refused, counted).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from _npharness import (
    Pair,
    call,
    compile_pair,
    counting,
    generic,
    outcome_difference,
    random_array,
    with_reasons,
)

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

PROGRAMS = 14
#: (I, J) of the views, a plane's views one coalesced row of I*J elements: one chunk
#: (256), one taking its last 3 or 8 along (259, 264), a chunk and 9 more (265), 600,
#: 120 (under one); `x[:, 1:, k]` views rows of J - 1
SHAPES = ((16, 16), (7, 37), (33, 8), (5, 53), (1, 600), (40, 3))


def _view(rng: random.Random, names: str, narrow: bool) -> str:
    """A view along the last axis at a random offset: of the whole plane, or (`narrow`)
    without its first column, whose rows do not coalesce into one."""
    base, at = rng.choice(names), rng.randrange(4)
    return f"{base}[:, 1:, {at}]" if narrow else f"{base}[:, :, {at}]"


def _program(index: int) -> tuple[str, str, str, frozenset[str]]:
    """(name, source, kind, its distinct views) of one random site: an expression of `+ - *` over
    strided views of `u` (and `v`), the contiguous `a` and the float `s`; kind "fresh"
    returns it, "store" writes it into the strided target `t[:, :, 1]` (or
    `t[:, 1:, 1]`, as the views' shape)."""
    rng = random.Random(1000 + index)
    names = "u" if index % 2 else "uv"
    count = 1 + index % 7
    narrow = rng.random() < 0.5  # every view `x[:, 1:, k]`: rows of J - 1, no coalescing
    leaves = [_view(rng, names, narrow) for _ in range(count)]
    shape = "[:, 1:, " if narrow else "[:, :, "
    leaves += [f"a{shape[:-2]}]" if narrow else "a", "s"]
    views = frozenset(leaf for leaf in leaves if "[" in leaf)
    rng.shuffle(leaves)
    expr = leaves[0]
    for leaf in leaves[1:]:
        expr = f"({expr} {rng.choice('+-*')} {leaf})"
    kind = "store" if index % 3 == 0 else "fresh"
    name = f"p{index}"
    if kind == "store":
        body = f"    t{shape}1] = {expr}\n"
        return name, f"def {name}(t, u, v, a, s):\n{body}", kind, views
    return name, f"def {name}(u, v, a, s):\n    return {expr}\n", kind, views


CASES = [_program(i) for i in range(PROGRAMS)]
SOURCE = "import numpy as np\n\n\n" + "\n\n".join(source for _, source, _, _ in CASES)


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "strided_gathers", SOURCE)


def _inputs(rng: np.random.Generator, shape: tuple[int, int], special: float) -> dict[str, Any]:
    i, j = shape

    def array(*dims: int) -> np.ndarray:
        if special == 0.0:  # no NaN result, no overflow flag (either refuses the call)
            return rng.standard_normal(dims) * 10.0 ** rng.uniform(-3, 3, dims)
        return random_array(rng, dims, special=special)

    return {
        "t": array(i, j, 4),
        "u": array(i, j, 5),
        "v": array(i, j, 4),
        "a": array(i, j),
        "s": 0.75,
    }


def _run(pair: Pair, name: str, kind: str, inputs: dict[str, Any], fast: bool) -> None:
    names = ("t", "u", "v", "a", "s") if kind == "store" else ("u", "v", "a", "s")
    mine = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    theirs = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    with counting(pair, name) as c:
        got = call(generic(pair, name), tuple(mine[k] for k in names), all="ignore")
    want = call(getattr(pair.plain, name), tuple(theirs[k] for k in names), all="ignore")
    assert outcome_difference(got, want) is None, (name, outcome_difference(got, want))
    for k in ("t", "u", "v", "a"):  # a store wrote its target's buffer as NumPy did
        assert mine[k].tobytes() == theirs[k].tobytes(), (name, k)
    if fast:
        assert c == {"fast": 1, "fallback": {}}, (name, with_reasons(c))
    else:  # a NaN result (its bits follow NumPy's loop lengths) or a flag: NumPy answers
        assert c["fast"] + sum(c["fallback"].values()) == 1, (name, with_reasons(c))
        assert set(c["fallback"]) <= {"result: nan/zero", "fp-flags"}, (name, with_reasons(c))


def test_every_program_is_one_site(pair: Pair) -> None:
    for name, _, _, views in CASES:
        (record,) = pair.records(name)
        assert record["unit"] is not None, (name, record["reasons"])
        # the runtime takes the views (`views.py`): each distinct one is a kernel leaf
        taken = [v for v in record["views"] if v[1] is not None]
        assert len(taken) == len(views), (name, taken, views)


@pytest.mark.parametrize("shape", SHAPES, ids=[f"{i}x{j}" for i, j in SHAPES])
def test_gathered_views_match_numpy(pair: Pair, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    for name, _, kind, _ in CASES:
        _run(pair, name, kind, _inputs(rng, shape, special=0.0), fast=True)


def test_specials_match_numpy(pair: Pair) -> None:
    """NaN and inf inputs: the same bits, warnings and buffers as NumPy; a NaN result
    is refused (NumPy's), anything else is fast."""
    rng = np.random.default_rng(7)
    for shape in SHAPES[:3]:
        for name, _, kind, _ in CASES:
            _run(pair, name, kind, _inputs(rng, shape, special=0.3), fast=False)
