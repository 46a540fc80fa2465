"""Contract of ppy-numpy: entry points, names, claims, fingerprints, lazy imports.

The checks are ppy_core.testing.ContractSuite's; this file states ppy-numpy's specifics.
"""

from __future__ import annotations

from ppy_core import testing

DIST = testing.Distribution.of(__file__)


class TestContract(testing.ContractSuite):
    dist = DIST
    # (group, entry point name, fingerprint pattern)
    entries = (("plugins", "numpy", r"v2:numpy=\d+\.\d+\.\d+\S*:simd=[\w,]*\+[\w,]*:blas=\S+/\S+"),)
    # importing the package and creating its plugins/backends must import none of these
    libraries = ("numpy",)
    blocked = ("numpy",)
    requires = "numpy"
    runtimes = ("numpy",)
    loaders = ("numpy.loops",)  # typed-loops functions (ppy_numpy._runtime.loops)
