"""Python's arithmetic on numbers is typed by the core (frontend/arithmetic.py), with
no plugin active: `i // 2` is an int and `x % 2` a float whether or not ppy-numpy is
installed (it was typed only by ppy-numpy's own copy of the rule). A plugin is asked
only where an operand is no Python number; the checker reads the same rule, with
Python's bools as ints."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from ppy_core.compiler.check import check_paths
from ppy_core.compiler.frontend.arithmetic import python_arithmetic
from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.typer import Typer
from ppy_core.interface.hooks import HookCaller
from ppy_core.interface.plugin import Converge, OperatorContext, Plugin
from ppy_core.ir.types import F64, I1, I64, UNKNOWN, TensorType, Type

VECS = TensorType(F64, None, "vecs")


class CountingPlugin(Plugin):
    """Answers every operator with its own array type, and counts what it was asked."""

    name = "vecs"
    modules = ("vecs",)

    def __init__(self) -> None:
        self.asked: list[tuple[Type, ...]] = []

    def operator(self, ctx: OperatorContext) -> Converge | Type | None:
        self.asked.append(ctx.operands)
        return VECS


def _type(source: str, plugins: list[Plugin] | None = None) -> Type:
    env = {"i": I64, "j": I64, "x": F64, "b": I1, "v": VECS}
    typer = Typer(Oracle(HookCaller(plugins or [])), {}, "m.py", env=env)
    return typer.expr(ast.parse(source, mode="eval").body, {})


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("i // 2", I64),
        ("i % j", I64),
        ("-i", I64),
        ("+x", F64),
        ("i + j * 3", I64),
        ("i // 2.0", F64),
        ("x % 2", F64),
        ("i / j", F64),
        ("(i - 1) // 2 * x", F64),
        ("i ** 2", UNKNOWN),  # 2 ** -1 is a float: the type depends on the value
        ("i << 1", UNKNOWN),
        ("b + 1", UNKNOWN),  # to the compiler an i1 may be a NumPy bool (`+` is `or`)
        ("v * 2", UNKNOWN),  # an operand no number and no plugin: Unknown
    ],
)
def test_python_numbers_typed_by_the_core_alone(source: str, expected: Type) -> None:
    assert _type(source) == expected
    value = eval(source, {"i": 7, "j": 3, "x": 2.5, "b": True, "v": 1.0})  # Python's own
    if expected == I64:
        assert type(value) is int
    elif expected == F64:
        assert type(value) is float


def test_a_plugin_is_asked_only_where_an_operand_is_no_number() -> None:
    plugin = CountingPlugin()
    assert _type("i // 2 + x", [plugin]) == F64
    assert plugin.asked == []  # numbers: the core's answer, the plugin never asked
    assert _type("v * (i // 2)", [plugin]) == VECS
    assert plugin.asked == [(VECS, I64)]


def test_bools_are_ints_only_where_the_caller_says_so() -> None:
    assert python_arithmetic("Add", (I1, I64)) is None
    assert python_arithmetic("Add", (I1, I64), bools=True) == I64
    assert python_arithmetic("FloorDiv", (I1, F64), bools=True) == F64
    assert python_arithmetic("USub", (I1,), bools=True) == I64
    assert python_arithmetic("Pow", (F64, F64), bools=True) is None
    assert python_arithmetic("Add", ()) is None


def test_the_checker_reads_the_same_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "pyproject.toml").write_text("[tool.ppy]\nstrict = false\n")
    cases = ["i // 2", "x % 2", "b // 2.0", "2.0 % b", "-b", "b * 2.0", "i ** 2"]
    body = "".join(
        f"def f{k}(b: bool, i: int, x: float) -> str:\n    return {c}\n"
        for k, c in enumerate(cases)
    )
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(body))
    found = {
        cases[(f.location.line - 2) // 2]: f.message.split(" returned")[0]
        for f in check_paths([str(path)]).findings
        if f.code == "E1005" and f.location
    }
    # each a contradiction of `-> str`, with Python's type; `i ** 2` may be a float
    assert found == {
        "i // 2": "int",
        "x % 2": "float",
        "b // 2.0": "float",
        "2.0 % b": "float",
        "-b": "int",
        "b * 2.0": "float",
    }
