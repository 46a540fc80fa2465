"""The backend on real IR: a fused `tensor.kernel` (as the core's fusion pass makes it)
becomes a `CudaKernel`, then PTX and a unit for the `cuda` loader; what it cannot take
it refuses with a coded reason."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from ppy_core.compiler.passes import FuseElementwise
from ppy_core.diagnostics import BackendError
from ppy_core.ir import PassManager, parse_ir
from ppy_core.ir.dialects import core_registry
from ppy_cuda.backend import CudaBackend, lower_kernel
from ppy_cuda.kernel import kernel_from_func

SITE = """\
func.func @site_0(%a: tensor<?xT>, %b: tensor<?xT>, %x: f64) -> (tensor<?xT>) {
  %two = builtin.constant {value = 2.0} : () -> f64
  %0 = tensor.mul %a, %two : (tensor<?xT>, f64) -> tensor<?xT>
  %1 = tensor.div %b, %x : (tensor<?xT>, f64) -> tensor<?xT>
  %2 = tensor.add %0, %1 : (tensor<?xT>, tensor<?xT>) -> tensor<?xT>
  %m = tensor.compare %2, %x {pred = "gt"} : (tensor<?xT>, f64) -> tensor<?xi1>
  %r = tensor.select %m, %2, %a : (tensor<?xi1>, tensor<?xT>, tensor<?xT>) -> tensor<?xT>
  func.return %r : (tensor<?xT>) -> ()
}
"""


def fused(text: str):
    op = parse_ir(dedent(text), core_registry())
    PassManager([FuseElementwise()]).run(op)
    func = next(o for o in op.walk() if o.name == "func.func")
    assert any(o.name == "tensor.kernel" for o in func.walk())
    return func


@pytest.mark.parametrize(("elem", "dtype"), [("f32", "f32"), ("f64", "f64")])
def test_fused_site_becomes_a_kernel_of_its_dtype(elem: str, dtype: str) -> None:
    kernel = kernel_from_func(fused(SITE.replace("T", elem)))
    assert kernel.dtype == dtype
    assert kernel.leaves == ("a", "a", "s")
    assert [n.op for n in kernel.nodes] == ["const", "mul", "div", "add", "compare", "select"]
    assert CudaBackend().can_lower(fused(SITE.replace("T", elem))) is None


def test_lower_writes_ptx_and_a_loader_unit(tmp_path: Path) -> None:
    unit = lower_kernel(fused(SITE.replace("T", "f32")), "m:f.1", tmp_path, {"arch": "sm_80"})
    assert unit.loader == "ppy_cuda.runtime:load_site"
    assert not unit.runtime
    ptx = (tmp_path / unit.files[0]).read_text()
    assert f".entry {unit.data['entry']}(" in ptx
    assert ".target sm_80" in ptx
    assert unit.data["leaves"] == "aas"
    assert unit.data["dtype"] == "f32"
    assert "rcp.rn.f32" in ptx  # b / x is b * (1/x), as torch computes it


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (SITE.replace("T", "i64"), "E2030"),  # integer tensors stay torch
        (SITE, None),
        (
            SITE.replace("tensor.div %b, %x", "tensor.pow %b, %x"),
            "E2030",
        ),
        (
            SITE.replace(
                "%1 = tensor.div %b, %x : (tensor<?xT>, f64)",
                '%1 = tensor.unary %b {op = "sin"} : (tensor<?xT>)',
            ),
            "E2033",  # not proven on a GPU yet
        ),
    ],
)
def test_refusals_carry_a_code(text: str, why: str | None) -> None:
    func = fused(text.replace("T", "f32"))
    reason = CudaBackend().can_lower(func)
    if why is None:
        assert reason is None
        return
    assert reason is not None
    assert f"[{why}]" in reason
    with pytest.raises(BackendError):
        kernel_from_func(func)


def test_backend_serves_torch_modules_only_where_a_gpu_is() -> None:
    from ppy_cuda._probe import probe

    backend = CudaBackend()
    assert not backend.relevant(frozenset({"numpy"}))
    assert backend.relevant(frozenset({"torch"})) == bool(probe().gpus)


TORCH_SITE = """\
func.func @"f.2"(%a: TT, %b: TT, %s: f64) -> (TT) {
  %0 = tensor.kernel %a, %b, %s (
    {
    ^bb0(%1: TT, %2: TT, %3: f64):
      %4 = tensor.sub %1, %2 : (TT, TT) -> TT
      %5 = tensor.div %4, %3 : (TT, f64) -> TT
      tensor.yield %5 : (TT) -> ()
    }
  ) : (TT, TT, f64) -> TT
  func.return %0 : (TT) -> ()
}
""".replace("TT", 'tensor<*xf64, "torch">')


def test_a_site_as_the_torch_plugin_types_it(tmp_path: Path) -> None:
    # `(a - b) / s` as `ppy explain` shows it: unranked tensors tagged "torch"
    func = parse_ir(TORCH_SITE, core_registry())
    kernel = kernel_from_func(func)
    assert (kernel.dtype, kernel.leaves) == ("f64", ("a", "a", "s"))
    unit = lower_kernel(func, "m:f.2", tmp_path, {"arch": "sm_90"})
    ptx = (tmp_path / unit.files[0]).read_text()
    assert "sub.rn.f64" in ptx
    assert "rcp.rn.f64" in ptx


@pytest.mark.parametrize(
    ("gpus", "arch"),
    [((), "sm_75"), (("sm_90",), "sm_90"), (("sm_120", "sm_86"), "sm_86"), (("sm_100",), "sm_90")],
)
def test_target_arch_is_the_oldest_gpu_capped_at_what_llvm_is_checked_for(
    monkeypatch: pytest.MonkeyPatch, gpus: tuple[str, ...], arch: str
) -> None:
    from ppy_cuda import backend
    from ppy_cuda._probe import CudaToolchain

    found = CudaToolchain(
        None, None, None, "1.0" if gpus else None, tuple(("GPU", g) for g in gpus)
    )
    monkeypatch.setattr(backend, "probe", lambda: found)
    assert backend.target_arch({}) == arch
    assert backend.target_arch({"arch": "sm_80"}) == "sm_80"
