"""Contract of ppy-scipy: entry points, names, claims, fingerprints, lazy imports.

The checks are ppy_core.testing.ContractSuite's; this file states ppy-scipy's specifics.
"""

from __future__ import annotations

from ppy_core import testing

DIST = testing.Distribution.of(__file__)


class TestContract(testing.ContractSuite):
    dist = DIST
    # (group, entry point name, fingerprint pattern)
    entries = (
        ("plugins", "scipy", r"v1:scipy=\d+\.\d+\.\d+\S*:numpy=\S+:blas=\S+/\S+:lapack=\S+/\S+"),
    )
    # importing the package and creating its plugins/backends must import none of these
    libraries = ("scipy", "numpy")
    blocked = ("scipy",)
    requires = "scipy"
