"""The `aten` dialect is the torch plugin's: registered by it, parsed once registered."""

from __future__ import annotations

import pytest

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir import core_registry, parse_ir, print_ir, verify
from ppy_torch.dialect import ATEN, AtenWriteOp
from ppy_torch.plugin import TorchPlugin

TEXT = """\
func.func @layer(%x: tensor<?xf32>, %t: tensor<?xf32>) -> (tensor<?xf32>) {
  %g = aten.call %x {target = "gelu", args = [0, "tanh"]} : (tensor<?xf32>) -> tensor<?xf32>
  %w = aten.copy_ %t, %g : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %w : (tensor<?xf32>) -> ()
}
"""


def test_the_plugin_registers_the_aten_dialect() -> None:
    assert tuple(TorchPlugin().register_dialects()) == (ATEN,)


def test_aten_ops_parse_once_the_plugin_dialect_is_registered() -> None:
    with pytest.raises(InvalidIRError, match=r"unknown operation 'aten\.call'"):
        parse_ir(TEXT, core_registry())
    registry = core_registry()
    for dialect in TorchPlugin().register_dialects():
        registry.register(dialect)
    op = parse_ir(TEXT, registry)
    verify(op)
    assert print_ir(op) == TEXT
    (write,) = [o for o in op.walk() if isinstance(o, AtenWriteOp)]
    assert "WriteMemory" in write.effects
