"""Contract of ppy-jax: entry points, names, claims, fingerprints, lazy imports.

The checks are ppy_core.testing.ContractSuite's; this file states ppy-jax's specifics.
"""

from __future__ import annotations

import pytest

from ppy_core import testing

DIST = testing.Distribution.of(__file__)


class TestContract(testing.ContractSuite):
    dist = DIST
    # (group, entry point name, fingerprint pattern)
    entries = (
        ("plugins", "jax", r"v1:jax=\d+\.\d+\.\d+\S*:jaxlib=\S+:platform=\w+:flax=\S+:optax=\S+"),
        (
            "backends",
            "stablehlo",
            r"v1:jax=\d+\.\d+\.\d+\S*:jaxlib=\S+:cc=(\d+-\d+|none):platform=\w+",
        ),
    )
    # importing the package and creating its plugins/backends must import none of these
    libraries = ("jax", "jaxlib", "flax", "optax", "numpy")
    blocked = ("jax",)
    requires = "jax"


def test_stablehlo_lowers_nothing_yet_and_says_so() -> None:
    from ppy_core.diagnostics import BackendError

    backend = DIST.create("backends", "stablehlo")
    assert "does not lower yet" in (backend.can_lower(None) or "")
    with pytest.raises(BackendError) as raised:
        backend.lower(None, None)
    assert raised.value.code == "E2001"
