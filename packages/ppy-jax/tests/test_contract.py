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
    loaders = ("stablehlo",)  # ppy.loaders: binds an exported function at run time
    # importing the package and creating its plugins/backends must import none of these
    libraries = ("jax", "jaxlib", "flax", "optax", "numpy")
    blocked = ("jax",)
    requires = "jax"


def test_stablehlo_lowers_only_exports_and_refuses_unreadable_ones(tmp_path) -> None:
    from ppy_core.diagnostics import BackendError
    from ppy_core.interface.backend import LowerContext
    from ppy_jax.artifact import Artifact
    from ppy_jax.staging import ExportGraph

    backend = DIST.create("backends", "stablehlo")
    assert "only functions exported by the jax plugin" in (backend.can_lower(None) or "")
    ctx = LowerContext(site_id="m:f.1", build_dir=tmp_path)
    with pytest.raises(BackendError) as raised:
        backend.lower(ExportGraph("f", b"not an artifact", False), ctx)
    assert raised.value.code == "E2025"
    data = Artifact("f", "key", b"stablehlo bytes", b"").pack()
    unit = backend.lower(ExportGraph("f", data, True), ctx)
    assert unit.loader == "stablehlo"
    assert (tmp_path / unit.files[0]).read_bytes() == data
    assert unit.data == {"file": unit.files[0], "function": "f", "jit_fallback": True}
