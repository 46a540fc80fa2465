"""The hooks the compiler calls on the way, with a fake plugin, in process:
`decorator_semantics`, `adjust_call`, `register_patterns`/`register_passes` (E1902
names the registering plugin), `register_lowerings` and `CallAnswer.lowering` (a
backend that cannot read a spec skips the site, with the reason), and effects (a
call that writes, does IO or calls back ends a site and keeps a function from
being a region). Nothing here imports a library."""

from __future__ import annotations

import ast
import json
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from ppy_core.cache.module_key import ModuleKey
from ppy_core.compiler.driver import Builder
from ppy_core.compiler.frontend.sites import FunctionSite
from ppy_core.compiler.frontend.transform import rewrite_module
from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.backend import Backend, CompiledUnit, LowerContext
from ppy_core.interface.discovery import Activation
from ppy_core.interface.plugin import (
    CALLS,
    TRANSPARENT,
    UNVOUCHED,
    CallAnswer,
    CallContext,
    Converge,
    DecoratorContext,
    DecoratorSemantics,
    FunctionContext,
    OperatorContext,
    Plugin,
)
from ppy_core.interface.specs import GraphRegionSpec, IntrinsicSpec, LoweringSpec
from ppy_core.ir.core import Operation
from ppy_core.ir.rewrite import Rewriter
from ppy_core.ir.types import F64, OpaqueType, ScalarType, TensorType, Type
from ppy_core.project.config import Config
from ppy_core.project.scope import scan_module
from ppy_core.runtime.artifact import MANIFEST

VEC = TensorType(F64, (None,), "fakelib")
APP = OpaqueType("fakelib.App")
_BINARY = {"Add": "tensor.add", "Sub": "tensor.sub", "Mult": "tensor.mul"}


class DropDoubleNegation:
    """-(-x) is x, bit for bit (two sign flips)."""

    def match_and_rewrite(self, op: Operation, rewriter: Rewriter) -> bool:
        inner = op.operands[0].owner if op.name == "tensor.neg" else None
        if not isinstance(inner, Operation) or inner.name != "tensor.neg":
            return False
        rewriter.replace_op(op, [inner.operands[0]])
        return True


class EraseInUse:
    """Broken on purpose: erases a multiplication whose result is still used."""

    def match_and_rewrite(self, op: Operation, rewriter: Rewriter) -> bool:
        if op.name != "tensor.mul":
            return False
        rewriter.erase_op(op)
        return True


class SelfBlamingPass:
    """Broken on purpose, and claims to be the core's."""

    name: ClassVar[str] = "lying-pass"
    owner: ClassVar[str] = "core"

    def run(self, root: Operation) -> None:
        for op in list(root.walk()):
            if op.name == "tensor.mul" and op.parent is not None:
                op.parent.remove(op)


