"""The `aten` dialect is the torch plugin's: registered by it, parsed once registered."""

from __future__ import annotations

from ppy_core import testing
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
    op = testing.check_dialects(TorchPlugin(), TEXT)
    (write,) = [o for o in op.walk() if isinstance(o, AtenWriteOp)]
    assert "WriteMemory" in write.effects
