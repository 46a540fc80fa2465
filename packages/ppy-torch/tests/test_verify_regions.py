"""PPY_VERIFY=1 covers ATen regions: every fast call of a region also runs the
function's Python body and compares values (bits), dtype, device, shape and
`requires_grad`; a region answering wrong raises `ppy.VerifyError`.

Everything goes through the real path a program takes: `ppy.load` compiles the
module (one cached C++ build), the runtime binds the function site through the
registered `aten` loader, and the core's dispatcher wraps it. The wrong regions are
made wrong on purpose by replacing what the loader hands back with a region whose
answer is altered after the real region ran (its fast-path counter still moves).
"""

from __future__ import annotations

from collections.abc import Callable
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
def layer(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.add(torch.matmul(x, w), b))
"""

SPECIALS = [float("nan"), float("inf"), float("-inf"), -0.0, 5e-324, 1e308, 0.0]


@pytest.fixture
def module_path(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.ppy]\nbackends = ["aten"]\n')
    path = tmp_path / "verified_layer.py"
    path.write_text(SOURCE, encoding="utf-8")
    return path


def _site(name: str) -> str:
    sites = [s for s in ppy.stats() if s.startswith(f"{name}:")]
    assert len(sites) == 1, ppy.stats()
    return sites[0]


def _inputs(dtype: torch.dtype, grad: bool) -> list[tuple[torch.Tensor, ...]]:
    gen = torch.Generator().manual_seed(0)
    out = []
    for m in (8, 1, 0):  # ordinary, one row, empty
        x = torch.randn(m, 32, generator=gen, dtype=dtype)
        w = torch.randn(32, 32, generator=gen, dtype=dtype)
        b = torch.randn(32, generator=gen, dtype=dtype)
        if m:
            x[0, : len(SPECIALS)] = torch.tensor(SPECIALS, dtype=dtype)
        if grad:
            w.requires_grad_(True)
        out.append((x, w, b))
    return out


def test_every_region_call_is_verified_and_counted(
    module_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PPY_VERIFY", "1")
    fast = ppy.load(module_path, "verified_layer")
    ppy.reset_stats()
    calls = 0
    for dtype in (torch.float32, torch.float64):
        for grad in (False, True):
            for args in _inputs(dtype, grad):
                got = fast.layer(*args)
                calls += 1
                assert got.requires_grad == grad
    fast.layer(x=args[0], w=args[1], b=args[2])  # keywords: bound by the region, verified
    calls += 1
    data = ppy.stats()[_site("verified_layer")]
    assert data["fast"] == calls, data
    assert data["verified"] == calls, data


def _wrong_loader(
    monkeypatch: pytest.MonkeyPatch, alter: Callable[[torch.Tensor], torch.Tensor]
) -> None:
    """The `aten` loader hands back the real region, its answer passed through `alter`."""
    import ppy_torch.runtime

    real = ppy_torch.runtime.load_region

    class Wrong:
        def __init__(self, region: Any) -> None:
            self.region = region
            self.ppy_stats = region.ppy_stats  # the real counters: these are fast calls

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return alter(self.region(*args, **kwargs))

    def load_wrong(*args: Any, **kwargs: Any) -> Any:
        region = real(*args, **kwargs)
        assert getattr(region, "__ppy_region__", False), "the region did not load"
        return Wrong(region)

    monkeypatch.setattr(ppy_torch.runtime, "load_region", load_wrong)


@pytest.mark.parametrize(
    ("alter", "named"),
    [
        (lambda t: t + 1.0, "first difference"),
        (lambda t: torch.where(t == 0, -0.0, t), "first difference"),  # relu's +0.0 -> -0.0
        (lambda t: t.to(torch.float32), "dtype"),
        (lambda t: t.reshape(-1), "shape"),
        (lambda t: t.detach(), "requires_grad"),
        (lambda t: t.tolist(), "type"),
    ],
    ids=["values", "signed-zero", "dtype", "shape", "requires_grad", "type"],
)
def test_a_wrong_region_raises_verify_error(
    module_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    alter: Callable[[torch.Tensor], Any],
    named: str,
) -> None:
    _wrong_loader(monkeypatch, alter)
    monkeypatch.setenv("PPY_VERIFY", "1")
    fast = ppy.load(module_path, "wrong_layer")
    x, w, b = _inputs(torch.float64, grad=True)[0]
    with pytest.raises(ppy.VerifyError, match=named) as info:
        fast.layer(x, w, b)
    assert "verified_layer:layer" in str(info.value)  # the site, by module and function


def test_without_verify_the_region_is_called_directly(module_path: Path) -> None:
    """PPY_VERIFY unset: the program holds the region itself, no wrapper in the way."""
    fast = ppy.load(module_path, "direct_layer")
    assert type(fast.layer).__name__ == "AtenRegion"


def layer(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.add(torch.matmul(x, w), b))


def test_direct_regions_are_verified_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ppy_torch.compile_function` binds its region as the core's binder does."""
    import ppy_torch.direct
    from ppy_torch import compile_function

    monkeypatch.setenv("PPY_VERIFY", "1")
    region = compile_function(layer)
    ppy.reset_stats()
    for args in _inputs(torch.float64, grad=False):
        region(*args)
    data = ppy.stats()[f"{__name__}:layer"]
    assert data["fast"] == data["verified"] == 3, data

    real = ppy_torch.direct.load_region
    monkeypatch.setattr(
        ppy_torch.direct,
        "load_region",
        lambda *a, **k: _Negated(real(*a, **k)),
    )
    wrong = compile_function(layer)
    with pytest.raises(ppy.VerifyError, match="first difference"):
        wrong(*_inputs(torch.float64, grad=False)[0])


class _Negated:
    """A region whose answer is negated after it ran (its counters still move)."""

    def __init__(self, region: Any) -> None:
        self.region, self.ppy_stats = region, region.ppy_stats

    def __call__(self, *args: Any) -> Any:
        return -self.region(*args)
