"""`class_type`: the classes a module defines are offered to the plugins in source order,
routed by their bases; a class a plugin types then resolves in the module's typers (a
call of it is the plugin's question, an annotation of it the plugin's type)."""

from __future__ import annotations

import ast
import textwrap

from ppy_core.compiler.frontend.classes import module_classes
from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.typer import Typer
from ppy_core.interface.hooks import HookCaller
from ppy_core.interface.plugin import CallAnswer, CallContext, ClassContext, ModuleContext, Plugin
from ppy_core.ir.types import UNKNOWN, OpaqueType, Type

SOURCE = """
import fakelib
from fakelib import Model as Base

class Point(fakelib.Model):
    x: int

class Point3(Point):
    z: int

class Plain:
    pass

class Other(Base):
    pass

def f(p: Point3) -> Point:
    return Point(x=1)
"""


class FakePlugin(Plugin):
    name = "fake"
    modules = ("fakelib",)

    def __init__(self) -> None:
        self.asked: list[tuple[str, tuple[str, ...]]] = []
        self.models: dict[str, Type] = {}

    def class_type(self, ctx: ClassContext) -> Type | None:
        self.asked.append((ctx.qualname, ctx.bases))
        if not any(b == "fakelib.Model" or b in self.models for b in ctx.bases):
            return None
        assert isinstance(ctx.node, ast.ClassDef)
        assert ctx.tree.body  # the whole module, to read from source
        self.models[ctx.qualname] = OpaqueType(ctx.qualname)
        return self.models[ctx.qualname]

    def call(self, ctx: CallContext) -> CallAnswer | None:
        known = self.models.get(ctx.callee)
        return CallAnswer(known) if known is not None else None


def test_classes_are_offered_in_order_and_resolve_in_the_typer() -> None:
    plugin = FakePlugin()
    hooks = HookCaller([plugin], claims={"fakelib": "fake"})
    oracle = Oracle(hooks)
    tree = ast.parse(textwrap.dedent(SOURCE))
    imports = {"fakelib": "fakelib", "Base": "fakelib.Model"}
    names, typed = module_classes(oracle, tree, ModuleContext("mod.py", "mod", imports))

    assert names == {n: f"mod.{n}" for n in ("Point", "Point3", "Plain", "Other")}
    assert set(typed) == {"mod.Point", "mod.Point3", "mod.Other"}
    # routed by their bases: `Plain` (no base a plugin claims) reaches the plugin too,
    # as any question about no claimed module does, and it answers None
    assert ("mod.Point3", ("mod.Point",)) in plugin.asked
    assert ("mod.Other", ("fakelib.Model",)) in plugin.asked

    typer = Typer(oracle, imports, "mod.py", local_names=names, local_types=typed)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert typer.annotation(func.args.args[0].annotation) == OpaqueType("mod.Point3")
    call = func.body[0].value  # type: ignore[attr-defined]
    assert typer.expr(call, {}) == OpaqueType("mod.Point")


def test_without_a_plugin_answer_classes_still_resolve_but_stay_unknown() -> None:
    oracle = Oracle(HookCaller([], claims={}))
    tree = ast.parse(textwrap.dedent(SOURCE))
    names, typed = module_classes(oracle, tree, ModuleContext("mod.py", "mod", {}))
    assert typed == {}
    typer = Typer(oracle, {}, "mod.py", local_names=names, local_types=typed)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert typer.annotation(func.args.args[0].annotation) is UNKNOWN
    assert typer.expr(func.body[0].value, {}) is UNKNOWN  # type: ignore[attr-defined]