class FakePlugin(Plugin):
    """Plugin `fake`, claiming the module `fakelib`."""

    name = "fake"
    modules = ("fakelib",)

    def __init__(
        self,
        patterns: Sequence[Any] = (),
        passes: Sequence[Any] = (),
        lowerings: Mapping[str, LoweringSpec] | None = None,
    ) -> None:
        self.patterns, self.passes = tuple(patterns), tuple(passes)
        self.lowerings = dict(lowerings or {})
        self.staged: list[FunctionContext] = []

    def external_types(self) -> Mapping[str, Type]:
        return {"fakelib.Vec": VEC, "fakelib.App": APP}

    def operator(self, ctx: OperatorContext) -> Converge | None:
        ok = all(t == VEC or isinstance(t, ScalarType) for t in ctx.operands)
        if ctx.op == "USub" and ctx.operands == (VEC,):
            return Converge("tensor.neg", VEC)
        if ctx.op in _BINARY and VEC in ctx.operands and ok:
            return Converge(_BINARY[ctx.op], VEC)
        return None

    def call(self, ctx: CallContext) -> CallAnswer | None:
        if ctx.callee == "fakelib.sin":
            return CallAnswer(VEC, lowering=IntrinsicSpec("sin"))
        if ctx.callee == "fakelib.scale_":
            return CallAnswer(VEC, effects=frozenset({"ReadMemory", "WriteMemory"}))
        if ctx.callee == "fakelib.show":
            return CallAnswer(OpaqueType("none"), effects=frozenset({"IO"}))
        if ctx.callee == "fakelib.App":
            return CallAnswer(APP)
        return None

    def adjust_call(self, ctx: CallContext) -> CallContext | None:
        # Drops `mode=` whatever its value: the core must still keep a non-literal one.
        if ctx.callee == "fakelib.sin" and "mode" in ctx.kwargs:
            return CallContext(ctx.callee, ctx.args, {}, ctx.constants, {}, ctx.receiver)
        return None

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        if ctx.callee == "fakelib.sin" and not ctx.kwargs and ctx.args == (VEC,):
            return Converge("tensor.unary", VEC, {"op": "sin"})
        return None

    def decorator_semantics(self, ctx: DecoratorContext) -> DecoratorSemantics | None:
        kinds = {"fakelib.keep": TRANSPARENT, "fakelib.jit": CALLS, "fakelib.App.route": UNVOUCHED}
        kind = kinds.get(ctx.qualname)
        return DecoratorSemantics(kind, "fake says so") if kind else None

    def stage(self, ctx: FunctionContext) -> LoweringSpec | None:
        self.staged.append(ctx)
        if ctx.node.name.startswith("region"):
            return GraphRegionSpec("spy", ctx.node.name)
        return None

    def register_patterns(self) -> Sequence[Any]:
        return self.patterns

    def register_passes(self) -> Sequence[Any]:
        return self.passes

    def register_lowerings(self) -> Mapping[str, LoweringSpec]:
        return self.lowerings


class SpyBackend(Backend):
    """Lowers anything; reads the intrinsic specs named in `intrinsics`."""

    def __init__(self, name: str, intrinsics: tuple[str, ...] = ()) -> None:
        self.name = name  # type: ignore[misc]
        self.intrinsics = intrinsics

    def read_spec(self, spec: LoweringSpec) -> str | None:
        if isinstance(spec, IntrinsicSpec) and spec.name in self.intrinsics:
            return None
        return super().read_spec(spec)

    def can_lower(self, func: Operation) -> str | None:
        return None

    def lower(self, func: Any, ctx: LowerContext) -> CompiledUnit:
        return CompiledUnit(self.name, "nowhere:load", (), {"site": ctx.site_id})


