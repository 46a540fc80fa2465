"""Views indexed by a loop counter: `u[:, :, k - 1]` inside `for k in ...` (vadv).

A tree reading such a view after its first operation (`dtr - acol - ccol[:, :, k]`) is a
site that passes `ccol` and `k` by name; the dispatcher takes the view itself, adding the
offset to `k` where `k` is an exact int (`ppy_core.compiler.frontend.views`). The fallback
evaluates the index where Python does: a counter of another class (a bool, an np.int64)
or out of range runs Python, which answers or raises as it does, after the operations
before it. Random loop programs (fresh results and stores, offsets -2..2, several arrays)
give NumPy's bytes in every array on the fast path, with NaN, inf and -0.0 inputs too.
"""

from __future__ import annotations

import ast
import random
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, counting, generic, random_array, with_reasons

from ppy_core.compiler.frontend.views import counter_spans, deferrable, index_record, steady_names

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

PROGRAMS = 10
K = 6


def _view(rng: random.Random, names: str) -> str:
    offset = rng.choice((-2, -1, 0, 1, 2))
    k = "k" if offset == 0 else f"k {'+' if offset > 0 else '-'} {abs(offset)}"
    return f"{rng.choice(names)}[:, :, {k}]"


def _program(index: int) -> tuple[str, str]:
    """A loop over k in 2..K-3 whose body holds two statements: a fresh tree whose first
    operation is on contiguous `a`, `b` (so its views are read late) and a store into
    `t[:, :, k]` over views of `u`, `v` and the first's result."""
    rng = random.Random(2000 + index)
    late = [_view(rng, "uv") for _ in range(1 + index % 3)]
    first = "a * s - b" if index % 2 else "(a - b) * s"
    expr = first
    for leaf in late:
        expr = f"({expr} {rng.choice('+-*')} {leaf})"
    store = f"t[:, :, k] = (x - {_view(rng, 'uv')}) * {_view(rng, 't')}"
    body = f"        x = {expr}\n        {store}\n"
    source = (
        f"def p{index}(t, u, v, a, b, s):\n    for k in range(2, {K - 2}):\n{body}    return x\n"
    )
    return f"p{index}", source


CASES = [_program(i) for i in range(PROGRAMS)]
SOURCE = (
    "import numpy as np\n\n\n"
    + "\n\n".join(source for _, source in CASES)
    + """

def edge(u, a, b, ks):
    for k in ks:
        x = a - b + u[:, :, k - 1]
    return x


def after(u, a, b):
    for k in range(2):
        pass
    return a - b + u[:, :, k]


def deleted(u, a, b):
    for k in range(2):
        x = a - b + u[:, :, k]
        del k
    return x
"""
)


@pytest.fixture(scope="module")
def pair(project: Any) -> Pair:
    return compile_pair(project, "counter_views", SOURCE)


def _inputs(rng: np.random.Generator, shape: tuple[int, int], special: float) -> dict[str, Any]:
    i, j = shape
    return {
        "t": random_array(rng, (i, j, K), special=special),
        "u": random_array(rng, (i, j, K), special=special),
        "v": random_array(rng, (i, j, K), special=special),
        "a": random_array(rng, (i, j), special=special),
        "b": random_array(rng, (i, j), special=special),
        "s": 1.5,
    }


def _both(pair: Pair, name: str, names: tuple[str, ...], inputs: dict[str, Any]) -> dict[str, Any]:
    """Run `name` both ways on copies; assert the same outcome and array bytes; the
    counts of its sites' calls."""
    mine = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    theirs = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    with counting(pair, name) as c:
        got = call(generic(pair, name), tuple(mine[k] for k in names), all="ignore")
    want = call(getattr(pair.plain, name), tuple(theirs[k] for k in names), all="ignore")
    assert got.error == want.error, (name, got, want)
    assert got.warnings == want.warnings, (name, got, want)
    if want.error is None:
        assert np.asarray(got.value).tobytes() == np.asarray(want.value).tobytes(), name
    for k, v in mine.items():
        if isinstance(v, np.ndarray):
            assert v.tobytes() == theirs[k].tobytes(), (name, k)
    return c


def test_counter_views_are_taken_by_the_runtime(pair: Pair) -> None:
    for name, _ in CASES:
        records = pair.records(name)
        assert len(records) == 2, name
        assert all(r["unit"] is not None for r in records), name
        for record in records:
            counted = [
                p for _, index in record["views"] if index for p in index if isinstance(p, dict)
            ]
            assert counted, (name, record["views"])
            assert all(record["args"][p["arg"]] == "k" for p in counted), record
    # outside its loop, or deleted in it, a counter may be unbound: Python's order
    for name in ("after", "deleted"):
        for record in pair.records(name):
            assert not record.get("views"), (name, record)


@pytest.mark.parametrize("shape", [(5, 7), (16, 33), (1, 300)], ids=str)
def test_random_loops_match_numpy(pair: Pair, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[1])
    loops = K - 4
    for name, _ in CASES:
        c = _both(pair, name, ("t", "u", "v", "a", "b", "s"), _inputs(rng, shape, special=0.0))
        assert c == {"fast": 2 * loops, "fallback": {}}, (name, with_reasons(c))


def test_specials_match_numpy(pair: Pair) -> None:
    rng = np.random.default_rng(5)
    for name, _ in CASES:  # a NaN result is NumPy's (refused, counted): same bytes
        _both(pair, name, ("t", "u", "v", "a", "b", "s"), _inputs(rng, (9, 13), special=0.3))


def test_counters_python_decides(pair: Pair) -> None:
    """k = 0 wraps to the last plane as in Python; an np.int64 or a bool counter and an
    out-of-range index run Python (IndexError where it raises); an operand that is no
    array raises its own error first, before the index is read."""
    rng = np.random.default_rng(9)
    inputs = _inputs(rng, (4, 5), special=0.0)
    names = ("u", "a", "b", "ks")
    cases = [
        ((0, 1, 2), {"fast": 3, "fallback": {}}),
        ((np.int64(2),), {"fast": 0, "fallback": {"guard: type": 1}}),
        ((True,), {"fast": 0, "fallback": {"guard: type": 1}}),
        ((3, K + 1), {"fast": 1, "fallback": {"guard: view": 1}}),
    ]
    for ks, counts in cases:
        c = _both(pair, "edge", names, {**inputs, "ks": ks})
        assert c == counts, (ks, with_reasons(c))
    c = _both(pair, "edge", names, {**inputs, "a": "text", "ks": (K + 1,)})  # TypeError first
    assert c["fast"] == 0, with_reasons(c)


def test_index_records_and_spans() -> None:
    tree = ast.parse(
        "def f(u, n):\n"
        "    for k in range(n):\n"
        "        x = u[:, k - 1] + u[1:, k + 2, None]\n"
        "    y = u[:, k]\n"
    )
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    spans = counter_spans(func)
    assert list(spans) == ["k"]
    inside = func.body[0].body[0].value  # type: ignore[attr-defined]
    outside = func.body[1].value  # type: ignore[attr-defined]
    steady = steady_names(func)
    assert deferrable(inside.left, steady, spans)
    assert deferrable(inside.right, steady, spans)
    assert not deferrable(outside, steady, spans)  # after the loop: maybe unbound
    assert not deferrable(inside.left, steady, {})  # no loop binds it
    args: list[ast.expr] = [ast.Name("u"), ast.Name("k")]
    assert index_record(inside.left, args) == [[None, None, None], {"arg": 1, "add": -1}]
    assert index_record(inside.right, args) == [[1, None, None], {"arg": 1, "add": 2}, None]
