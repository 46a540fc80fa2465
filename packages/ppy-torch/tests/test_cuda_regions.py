"""ATen regions and devices (issue 16, item 4): a region accepts the devices of the
torch it was built against (CPU, plus CUDA only when that torch has CUDA) and its
guard refuses any other, running Python; on a GPU, a region built in a CUDA torch
runs on CUDA tensors and equals eager bit for bit."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import regions
import torch

from ppy_torch import toolchain

# ppy-torch's own pytest settings do not load the workspace conftest that skips `gpu`
on_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU (or a CPU torch)")


def test_cuda_devices_are_allowed_only_in_a_cuda_torch_build() -> None:
    build, tools = toolchain.torch_build(), toolchain.toolchain()
    cpu_only = dataclasses.replace(build, cuda=None)
    with_cuda = dataclasses.replace(build, cuda="13.0")
    assert "-DPPY_WITH_CUDA" not in toolchain.compile_flags(cpu_only, tools)
    assert "-DPPY_WITH_CUDA" in toolchain.compile_flags(with_cuda, tools)
    assert "-lc10_cuda" in toolchain.link_flags(with_cuda)
    assert ("-DPPY_WITH_CUDA" in toolchain.compile_flags(build, tools)) == bool(torch.version.cuda)


@pytest.mark.needs_cc
def test_a_device_the_region_was_not_built_for_runs_python(compiled: dict[str, Any]) -> None:
    layer = compiled["layer"]
    # meta: no torch build has it among a region's devices (a CPU-only torch cannot
    # make a CUDA tensor; on a GPU, the CUDA case is the test below)
    x, w, b = (t.to("meta") for t in (torch.randn(4, 8), torch.randn(8, 8), torch.randn(8)))
    before = layer.__ppy_stats__()["device"]
    assert layer(x, w, b).device.type == "meta"
    assert layer.__ppy_stats__()["device"] == before + 1


@pytest.mark.gpu
@on_gpu
@pytest.mark.needs_cc
def test_region_runs_on_cuda_tensors_bit_for_bit(compiled: dict[str, Any]) -> None:
    layer, residual = compiled["layer"], compiled["residual"]
    x, w, b = (t.cuda() for t in (torch.randn(64, 128), torch.randn(128, 128), torch.randn(128)))
    before = layer.__ppy_stats__()["fast"]
    got, want = layer(x, w, b), regions.layer(x, w, b)
    assert got.is_cuda
    assert torch.equal(got.view(torch.int32), want.view(torch.int32))
    assert layer.__ppy_stats__()["fast"] == before + 1
    y = torch.randn(64, 128, device="cuda", dtype=torch.float64)
    y[0, :4] = torch.tensor([float("nan"), -0.0, float("inf"), 1e-310])
    r, e = residual(y, y), regions.residual(y, y)
    assert torch.equal(r.view(torch.int64), e.view(torch.int64))


@pytest.mark.gpu
@on_gpu
@pytest.mark.needs_cc
def test_mixed_devices_raise_what_eager_raises(compiled: dict[str, Any]) -> None:
    layer = compiled["layer"]
    x, w, b = torch.randn(4, 8).cuda(), torch.randn(8, 8), torch.randn(8)
    with pytest.raises(RuntimeError):
        regions.layer(x, w, b)
    with pytest.raises(RuntimeError):
        layer(x, w, b)
