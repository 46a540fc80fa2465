"""A backend with `lower_module` compiles a module's sites in one call; when that
fails, each site is compiled alone, so a failed batch costs nothing but time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipeline_harness import VECMATH_ON, Harness, stats_table, write

PROGRAM = """\
import vecmath
from vecmath import Vec


def f(a: Vec, b: Vec) -> Vec:
    return a * b + a


def g(a: Vec) -> float:
    return vecmath.total(a * 2.0)


print(f(Vec([1.0, 2.0]), Vec([3.0, 4.0])), g(Vec([1.0, 2.0])))
"""


@pytest.mark.parametrize("backend", ["batched", "batchy"])
def test_sites_compile_with_or_without_a_batch(
    harness: Harness, bad_site: Path, backend: str
) -> None:
    folder = write(
        harness.tmp / backend,
        {"pyproject.toml": VECMATH_ON.replace('["pyloop"]', f'["{backend}"]'), "prog.ppy": PROGRAM},
    )
    env = harness.env([bad_site], PPY_STATS="1")
    done = harness.ppy(folder / "prog.ppy", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Vec([4.0, 10.0]) 6.0\n"
    assert "Traceback" not in done.stderr
    table = stats_table(done.stderr)
    assert table["prog:f.1"][0] == 1
    assert table["prog:g.2"][0] == 1
    out = harness.tmp / f"{backend}.artifact"
    built = harness.ppy("build", folder / "prog.ppy", "-o", out, env=env)
    assert built.returncode == 0, built.stderr
    manifest = json.loads((out / "modules" / "__main__" / "manifest.json").read_text())
    batches = {record["unit"]["data"].get("batch") for record in manifest["expr_sites"]}
    assert batches == ({2} if backend == "batched" else {None})
