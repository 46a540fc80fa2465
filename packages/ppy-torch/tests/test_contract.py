"""Contract tests: entry points, lazy imports, tables, staging decisions (no compiler)."""

from __future__ import annotations

import ast
import textwrap

import pytest

import ppy_torch
from ppy_core import testing
from ppy_core.interface.specs import FallbackSpec, GraphRegionSpec, RejectSpec
from ppy_torch import ops
from ppy_torch.direct import resolver
from ppy_torch.plugin import stage_spec
from ppy_torch.stage import StageInput

DIST = testing.Distribution.of(__file__)
# (group, entry point name, factory)
ENTRIES: list[tuple[testing.Group, str, str]] = [
    ("plugins", "torch", "ppy_torch:create_plugin"),
    ("backends", "aten", "ppy_torch:create_backend"),
]
IMPORTS = {"torch": "torch", "F": "torch.nn.functional", "ppy": "ppy"}


def stage(source: str, pure: bool = False) -> object:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    decorators = tuple(
        resolver(IMPORTS)(d.func if isinstance(d, ast.Call) else d) or "?"
        for d in node.decorator_list
    )
    return stage_spec(StageInput(node, resolver(IMPORTS), decorators), pure=pure)


def test_importing_does_not_import_torch() -> None:
    testing.check_lazy_imports(DIST, ("torch",), modules=("ppy_torch", "ppy_torch.runtime"))


def test_entry_points_are_exactly_these() -> None:
    expected = [(group, name) for group, name, _ in ENTRIES]
    testing.check_entry_points(DIST, [*expected, ("runtimes", "torch"), ("loaders", "aten")])


def test_runtime_adapter_is_registered() -> None:
    testing.check_runtime_adapter(DIST, "torch", factory="ppy_torch.fused:create_adapter")


@pytest.mark.parametrize(("group", "name", "factory"), ENTRIES)
def test_entry_points_name_the_factories(group: testing.Group, name: str, factory: str) -> None:
    testing.check_entry_point(DIST, group, name, factory=factory)
    testing.check_first_party(DIST, group, name)
    testing.check_discovered(DIST, group, name)


def test_fingerprint_names_the_torch_build() -> None:
    import torch

    fp = ppy_torch.fingerprint()
    assert fp == ppy_torch.create_plugin().fingerprint()
    assert fp.startswith(f"v2:torch={torch.__version__}:cxx11abi=")
    assert fp.endswith(f":cuda={torch.version.cuda or 'none'}")


def test_table_sizes() -> None:
    assert len(ops.CURATED_OPS) == 69
    assert len(ops.ATEN_CALLS) == 46
    assert set(ops.CURATED_OPS.values()) <= set(ops.ATEN_CALLS)


def test_layer_stages_to_three_calls() -> None:
    spec = stage("""
        @ppy.opt(3)
        def layer(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
            return torch.relu(torch.add(torch.matmul(x, weight), bias))
    """)
    assert isinstance(spec, GraphRegionSpec)
    assert spec.backend == "aten"
    assert [n.overload for n in spec.graph.nodes] == ["matmul", "add.Tensor", "relu"]


@pytest.mark.parametrize(
    ("call", "overload"),
    [
        ("torch.mean(x)", "mean"),
        ("torch.mean(x, (0, 1))", "mean.dim"),
        ("torch.mean(x, dim=(1,), keepdim=True)", "mean.dim"),
        ("torch.pow(x, 2)", "pow.Tensor_Scalar"),
        ("torch.pow(x, x)", "pow.Tensor_Tensor"),
        ("x.squeeze()", "squeeze"),
        ("x.squeeze(1)", "squeeze.dim"),
        ("F.gelu(x, approximate='tanh')", "gelu"),
        ("torch.softmax(input=x, dim=-1)", "softmax.int"),
    ],
)
def test_the_signature_the_call_fills(call: str, overload: str) -> None:
    spec = stage(f"""
        def f(x: torch.Tensor) -> torch.Tensor:
            return {call}
    """)
    assert isinstance(spec, GraphRegionSpec), spec
    assert spec.graph.nodes[-1].overload == overload


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("return torch.special.erf(x)", "`torch.special.erf` is not a curated torch operation"),
        ("return torch.sum(x, dtype=torch.float64)", "has a parameter `dtype`"),
        ("return torch.softmax(x)", "needs `dim`"),
        ("return x.view([2, 3.0])", "a tuple in a region holds ints or tensors"),
        ("print(x)\n    return x", "`print` is not a curated torch operation"),
        ("if x: pass\n    return x", "`If` statement stays Python"),
        ("return 1 - x", "a number on the left of Sub"),
    ],
)
def test_refusals_say_why(body: str, reason: str) -> None:
    spec = stage("def f(x: torch.Tensor) -> torch.Tensor:\n    " + body)
    assert isinstance(spec, FallbackSpec)
    assert reason in spec.reason


def test_signature_refusals() -> None:
    assert "annotation" in stage("def f(x): return x").reason  # type: ignore[attr-defined]
    assert (
        "defaults"
        in stage(  # type: ignore[attr-defined]
            "def f(x: torch.Tensor = None) -> torch.Tensor: return x"
        ).reason
    )
    spec = stage("""
        @functools.cache
        def f(x: torch.Tensor) -> torch.Tensor:
            return x
    """)
    assert isinstance(spec, FallbackSpec)
    assert "not a ppy decorator" in spec.reason


def test_pure_function_that_writes_is_rejected() -> None:
    source = """
        def f(out: torch.Tensor, x: torch.Tensor) -> None:
            torch.narrow(out, 0, 0, 1).copy_(x)
    """
    spec = stage(source, pure=True)
    assert isinstance(spec, RejectSpec)
    assert spec.code == "E1010"
    ok = stage(source)
    assert isinstance(ok, GraphRegionSpec)
    assert "WriteMemory" in ok.effects


def test_graph_text_is_stable() -> None:
    source = """
        def f(x: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
            return x.view(x.size(0), n, -1), x * 0.5
    """
    a, b = stage(source), stage(source)
    assert isinstance(a, GraphRegionSpec)
    assert isinstance(b, GraphRegionSpec)
    assert a.graph.key() == b.graph.key()
    assert "aten.view(self=%x, size=(%0, %n, -1))" in a.graph.text()
