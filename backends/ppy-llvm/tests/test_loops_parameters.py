"""A typed loop's parameters are typed by the one rule (`Typer.parameter`): an
annotation the typer reads as int or float makes an int or float parameter, however it
is written (a string annotation, `Annotated[int, ...]`), as an observed int or float
does. The loops builder read the annotation's name itself and took only a bare `int`
or `float`: `n: "int"` stayed Python ("parameter `n` is not an int, float or typed
array")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from loops_harness import fast_calls, load_both, outcome

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """
from typing import Annotated

import numpy as np


def quoted(a: np.ndarray, n: "int", x: "float") -> float:
    s = 0.0
    for i in range(n):
        s += a[i] * x
    return s


def annotated(a: np.ndarray, n: Annotated[int, "rows"]) -> float:
    s = 0.0
    for i in range(n):
        s += a[i] * 2.0
    return s
"""


def test_parameters_typed_by_the_typers_rule(tmp_path: Path) -> None:
    mod, plain = load_both(tmp_path, "loops_params", SOURCE)
    a = np.linspace(-3.0, 7.0, 9)
    for name, args in [("quoted", (a, 7, 0.25)), ("annotated", (a, 9))]:
        fast, python = getattr(mod, name), getattr(plain, name)
        before = fast_calls(fast)
        assert outcome(fast, *args) == outcome(python, *args)  # bit for bit
        assert fast_calls(fast) == before + 1, name  # the typed loop ran
    # a value of another type than annotated: the guard sends it to Python
    assert outcome(mod.quoted, a, 7.0, 0.25) == outcome(plain.quoted, a, 7.0, 0.25)
