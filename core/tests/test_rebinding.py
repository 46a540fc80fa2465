"""Names rebound by `t OP= v` (frontend/rebinding.py), in the core alone: a made-up
library of int64 and float64 arrays (no NumPy). Where its plugin says its arrays are
updated in place, `t` keeps its type whatever `v`'s element type; then a store of
another element type into `t` is no store site (the reason is a remark) and the value
is cut alone. A plugin that does not answer the in-place question gets Python's rule
(`t = t OP v`)."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping
from typing import ClassVar

import pytest

from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.rebinding import Binding, bindings
from ppy_core.compiler.frontend.sites import Findings, SiteFinder
from ppy_core.interface.hooks import HookCaller
from ppy_core.interface.plugin import Converge, ModuleContext, OperatorContext, Plugin
from ppy_core.ir.types import F64, I64, UNKNOWN, ScalarType, TensorType, Type
from ppy_core.runtime import adapter as adapters
from ppy_core.runtime.adapter import RuntimeAdapter

INTS, FLOATS = TensorType(I64, None, "vecs"), TensorType(F64, None, "vecs")
_BINARY = {"Add": "tensor.add", "Sub": "tensor.sub", "Mult": "tensor.mul"}


class MutablePlugin(Plugin):
    """Arrays of one element type with each other and with numbers converge (mixed
    element types do not, as NumPy's plugin declines them); `t OP= v` on an array
    leaves `t` as it is, as an in-place ufunc does."""

    name = "vecs"
    modules = ("vecs",)
    in_place: ClassVar[bool] = True

    def external_types(self) -> Mapping[str, Type]:
        return {"vecs.Ints": INTS, "vecs.Floats": FLOATS}

    def operator(self, ctx: OperatorContext) -> Converge | Type | None:
        if ctx.in_place and self.in_place and ctx.operands[0] in (INTS, FLOATS):
            return ctx.operands[0]
        arrays = {t for t in ctx.operands if isinstance(t, TensorType)}
        numbers = all(t in arrays or isinstance(t, ScalarType) for t in ctx.operands)
        if ctx.op in _BINARY and len(arrays) == 1 and numbers:
            return Converge(_BINARY[ctx.op], arrays.pop())
        return None


class ImmutablePlugin(MutablePlugin):
    """The same arrays, immutable: the plugin ignores `in_place` (`x += y` rebinds)."""

    in_place = False


class StoringAdapter(RuntimeAdapter):
    """A runtime of `vecs` that stores int64 and float64 results into targets."""

    name = "vecs"
    store_elements = frozenset({"i64", "f64"})


@pytest.fixture(autouse=True)
def stores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(adapters._adapters, "vecs", StoringAdapter())


def find(source: str, plugin: Plugin) -> tuple[Findings, dict[str, dict[str, Type]]]:
    """The sites and remarks of `source`, and per function the types its names got."""
    tree = ast.parse(textwrap.dedent(source))
    finder = SiteFinder(
        Oracle(HookCaller([plugin])), ModuleContext("m.py", "m", {"vecs": "vecs"}), 2
    )
    env: dict[str, dict[str, Type]] = {}
    for func in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        typer = finder.typer()
        finder.locals(func, typer, finder.parameters(func, typer))
        env[func.name] = typer.env
    return finder.run(tree), env


def sites(found: Findings, function: str) -> list[tuple[str, str | None]]:
    """(text, store form) of each site of `function`."""
    return [
        (ast.unparse(s.node), s.store.form if s.store else None)
        for s in found.expr_sites
        if s.function == function
    ]


def remarks(found: Findings, function: str) -> list[str]:
    """What `function`'s remarks say about stores."""
    return [r.message for r in found.remarks if r.function == function and "stored" in r.message]


SOURCE = """
    import vecs
    def mixed(t: vecs.Ints, a: vecs.Floats, b: vecs.Floats, n: int):
        for _ in range(n):
            t += a * b
        return t * 2 + 1
    def same(t: vecs.Ints, a: vecs.Ints, b: vecs.Ints, n: int):
        for _ in range(n):
            t += a * b
            t -= b
        return t
    def local(a: vecs.Floats, b: vecs.Floats, n: int):
        t = a - b
        s = t * 3
        for _ in range(n):
            s *= 2
            t += s - b
        return t
    def rebound(t: vecs.Ints, a: vecs.Floats, b: vecs.Floats):
        t = t + a * b
        return t * 2 + 1
"""


def test_augmented_assignment_is_an_in_place_binding() -> None:
    tree = ast.parse(textwrap.dedent(SOURCE))
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "local")
    found = bindings(func)
    assert [(ast.unparse(b.value), b.in_place) for b in found["s"]] == [
        ("t * 3", False),
        ("s * 2", True),
    ]
    assert found["t"][1] == Binding(found["t"][1].value, in_place=True)
    assert ast.unparse(found["t"][1].value) == "t + (s - b)"


def test_an_array_updated_in_place_keeps_its_type() -> None:
    _found, env = find(SOURCE, MutablePlugin())
    assert env["mixed"]["t"] == INTS  # int64 `t += <float64>`: int64, or the library raises
    assert env["same"]["t"] == INTS
    assert (env["local"]["t"], env["local"]["s"]) == (FLOATS, FLOATS)  # the loop's fixed point
    assert env["rebound"]["t"] is UNKNOWN  # `t = t + v` is another binding: no one type


def test_a_store_of_another_element_type_is_no_store_site() -> None:
    found, _env = find(SOURCE, MutablePlugin())
    # the value is cut alone (typed, not assumed) and Python's `t += value` does the rest
    assert sites(found, "mixed") == [("a * b", None), ("t * 2 + 1", None)]
    assert all(not s.assumed for s in found.expr_sites)
    assert remarks(found, "mixed") == [
        "the value is stored by Python: the f64 result goes into a i64 target"
    ]
    # `t -= b`, `s *= 2`: one in-place operation each, the library's own (no site)
    assert sites(found, "same") == [("t + a * b", "name")]
    assert sites(found, "local") == [
        ("a - b", None),
        ("t * 3", None),
        ("t + (s - b)", "name"),
    ]
    assert not remarks(found, "same")
    assert not remarks(found, "local")


def test_a_plugin_ignoring_in_place_gets_pythons_rebinding() -> None:
    found, env = find(SOURCE, ImmutablePlugin())
    assert env["mixed"]["t"] is UNKNOWN  # `t += v` is `t = t + v`: no one type
    assert env["same"]["t"] == INTS  # `t + v` is int64 again: the fixed point holds
    assert sites(found, "mixed") == [("a * b", None)]  # `t * 2 + 1`: `t` of no known type
