"""Contract of ppy-arrow: entry points, names, claims, fingerprints, lazy imports.

The checks are ppy_core.testing.ContractSuite's; this file states ppy-arrow's specifics.
"""

from __future__ import annotations

from ppy_core import testing

DIST = testing.Distribution.of(__file__)


class TestContract(testing.ContractSuite):
    dist = DIST
    # (group, entry point name, fingerprint pattern)
    entries = (("plugins", "pyarrow", r"v1:pyarrow=\d+\.\d+\.\d+\S*:libarrow=\S+/\w+:simd=\w+"),)
    # importing the package and creating its plugins/backends must import none of these
    libraries = ("pyarrow", "numpy")
    blocked = ("pyarrow",)
    requires = "pyarrow"
    runtimes = ("pyarrow",)
