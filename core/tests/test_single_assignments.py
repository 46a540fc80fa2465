"""`single_assignments`: the names a function binds once, chained assignments included."""

from __future__ import annotations

import ast

from ppy_core.compiler.frontend.typer import single_assignments


def _found(source: str) -> dict[str, str]:
    func = ast.parse(source).body[0]
    assert isinstance(func, ast.FunctionDef)
    return {name: ast.unparse(value) for name, value in single_assignments(func).items()}


def test_a_chained_assignment_binds_each_name_to_the_value() -> None:
    found = _found("def f(x):\n    a = b = x * 2.0\n    c = 1\n    return a + b + c\n")
    assert found == {"a": "x * 2.0", "b": "x * 2.0", "c": "1"}


def test_names_bound_again_or_unpacked_are_not_single() -> None:
    source = (
        "def f(x):\n"
        "    a = b = x\n"
        "    b = 2.0\n"  # b is bound twice: a stays single
        "    c = c2 = 1\n"
        "    for c2 in x:\n"  # so is c2
        "        pass\n"
        "    d, e = x\n"  # unpacking: no single value
        "    g = h[0] = x\n"  # a subscript target: not all names
        "    return a\n"
    )
    assert _found(source) == {"a": "x", "c": "1"}
