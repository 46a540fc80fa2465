"""Contract of ppy-pandas: entry points, names, claims, fingerprints, lazy imports.

The checks are ppy_core.testing.ContractSuite's; this file states ppy-pandas's specifics.
"""

from __future__ import annotations

from ppy_core import testing

DIST = testing.Distribution.of(__file__)


class TestContract(testing.ContractSuite):
    dist = DIST
    # (group, entry point name, fingerprint pattern)
    entries = (
        (
            "plugins",
            "pandas",
            r"v1:pandas=\d+\.\d+\.\d+\S*:numpy=\S+:pyarrow=\S+:bottleneck=\S+:numexpr=\S+",
        ),
    )
    # importing the package and creating its plugins/backends must import none of these
    libraries = ("pandas", "numpy", "pyarrow")
    blocked = ("pandas",)
    requires = "pandas"
    runtimes = ("pandas",)
