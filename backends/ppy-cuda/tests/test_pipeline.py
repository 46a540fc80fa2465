"""Through the real pipeline: a torch module compiled with `backends = ["cuda"]`.
Here (no GPU) the backend is not relevant and the module is plain torch; on a GPU its
site is a PTX kernel that runs on CUDA tensors and equals eager bit for bit."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import ppy  # noqa: E402

SOURCE = """
import torch

def f(a: torch.Tensor, b: torch.Tensor, s: float) -> torch.Tensor:
    return torch.where(a > b, a * b + s, (a - b) / s)
"""


def compile_module(tmp: Path, name: str) -> tuple[types.ModuleType, dict[str, Any]]:
    from ppy_core.compiler.cached import compile_file, load_manifest
    from ppy_core.runtime.module import exec_artifact

    (tmp / "pyproject.toml").write_text(
        '[project]\nname = "cuda-tests"\n\n[tool.ppy]\ncache-dir = ".ppy-cache"\n'
        'backends = ["cuda"]\n'
    )
    path = tmp / f"{name}.py"
    path.write_text(SOURCE, encoding="utf-8")
    compiled = compile_file(path)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec_artifact(compiled.entry.path, module)
    return module, load_manifest(compiled.entry)


def cuda_sites(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in manifest["expr_sites"] if (r.get("unit") or {}).get("backend") == "cuda"]


def test_without_a_gpu_no_site_goes_to_cuda(tmp_path: Path) -> None:
    from ppy_cuda._probe import probe

    if probe().gpus:
        pytest.skip("a GPU is here")
    module, manifest = compile_module(tmp_path, "nogpu")
    assert cuda_sites(manifest) == []
    a, b = torch.randn(16, dtype=torch.float64), torch.randn(16, dtype=torch.float64)
    want = torch.where(a > b, a * b + 0.5, (a - b) / 0.5)
    assert torch.equal(module.f(a, b, 0.5), want)


@pytest.mark.gpu
def test_site_runs_as_a_ptx_kernel_on_cuda(tmp_path: Path) -> None:
    module, manifest = compile_module(tmp_path, "ongpu")
    sites = cuda_sites(manifest)
    assert sites, manifest["expr_sites"]
    a, b = (torch.randn(1 << 20, dtype=torch.float64, device="cuda") for _ in range(2))
    a[:4] = torch.tensor([float("nan"), -0.0, float("inf"), 5e-324])
    got = module.f(a, b, 0.3)
    want = torch.where(a > b, a * b + 0.3, (a - b) / 0.3)
    assert torch.equal(got.view(torch.int64), want.view(torch.int64))
    stats = ppy.stats()
    assert sum(int(stats[f"ongpu:{r['id']}"]["fast"]) for r in sites) >= 1
    cpu = module.f(a.cpu(), b.cpu(), 0.3)  # CPU tensors: torch runs, counted
    assert cpu.device.type == "cpu"
