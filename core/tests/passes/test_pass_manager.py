"""The pass manager verifies after every pass and blames the pass that broke the IR:
a plugin's pass with E1902 naming the plugin, a core pass with an InternalError."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

from ppy_core.compiler.passes import CORE_PASSES
from ppy_core.diagnostics import InternalError, InvalidIRError, PluginError
from ppy_core.ir import F64, Operation, PassManager, TensorType, verify
from ppy_core.ir.dialects.builtin import FuncOp, ModuleOp, ReturnOp
from ppy_core.ir.dialects.tensor import NegOp, UnaryOp

VEC = TensorType(F64, (None,))


def module() -> ModuleOp:
    m = ModuleOp.empty()
    func = m.body.block.append(FuncOp.build("f", [VEC], [VEC], ["x"]))
    neg = func.entry.append(NegOp([func.args[0]], [VEC]))
    func.entry.append(ReturnOp([neg.result]))
    return m


def first(root: Operation, name: str) -> Operation:
    return next(op for op in root.walk() if op.name == name)


@dataclass(frozen=True, slots=True)
class CorruptingPass:
    """Turns the first tensor.neg into a tensor.unary without its `op` attribute."""

    name: ClassVar[str] = "corrupt"
    owner: ClassVar[str] = "fakeplugin"

    def run(self, root: Operation) -> None:
        neg = first(root, "tensor.neg")
        block = neg.parent
        assert block is not None
        bad = UnaryOp(neg.operands, [r.type for r in neg.results])
        bad.results = neg.results
        block.ops[block.ops.index(neg)] = bad
        bad.parent = block


@dataclass(frozen=True, slots=True)
class CoreCorruptingPass(CorruptingPass):
    name: ClassVar[str] = "core-corrupt"
    owner: ClassVar[str] = "core"


@dataclass(frozen=True, slots=True)
class RaisingPass:
    name: ClassVar[str] = "explode"
    owner: ClassVar[str] = "fakeplugin"

    def run(self, root: Operation) -> None:
        raise KeyError("no such thing")


@dataclass(frozen=True, slots=True)
class CoreRaisingPass(RaisingPass):
    name: ClassVar[str] = "core-explode"
    owner: ClassVar[str] = "core"


@dataclass(frozen=True, slots=True)
class InvalidIRRaisingPass:
    """Reads `.result` of an op with no results: the IR raises InvalidIRError."""

    name: ClassVar[str] = "misread"
    owner: ClassVar[str] = "fakeplugin"

    def run(self, root: Operation) -> None:
        _ = first(root, "func.return").result


@dataclass(frozen=True, slots=True)
class Recorder:
    name: ClassVar[str] = "record"
    owner: ClassVar[str] = "fakeplugin"
    seen: list[str]

    def run(self, root: Operation) -> None:
        self.seen.append(root.name)


def test_plugin_pass_that_corrupts_the_ir_is_named_with_e1902() -> None:
    with pytest.raises(PluginError) as info:
        PassManager([*CORE_PASSES, CorruptingPass()]).run(module())
    err = info.value
    assert err.code == "E1902"
    message = err.diagnostic.message
    assert "pass 'corrupt' of plugin 'fakeplugin'" in message
    assert "left the IR invalid" in message
    assert "tensor.unary: missing attribute 'op'" in message
    assert "fakeplugin" in err.diagnostic.hint
    assert isinstance(err.__cause__, InvalidIRError)


def test_core_pass_that_corrupts_the_ir_is_an_internal_error() -> None:
    with pytest.raises(InternalError) as info:
        PassManager([CoreCorruptingPass()]).run(module())
    message = info.value.diagnostic.message
    assert info.value.code == "E9001"
    assert "core pass 'core-corrupt' left the IR invalid" in message
    assert "missing attribute 'op'" in message


@pytest.mark.parametrize(
    ("p", "error", "fragment"),
    [
        (
            RaisingPass(),
            PluginError,
            "pass 'explode' of plugin 'fakeplugin' raised KeyError: 'no such thing'",
        ),
        (CoreRaisingPass(), InternalError, "core pass 'core-explode' raised KeyError"),
        (
            InvalidIRRaisingPass(),
            PluginError,
            "pass 'misread' of plugin 'fakeplugin' raised InvalidIRError",
        ),
    ],
)
def test_pass_that_raises_is_blamed(p: object, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as info:
        PassManager([p]).run(module())  # type: ignore[list-item]
    assert fragment in info.value.diagnostic.message  # type: ignore[attr-defined]
    if error is PluginError:
        assert info.value.code == "E1902"  # type: ignore[attr-defined]


def test_invalid_input_is_rejected_before_any_pass_runs() -> None:
    seen: list[str] = []
    m = module()
    CorruptingPass().run(m)
    with pytest.raises(InvalidIRError):
        PassManager([Recorder(seen)]).run(m)
    assert seen == []


def test_valid_pipeline_runs_every_pass_in_order() -> None:
    seen: list[str] = []
    m = module()
    PassManager([Recorder(seen), *CORE_PASSES, Recorder(seen)]).run(m)
    verify(m)
    assert seen == ["builtin.module", "builtin.module"]
    assert [p.name for p in CORE_PASSES] == ["cse", "dce", "fuse-elementwise"]
    assert {p.owner for p in CORE_PASSES} == {"core"}
