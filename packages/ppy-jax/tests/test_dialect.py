"""The `stablehlo` dialect is the jax plugin's: registered by it, parsed once registered."""

from __future__ import annotations

from ppy_core import testing
from ppy_jax.dialect import STABLEHLO
from ppy_jax.plugin import JaxPlugin

TEXT = """\
func.func @g(%w: tensor<?xf32>) -> (tensor<?xf32>) {
  %e = stablehlo.exported %w {symbol = "f", blob = "ML\\u00efR"} : (tensor<?xf32>) -> tensor<?xf32>
  func.return %e : (tensor<?xf32>) -> ()
}
"""


def test_the_plugin_registers_the_stablehlo_dialect() -> None:
    assert tuple(JaxPlugin().register_dialects()) == (STABLEHLO,)


def test_stablehlo_ops_parse_once_the_plugin_dialect_is_registered() -> None:
    op = testing.check_dialects(JaxPlugin(), TEXT)
    (exported,) = [o for o in op.walk() if o.name == "stablehlo.exported"]
    assert exported.attributes["blob"] == "ML\u00efR"
