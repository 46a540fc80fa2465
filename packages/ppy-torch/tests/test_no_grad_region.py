"""`@torch.no_grad()` and `@torch.inference_mode()` are transparent: each function
becomes an ATen region under `ppy` (at `@ppy.opt(3)`), and the decorator still wraps
it at run time, so the region runs in the grad mode Python's does. One cold build
(both regions are one extension)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import torch

import ppy

pytestmark = pytest.mark.needs_cc

SOURCE = """\
import ppy
import torch


@ppy.opt(3)
@torch.no_grad()
def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = torch.matmul(x, w)
    return torch.tanh(h) * 2.0 + x


@ppy.opt(3)
@torch.inference_mode()
def infer(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.matmul(x, w)) - x
"""


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


def test_no_grad_function_is_a_region_with_grad_off(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.ppy]\nbackends = ["aten"]\n')
    path = tmp_path / "nograd_region.py"
    path.write_text(SOURCE, encoding="utf-8")
    from ppy_core.compiler.cached import compile_file, load_manifest

    manifest = load_manifest(compile_file(path).entry)
    record, infer_record = manifest["function_sites"]
    assert record["unit"] is not None, record["reasons"]
    assert infer_record["unit"] is not None, infer_record["reasons"]
    remarks = [r["message"] for r in manifest["remarks"]]
    assert any("'torch.no_grad' is transparent" in m for m in remarks)
    assert any("'torch.inference_mode' is transparent" in m for m in remarks)
    fast = ppy.load(path, "nograd_region")
    spec = importlib.util.spec_from_file_location("nograd_region_plain", path)
    assert spec is not None
    assert spec.loader is not None
    plain: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)

    x = torch.randn(16, 8, dtype=torch.float64)
    x[0, :4] = torch.tensor([float("nan"), float("inf"), -0.0, 5e-324])  # special values
    x.requires_grad_(True)
    w = torch.randn(8, 8, dtype=torch.float64, requires_grad=True)
    ppy.reset_stats()
    got, want = fast.step(x, w), plain.step(x, w)
    assert ppy.stats()[f"nograd_region:{record['id']}"]["fast"] == 1
    assert torch.equal(_bits(got), _bits(want))
    assert (got.requires_grad, got.grad_fn) == (want.requires_grad, want.grad_fn) == (False, None)
    assert torch.is_grad_enabled()  # the decorator restored grad mode, as in Python
    # the function the program holds is torch's wrapper; it says the region is in use
    assert fast.step.__ppy_region__ is True
    assert fast.step.__wrapped__.__ppy_region__ is True
    assert fast.step.__ppy_stats__()["fast"] == 1
    assert plain.step.__ppy_region__ is False  # ppy.opt marks the uncompiled function

    got, want = fast.infer(x, w), plain.infer(x, w)
    assert ppy.stats()[f"nograd_region:{infer_record['id']}"]["fast"] == 1
    assert torch.equal(_bits(got), _bits(want))
    assert got.is_inference()
    assert want.is_inference()
    assert not torch.is_inference_mode_enabled()
