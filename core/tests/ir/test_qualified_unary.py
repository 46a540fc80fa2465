"""`tensor.unary` names NumPy's functions or, as ``module:attr``, another library's
one-input ufunc (``scipy.special:erf``); anything else is rejected."""

from __future__ import annotations

import pytest

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir import core_registry, parse_ir, verify
from ppy_core.ir.dialects.tensor import is_qualified_ufunc

TEXT = """\
func.func @f(%x: tensor<?xf64>) -> (tensor<?xf64>) {
  %y = tensor.unary %x {op = "OP"} : (tensor<?xf64>) -> tensor<?xf64>
  func.return %y : (tensor<?xf64>) -> ()
}
"""


@pytest.mark.parametrize("op", ["sin", "erf", "scipy.special:erf", "lib:f_2"])
def test_known_and_qualified_names_verify(op: str) -> None:
    verify(parse_ir(TEXT.replace("OP", op), core_registry()))


@pytest.mark.parametrize("op", ["sine", "scipy.special:", ":erf", "scipy..special:erf", "a:b:c"])
def test_other_names_are_rejected(op: str) -> None:
    with pytest.raises(InvalidIRError, match="is not one of"):
        verify(parse_ir(TEXT.replace("OP", op), core_registry()))


def test_is_qualified_ufunc() -> None:
    assert is_qualified_ufunc("scipy.special:gammaln")
    assert not is_qualified_ufunc("gammaln")
    assert not is_qualified_ufunc("scipy.special:gamma ln")