def build(
    tmp_path: Path,
    source: str,
    plugin: FakePlugin,
    backends: Sequence[Backend] = (),
    opt: int = 2,
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """Compile `source` (module `mod`) with `plugin` and `backends`; the manifest."""
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    data = path.read_bytes()
    activation = Activation(plugins=(plugin,), claims={"fakelib": plugin.name})
    backends = tuple(backends) or (SpyBackend("spy", ("sin",)),)
    scope = scan_module(ast.parse(data), path)
    key = ModuleKey(path, data, "0" * 64, {}, Config(opt=opt), activation, backends, {}, scope)
    builder = Builder(key)
    out = tmp_path / "out"
    out.mkdir()
    builder.build(out)
    return json.loads((out / MANIFEST).read_text()), builder.diagnostics


HEADER = """\
import fakelib
from fakelib import Vec
"""


def remarks(manifest: dict[str, Any], function: str) -> list[str]:
    return [r["message"] for r in manifest["remarks"] if r["function"] == function]


def site_texts(manifest: dict[str, Any], function: str) -> list[str]:
    return [s["text"] for s in manifest["expr_sites"] if s["function"] == function]


# -- decorator_semantics --------------------------------------------------------------


DECORATED = (
    HEADER
    + """
app = fakelib.App()


@fakelib.keep()
def kept(a: Vec, b: Vec) -> Vec:
    return a * b + a


@fakelib.jit
def jitted(a: Vec, b: Vec) -> Vec:
    return a * b


@app.route("/")
def routed(a: Vec) -> Vec:
    return a * a


@mystery
def unknown(a: Vec) -> Vec:
    return a * a
"""
)


def test_decorators_by_kind(tmp_path: Path) -> None:
    manifest, _ = build(tmp_path, DECORATED, FakePlugin())
    assert site_texts(manifest, "kept") == ["a * b + a"]
    assert "transparent (fake says so)" in remarks(manifest, "kept")[0]
    for function in ("jitted", "routed", "unknown"):
        assert site_texts(manifest, function) == []
    assert "changes how 'jitted' is called" in remarks(manifest, "jitted")[0]
    assert remarks(manifest, "routed") == [
        "decorator 'fakelib.App.route' is unvouched (fake says so): left exactly as written"
    ]
    assert (
        "'mystery' is not known to leave the function as written" in remarks(manifest, "unknown")[0]
    )


def test_stage_sees_the_decorators_by_kind(tmp_path: Path) -> None:
    plugin = FakePlugin()
    build(tmp_path, DECORATED, plugin, opt=3)
    offered = {ctx.node.name: ctx for ctx in plugin.staged}
    assert set(offered) == {"kept", "jitted"}  # unvouched and opaque: never offered
    assert (offered["kept"].decorators, offered["kept"].outer) == ((), ("fakelib.keep",))
    assert (offered["jitted"].decorators, offered["jitted"].outer) == (("fakelib.jit",), ())


def test_a_region_goes_inside_its_transparent_decorators(tmp_path: Path) -> None:
    source = (
        HEADER
        + """
import ppy


@ppy.opt(3)
@fakelib.keep()
def region_f(a: Vec) -> Vec:
    return a * 2.0
"""
    )
    manifest, _ = build(tmp_path, source, FakePlugin())
    assert [r["function"] for r in manifest["function_sites"]] == ["region_f"]
    assert manifest["function_sites"][0]["unit"]["backend"] == "spy"
    tree = ast.parse(textwrap.dedent(source))
    func = tree.body[-1]
    assert isinstance(func, ast.FunctionDef)
    site = FunctionSite("region_f.1", "region_f", func, GraphRegionSpec("spy", None), position=2)
    rewritten = ast.unparse(rewrite_module(tree, [], [(0, site)]))
    assert "@ppy.opt(3)\n@fakelib.keep()\n@__ppy_fn_0\ndef region_f" in rewritten


# -- adjust_call -------------------------------------------------------------------------


def test_adjusted_keywords_converge_only_when_literal(tmp_path: Path) -> None:
    source = (
        HEADER
        + """
def f(a: Vec, m: int) -> Vec:
    x = fakelib.sin(a, mode=None) * 2.0
    return fakelib.sin(a, mode=m) * 2.0
"""
    )
    manifest, _ = build(tmp_path, source, FakePlugin())
    sites = {s["text"]: s for s in manifest["expr_sites"]}
    assert set(sites) == {"fakelib.sin(a, mode=None) * 2.0", "fakelib.sin(a, mode=m) * 2.0"}
    literal = sites["fakelib.sin(a, mode=None) * 2.0"]
    assert literal["leaves"] == ["a"]
    assert "tensor.unary" in literal["ir"]
    # `m` must still be evaluated: the call stays a leaf, though the plugin dropped `mode`
    assert sites["fakelib.sin(a, mode=m) * 2.0"]["leaves"] == ["fakelib.sin(a, mode=m)"]


# -- lowering specs ----------------------------------------------------------------------


def test_a_backend_that_cannot_read_a_spec_skips_the_site(tmp_path: Path) -> None:
    source = HEADER + "\n\ndef f(a: Vec) -> Vec:\n    return fakelib.sin(a) * 2.0\n"
    backends = [SpyBackend("picky"), SpyBackend("spy", ("sin",))]
    manifest, _ = build(tmp_path, source, FakePlugin(), backends)
    (site,) = manifest["expr_sites"]
    assert 'lowering = {kind = "intrinsic", name = "sin"}' in site["ir_final"]
    assert site["reasons"] == ["picky: tensor.unary: reads no intrinsic spec"]
    assert site["unit"]["backend"] == "spy"


def test_registered_lowerings_reach_the_backend(tmp_path: Path) -> None:
    source = HEADER + "\n\ndef f(a: Vec, b: Vec) -> Vec:\n    return -a * b\n"
    plugin = FakePlugin(lowerings={"tensor.neg": IntrinsicSpec("negate")})
    backends = [SpyBackend("spy", ("sin",)), SpyBackend("other", ("negate",))]
    manifest, _ = build(tmp_path, source, plugin, backends)
    (site,) = manifest["expr_sites"]
    assert 'lowering = {kind = "intrinsic", name = "negate"}' in site["ir_final"]
    assert site["reasons"] == ["spy: tensor.neg: reads no intrinsic spec"]
    assert site["unit"]["backend"] == "other"


# -- patterns and passes -----------------------------------------------------------------


def test_plugin_patterns_run_in_the_pipeline(tmp_path: Path) -> None:
    source = HEADER + "\n\ndef f(a: Vec, b: Vec) -> Vec:\n    return -(-a) * b\n"
    manifest, diagnostics = build(tmp_path, source, FakePlugin([DropDoubleNegation()]))
    (site,) = manifest["expr_sites"]
    assert site["ir"].count("tensor.neg") == 2
    assert "tensor.neg" not in site["ir_final"]
    assert site["unit"] is not None
    assert diagnostics == []


def test_a_pattern_that_breaks_the_ir_is_E1902_of_its_plugin(tmp_path: Path) -> None:
    source = HEADER + "\n\ndef f(a: Vec, b: Vec) -> Vec:\n    return a * b + a\n"
    manifest, diagnostics = build(tmp_path, source, FakePlugin([EraseInUse()]))
    (site,) = manifest["expr_sites"]
    assert site["unit"] is None
    assert site["reasons"][0].startswith("IR: ")
    (diagnostic,) = diagnostics
    assert diagnostic.code == "E1902"
    assert "pass 'patterns[EraseInUse]' of plugin 'fake' left the IR invalid" in (
        diagnostic.message
    )


def test_a_registered_pass_is_blamed_on_its_plugin_not_its_claim(tmp_path: Path) -> None:
    source = HEADER + "\n\ndef f(a: Vec, b: Vec) -> Vec:\n    return a * b + a\n"
    manifest, diagnostics = build(tmp_path, source, FakePlugin(passes=[SelfBlamingPass()]))
    assert manifest["expr_sites"][0]["unit"] is None
    (diagnostic,) = diagnostics
    assert diagnostic.code == "E1902"
    assert "of plugin 'fake'" in diagnostic.message


# -- effects -----------------------------------------------------------------------------


def test_a_writing_call_splits_the_tree(tmp_path: Path) -> None:
    source = HEADER + "\n\ndef f(a: Vec) -> Vec:\n    return a * 2.0 + fakelib.scale_(a) * a\n"
    manifest, _ = build(tmp_path, source, FakePlugin())
    # `a * 2.0` runs before the write and `... * a` after it: neither may move past it
    assert site_texts(manifest, "f") == ["a * 2.0"]


def test_effects_keep_a_function_from_being_a_region(tmp_path: Path) -> None:
    source = (
        HEADER
        + """
def region_io(a: Vec) -> Vec:
    fakelib.show(a)
    return a * 2.0


def region_writes(a: Vec) -> Vec:
    fakelib.scale_(a)
    return a * 2.0
"""
    )
    plugin = FakePlugin()
    manifest, _ = build(tmp_path, source, plugin, opt=3)
    assert manifest["function_sites"] == []
    assert [ctx.node.name for ctx in plugin.staged] == ["region_writes"]
    assert plugin.staged[0].effects == {"ReadMemory", "WriteMemory"}
    assert "no region: line 5: `fakelib.show(a)` has effect IO" in remarks(manifest, "region_io")
    assert (
        "no region: line 10: `fakelib.scale_(a)` writes memory, which the region for "
        "backend 'spy' does not declare" in remarks(manifest, "region_writes")
    )


class SquattingPlugin(FakePlugin):
    """Registers a dialect under the core's `tensor` name."""

    def register_dialects(self) -> Sequence[Any]:
        from ppy_core.ir.core import Dialect

        return [Dialect("tensor", [])]


def test_a_dialect_name_already_taken_is_E1910_and_the_module_still_builds(
    tmp_path: Path,
) -> None:
    source = HEADER + "\n\ndef f(a: Vec, b: Vec) -> Vec:\n    return a * b + a\n"
    manifest, diagnostics = build(tmp_path, source, SquattingPlugin())
    (diagnostic,) = diagnostics
    assert diagnostic.code == "E1910"
    assert "plugin 'fake' registers dialect 'tensor'" in diagnostic.message
    (site,) = manifest["expr_sites"]
    assert site["unit"] is not None  # the core's tensor dialect is untouched
