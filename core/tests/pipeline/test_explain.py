"""`ppy explain`: the sites, their IR (one fused tensor.kernel), the backend chosen,
and the reason for everything that stays Python."""

from __future__ import annotations

import pytest
from pipeline_harness import VECMATH_ON, Harness, write

PROG = """\
import functools

import vecmath
from vecmath import Vec


def fused(a: Vec, b: Vec, c: float) -> Vec:
    return a * b + c


def reduced(a: Vec) -> float:
    return vecmath.total(vecmath.sin(a) * 2.0)


def outer(a: Vec) -> Vec:
    def inner(b: Vec) -> Vec:
        return b * b
    return inner(a)


def scopes(a: Vec) -> list:
    square = lambda v: v * v  # noqa: E731
    return [v * 2.0 for v in (a, a)] + [square(a)]


@functools.lru_cache
def cached(a: Vec) -> Vec:
    return a * a


def gen(a: Vec):
    yield a * a


class Shape:
    def area(self, a: Vec) -> Vec:
        return a * a
"""


@pytest.fixture(scope="module")
def explained(harness: Harness) -> str:
    folder = write(harness.tmp / "explain", {"pyproject.toml": VECMATH_ON, "prog.ppy": PROG})
    done = harness.ppy("explain", folder / "prog.ppy")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def test_explain_shows_sites_ir_and_backend(explained: str) -> None:
    lines = explained.splitlines()
    assert lines[0].endswith("prog.ppy: cache miss (no entry for this file yet)")
    assert lines[1] == "plugins: vecmath"
    assert "site fused.1 in fused at prog.ppy:8:12: a * b + c  -> compiled by pyloop" in lines
    assert (
        "site reduced.2 in reduced at prog.ppy:12:12: vecmath.total(vecmath.sin(a) * 2.0)"
        "  -> compiled by pyloop"
    ) in lines
    assert "  leaves: a, b, c" in lines
    fused_ir = explained.split("site fused.1")[1].split("\nsite ")[0]
    assert fused_ir.count("tensor.kernel") == 1  # fused into one kernel
    assert "tensor.mul" in fused_ir
    assert "tensor.add" in fused_ir
    assert 'func.func @"fused.1"' in fused_ir
    reduced_ir = explained.split("site reduced.2")[1]
    assert "tensor.unary %" in reduced_ir
    assert '{op = "sin"}' in reduced_ir
    assert "tensor.reduce" in reduced_ir


def test_explain_gives_a_reason_for_what_stays_python(explained: str) -> None:
    stays = explained.split("\nstays Python:\n")[1]
    for expected in (
        "prog.ppy:16 (outer): nested definition 'inner' stays Python",
        "prog.ppy:22 (scopes): lambda stays Python",
        "prog.ppy:23 (scopes): listcomp stays Python",
        "prog.ppy:27 (cached): decorator 'functools.lru_cache' is not known to leave the "
        "function as written",
        "prog.ppy:31 (gen): generator functions stay Python",
        "prog.ppy:35 (Shape): class 'Shape' stays Python",
    ):
        assert expected in stays, (expected, stays)
    # none of those became a site
    assert "in outer at" not in explained
    assert "in gen at" not in explained
    assert "in cached at" not in explained


def test_explain_of_a_cached_module_says_hit(harness: Harness, explained: str) -> None:
    done = harness.ppy("explain", harness.tmp / "explain" / "prog.ppy")
    assert done.stdout.splitlines()[0].endswith("prog.ppy: cache hit")
    assert done.stdout.splitlines()[1:] == explained.splitlines()[1:]
