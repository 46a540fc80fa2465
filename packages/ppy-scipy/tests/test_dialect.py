"""SciPy's dialects (special, fft, linalg, sparse) are the scipy plugin's."""

from __future__ import annotations

from ppy_core import testing
from ppy_core.ir.dialects.library import LibraryCall
from ppy_scipy.plugin import ScipyPlugin

TEXT = """\
func.func @f(%x: tensor<?xf64>, %m: tensor<?x?xf64>) -> (tensor<?xc128>, tensor<?xf64>) {
  %f = scipy.fft.rfft %x {target = "scipy.fft.rfft"} : (tensor<?xf64>) -> tensor<?xc128>
  %e = scipy.special.unary %x {target = "scipy.special.erf"} : (tensor<?xf64>) -> tensor<?xf64>
  %s = scipy.sparse.csr %m {target = "csr_array"} : (tensor<?x?xf64>) -> tensor<?x?xf64>
  %v = scipy.sparse.matvec %s, %e {target = "m"} : (tensor<?x?xf64>, tensor<?xf64>) -> tensor<?xf64>
  func.return %f, %v : (tensor<?xc128>, tensor<?xf64>) -> ()
}
"""


def test_the_plugin_registers_its_four_dialects_under_its_name() -> None:
    names = [d.name for d in ScipyPlugin().register_dialects()]
    assert names == ["scipy.special", "scipy.fft", "scipy.linalg", "scipy.sparse"]


def test_scipy_ops_parse_once_the_plugin_dialects_are_registered() -> None:
    op = testing.check_dialects(ScipyPlugin(), TEXT)
    calls = [o for o in op.walk() if o.name.startswith("scipy.")]
    assert len(calls) == 4
    assert all(isinstance(o, LibraryCall) for o in calls)
