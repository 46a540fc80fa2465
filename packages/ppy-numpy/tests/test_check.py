"""What `ppy check` learns from the NumPy plugin: attributes an ndarray lacks (E1003) and
reduction axes an array of known rank does not have (E1007) — and that the build, which
asks the same hooks, does not report them (Python decides at run time)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ppy_core.compiler.check import check_paths

SOURCE = """
from typing import Annotated

import numpy as np
import ppy


def f(a: Annotated[np.ndarray, ppy.Shape("n", 3)], b: np.ndarray) -> float:
    print(a.shapee, a.shape, a.T, b.mT, b.ptp, a.__len__)
    total = np.sum(a, axis=2) + a.sum(axis=-3) + a.sum(axis=1) + np.mean(a, axis=-2)
    return float(b.sum(axis=7))  # rank unknown: nothing to say
"""


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def test_attribute_and_axis_findings(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(SOURCE))
    report = check_paths([str(path)])
    found = [(f.location.line, f.location.column, f.code) for f in report.findings if f.location]
    assert found == [(9, 11, "E1003"), (10, 13, "E1007"), (10, 33, "E1007")]
    messages = [f.message for f in report.findings]
    assert "no attribute 'shapee'" in messages[0]
    assert "rank 2" in messages[1]
    assert "no axis 2" in messages[1]


def test_the_build_does_not_report_what_only_the_checker_does(tmp_path: Path) -> None:
    from ppy_core.compiler.cached import compile_file

    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(SOURCE))
    compiled = compile_file(path)
    codes = {d.code for d in compiled.diagnostics}
    assert not codes & {"E1003", "E1007"}
