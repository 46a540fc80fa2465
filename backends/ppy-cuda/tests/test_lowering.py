"""Lowering to PTX: the (arch, ISA) check, `.rn` everywhere torch has no FMA, `llvm.fma`
where torch fuses (`add(alpha=s)`), `t / s` as `t * (1/s)`, libdevice linked
without flush-to-zero, and every PTX assembled by ptxas for sm_90, sm_80, sm_75."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ppy_core.diagnostics import BackendError
from ppy_cuda._probe import find_ptxas
from ppy_cuda.codegen import kernel_ir, literal
from ppy_cuda.kernel import KernelBuilder, check
from ppy_cuda.target import check_target, compile_ptx, find_libdevice, verify_ptx

ARCHS = ("sm_90", "sm_80", "sm_75")
needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="no ptxas (CUDA toolkit)")
DTYPES = ("f32", "f64")


def fma_abc(dtype: str):
    b = KernelBuilder(dtype)
    x, y, z = b.leaf(), b.leaf(), b.leaf()
    return b.build(b.op("add", b.op("mul", x, y), z))


def where_tree(dtype: str):
    b = KernelBuilder(dtype)
    x, y = b.leaf(), b.leaf()
    cond = b.op("compare", x, y, pred="gt")
    return b.build(b.op("select", cond, b.op("sub", x, y), b.op("unary", y, fn="sqrt")))


def instructions(ptx: str) -> list[str]:
    return [
        line.split()[0]
        for line in ptx.splitlines()
        if line.strip() and line.startswith("\t") and not line.strip().startswith("//")
    ]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("arch", ARCHS)
@needs_ptxas
def test_mul_add_stays_two_rounded_ops_and_ptxas_accepts(dtype: str, arch: str) -> None:
    ptx = compile_ptx(kernel_ir(fma_abc(dtype)), arch)
    ops = instructions(ptx)
    assert f"mul.rn.{dtype}" in ops
    assert f"add.rn.{dtype}" in ops
    assert not any(op.startswith("fma") for op in ops), ops
    assert f".target {arch}" in ptx
    verify_ptx(ptx, arch)


@pytest.mark.parametrize("dtype", DTYPES)
@needs_ptxas
def test_add_with_alpha_is_one_fma_like_torch(dtype: str) -> None:
    b = KernelBuilder(dtype)
    x, y = b.leaf(), b.leaf()
    kernel = b.build(b.op("add", x, y, alpha=2.5))
    ir = kernel_ir(kernel)
    assert f"@llvm.fma.{dtype}" in ir
    ptx = compile_ptx(ir, "sm_90")
    assert f"fma.rn.{dtype}" in instructions(ptx)
    assert (", 0f40200000," if dtype == "f32" else ", 0d4004000000000000,") in ptx  # alpha
    verify_ptx(ptx, "sm_90")


@pytest.mark.parametrize("alpha", [1.0, -1.0])
def test_alpha_of_one_is_a_plain_add_or_sub(alpha: float) -> None:
    b = KernelBuilder("f32")
    x, y = b.leaf(), b.leaf()
    ir = kernel_ir(b.build(b.op("add", x, y, alpha=alpha)))
    assert "fma" not in ir
    assert ("fsub float" in ir) == (alpha == -1.0)


@pytest.mark.parametrize("dtype", DTYPES)
@needs_ptxas
def test_division_by_a_python_scalar_is_a_reciprocal_product(dtype: str) -> None:
    b = KernelBuilder(dtype)
    x, s = b.leaf(), b.leaf("s")
    ptx = compile_ptx(kernel_ir(b.build(b.op("div", x, s))), "sm_80")
    ops = instructions(ptx)
    assert f"rcp.rn.{dtype}" in ops or f"div.rn.{dtype}" in ops
    assert f"mul.rn.{dtype}" in ops  # x * (1/s), not x / s
    verify_ptx(ptx, "sm_80")
    b2 = KernelBuilder(dtype)
    x, y = b2.leaf(), b2.leaf()
    tensor_div = instructions(compile_ptx(kernel_ir(b2.build(b2.op("div", x, y))), "sm_80"))
    assert f"div.rn.{dtype}" in tensor_div
    assert f"mul.rn.{dtype}" not in tensor_div


def test_float32_kernels_round_python_scalars_to_float32() -> None:
    b = KernelBuilder("f32")
    x, s = b.leaf(), b.leaf("s")
    ir = kernel_ir(b.build(b.op("mul", b.op("mul", x, s), b.op("const", value=0.1))))
    assert "fptrunc double %s1 to float" in ir
    assert literal(0.1, "f32") == "0x3FB99999A0000000"  # float32(0.1), exactly
    assert literal(0.1, "f64") == "0x3FB999999999999A"


@pytest.mark.parametrize("dtype", DTYPES)
@needs_ptxas
def test_where_sqrt_compare_lower_ieee_and_assemble(dtype: str) -> None:
    ptx = compile_ptx(kernel_ir(where_tree(dtype)), "sm_75")
    assert f"sqrt.rn.{dtype}" in instructions(ptx)
    assert ".ftz" not in ptx
    assert ".approx" not in ptx
    assert "selp" in ptx
    assert "st.global.b" in ptx
    verify_ptx(ptx, "sm_75")


@needs_ptxas
def test_comparison_result_is_one_byte_bool() -> None:
    b = KernelBuilder("f64")
    x, y = b.leaf(), b.leaf()
    kernel = b.build(b.op("compare", x, y, pred="ne"))
    ir = kernel_ir(kernel)
    assert "fcmp une double" in ir
    assert "store i8" in ir
    verify_ptx(compile_ptx(ir, "sm_90"), "sm_90")


@needs_ptxas
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_propagate_nan_like_torch(op: str) -> None:
    b = KernelBuilder("f32")
    x, y = b.leaf(), b.leaf()
    ir = kernel_ir(b.build(b.op(op, x, y)))
    assert ir.count("fcmp uno") == 2
    ptx = compile_ptx(ir, "sm_80")
    assert ("max.f32" if op == "maximum" else "min.f32") in ptx
    verify_ptx(ptx, "sm_80")


@pytest.mark.parametrize("dtype", DTYPES)
@needs_ptxas
def test_transcendental_links_libdevice_without_ftz(dtype: str) -> None:
    libdevice = find_libdevice()
    if libdevice is None:
        pytest.skip("no libdevice (CUDA toolkit)")
    b = KernelBuilder(dtype)
    x = b.leaf()
    kernel = b.build(b.op("add", b.op("unary", x, fn="sin"), b.op("unary", x, fn="exp")))
    ir = kernel_ir(kernel, proven_only=False)
    suffix = "f" if dtype == "f32" else ""
    assert f"@__nv_sin{suffix}(" in ir
    assert '"nvvm-reflect-ftz", i32 0' in ir
    for arch in ARCHS:
        ptx = compile_ptx(ir, arch, libdevice=libdevice)
        assert "__nv_" not in ptx
        assert "__nvvm_reflect" not in ptx
        # libdevice's expf itself uses ex2.approx.ftz (so does nvcc's); no IEEE op flushes
        ieee = [
            op
            for op in instructions(ptx)
            if op.split(".")[0] in ("add", "sub", "mul", "div", "sqrt", "fma")
        ]
        assert ieee
        assert not [op for op in ieee if ".ftz" in op], ieee
        verify_ptx(ptx, arch)


def test_unproven_transcendentals_stay_torch() -> None:
    b = KernelBuilder("f32")
    x = b.leaf()
    kernel = b.build(b.op("unary", x, fn="tanh"))
    with pytest.raises(BackendError) as raised:
        check(kernel)
    assert raised.value.code == "E2033"
    with pytest.raises(BackendError):
        compile_ptx(kernel_ir(kernel, proven_only=False), "sm_80")  # no libdevice given: E2034


@pytest.mark.parametrize(
    ("arch", "isa"),
    [
        ("sm_90a", None),
        ("sm_90", (7, 0)),
        ("sm_75", (6, 0)),
        ("sm_80", (9, 9)),
        ("compute_80", None),
    ],
)
def test_bad_arch_isa_pairs_are_refused_before_llvm(arch: str, isa: tuple[int, int] | None) -> None:
    with pytest.raises(BackendError) as raised:
        check_target(arch, isa)
    assert raised.value.code == "E2031"
    with pytest.raises(BackendError):  # and compile_ptx never reaches LLVM with them
        compile_ptx(kernel_ir(fma_abc("f32")), arch, isa=isa)


def test_lowest_isa_per_arch() -> None:
    assert check_target("sm_75") == ("sm_75", (6, 3))
    assert check_target("sm_80") == ("sm_80", (7, 0))
    assert check_target("sm_90") == ("sm_90", (7, 8))
    ptx = compile_ptx(kernel_ir(fma_abc("f64")), "sm_90")
    assert re.search(r"^\.version 7\.8$", ptx, re.M)


@needs_ptxas
def test_ptxas_refuses_broken_ptx_with_a_code() -> None:
    ptx = compile_ptx(kernel_ir(fma_abc("f32")), "sm_80").replace("ret;", "ret_bogus;")
    with pytest.raises(BackendError) as raised:
        verify_ptx(ptx, "sm_80")
    assert raised.value.code == "E2032"


@pytest.mark.parametrize(
    "build",
    [
        lambda b, x: b.op("pow", x, x),  # not lowered
        lambda b, x: b.op("add", b.op("compare", x, x, pred="lt"), x),  # bool as a number
        lambda b, x: b.op("unary", x, fn="gamma"),
    ],
)
def test_what_cannot_lower_is_E2030(build) -> None:
    b = KernelBuilder("f64")
    x = b.leaf()
    with pytest.raises(BackendError) as raised:
        kernel_ir(_unchecked(b, build(b, x)), proven_only=False)
    assert raised.value.code == "E2030"


def _unchecked(b: KernelBuilder, result: int):
    from ppy_cuda.kernel import CudaKernel

    return CudaKernel(b.dtype, tuple(b.leaves), tuple(b.nodes), result)


def test_scalar_only_arithmetic_is_left_to_python() -> None:
    b = KernelBuilder("f32")
    x, s = b.leaf(), b.leaf("s")
    with pytest.raises(BackendError) as raised:
        kernel_ir(b.build(b.op("mul", x, b.op("mul", s, s))))
    assert raised.value.code == "E2030"


def test_libdevice_must_match_torchs_cuda(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PPY_CUDA_LIBDEVICE", raising=False)
    assert find_libdevice("1.0") is None  # no toolkit or wheel of that version anywhere
    here = find_libdevice("13.0")
    assert here is None or here.name == "libdevice.10.bc"
    fake = tmp_path / "libdevice.bc"
    fake.write_bytes(b"BC")
    monkeypatch.setenv("PPY_CUDA_LIBDEVICE", str(fake))
    assert find_libdevice("1.0") == fake  # the override wins
    monkeypatch.setenv("PPY_CUDA_LIBDEVICE", str(tmp_path / "gone.bc"))
    assert find_libdevice() is None


@pytest.mark.parametrize("dtype", DTYPES)
@needs_ptxas
def test_addcmul_and_lerp_fuse_as_torchs_nvcc_does(dtype: str) -> None:
    b = KernelBuilder(dtype)
    x, y, z = b.leaf(), b.leaf(), b.leaf()
    addcmul = b.build(b.op("addcmul", x, y, z, value=0.5))
    ops = instructions(compile_ptx(kernel_ir(addcmul, proven_only=False), "sm_80"))
    assert ops.count(f"fma.rn.{dtype}") == 1  # a + value*(b*c): b*c rounded, then one FMA
    assert ops.count(f"mul.rn.{dtype}") == 1
    b = KernelBuilder(dtype)
    s, e, w = b.leaf(), b.leaf(), b.leaf("s")
    lerp = b.build(b.op("lerp", s, e, w))
    ptx = compile_ptx(kernel_ir(lerp, proven_only=False), "sm_75")
    assert instructions(ptx).count(f"fma.rn.{dtype}") == 2
    verify_ptx(ptx, "sm_75")
    for kernel in (addcmul, lerp):  # read from torch's source, not yet run on a GPU
        with pytest.raises(BackendError) as raised:
            check(kernel)
        assert raised.value.code == "E2033"
