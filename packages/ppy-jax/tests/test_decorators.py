"""`@jax.jit` changes how a function is called: the core leaves its body as written
(no expression sites; a dispatcher inside would see tracers) and says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppy_core.compiler.cached import compile_file, load_manifest

SOURCE = """\
import jax
import numpy as np
from numpy.typing import NDArray


@jax.jit
def jitted(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    return x * 2.0 + y


def plain(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    return x * 2.0 + y
"""


def test_jit_keeps_the_body_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ppy_numpy")  # `plain` is a site only where NumPy's plugin is installed
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "pyproject.toml").write_text("[tool.ppy]\nbackends = []\n")
    path = tmp_path / "jitmod.py"
    path.write_text(SOURCE, encoding="utf-8")
    manifest = load_manifest(compile_file(path).entry)
    assert [s["function"] for s in manifest["expr_sites"]] == ["plain"]
    remarks = [r["message"] for r in manifest["remarks"] if r["function"] == "jitted"]
    assert remarks[0].startswith("decorator 'jax.jit' changes how 'jitted' is called")
    # offered whole to the jax plugin, which exports only what ppy.Shape/DType describe
    assert remarks[1].startswith("no region: not exported to StableHLO: parameter 'x'")


def test_only_jit_is_claimed() -> None:
    from ppy_core.interface.plugin import CALLS, DecoratorContext
    from ppy_jax.plugin import JaxPlugin

    plugin = JaxPlugin()
    answer = plugin.decorator_semantics(DecoratorContext("jax.jit", "f"))
    assert answer is not None
    assert answer.kind == CALLS
    assert plugin.decorator_semantics(DecoratorContext("jax.grad", "f")) is None
