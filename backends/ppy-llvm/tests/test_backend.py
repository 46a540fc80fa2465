"""Backend contract: entry point, lazy import, fingerprint, proof, CPU check."""

from __future__ import annotations

import ctypes
import subprocess
import warnings

import pytest

from ppy_core import testing

DIST = testing.Distribution.of(__file__)


def test_import_is_lazy() -> None:
    testing.check_lazy_imports(DIST, ("llvmlite", "numpy"))


def test_entry_point_name() -> None:
    testing.check_entry_points(DIST, [("backends", "llvm")])
    testing.check_entry_point(DIST, "backends", "llvm", factory="ppy_llvm:create_backend")
    testing.check_first_party(DIST, "backends", "llvm")
    testing.check_discovered(DIST, "backends", "llvm")


@pytest.mark.needs_llvm
def test_fingerprint_format_and_stability() -> None:
    pattern = r"v\d+:llvmlite=\d+\.\d+\.\d+:cpu=[0-9a-f]{12}:features=[0-9a-f]{16}:llc=\d+:abi=1"
    testing.check_fingerprint(DIST, "backends", "llvm", pattern)


def test_fingerprint_imports_no_llvmlite() -> None:
    """The fingerprint enters every NumPy module's cache key: a cached run (and
    `ppy run`) must not import llvmlite to compute it."""
    testing.check_lazy_imports(DIST, ("llvmlite",), fingerprint=True)


@pytest.mark.needs_llvm
@pytest.mark.needs_cc
def test_proof_verdicts_gate_fusion() -> None:
    from conftest import spec_of
    from ppy_llvm import LlvmBackend
    from ppy_llvm._proof import CANDIDATES, proven

    verdict = proven("numpy")
    assert set(verdict) == set(CANDIDATES)
    backend = LlvmBackend()
    for name, why in verdict.items():
        spec = spec_of("power(a,b)" if name == "power" else name)
        refusal = backend.can_lower_spec(spec, "numpy")
        assert (refusal is None) == (why == "ok"), (name, why, refusal)
    assert backend.can_lower_spec(spec_of("a*b+c"), "numpy") is None


@pytest.mark.needs_llvm
def test_loops_of_a_library_without_adapter_are_refused() -> None:
    """The proof runs through the library's registered runtime adapter; with none, a
    kernel calling library loops is refused with a code (nothing is guessed)."""
    from conftest import spec_of
    from ppy_llvm import LlvmBackend

    refusal = LlvmBackend().can_lower_spec(spec_of("sin"), "no-such-library")
    assert refusal is not None
    assert "[E2104]" in refusal
    assert "no runtime adapter 'no-such-library'" in refusal


@pytest.mark.needs_cc
def test_library_for_other_cpu_is_refused(tmp_path) -> None:
    from ppy_core.runtime import abi

    src = tmp_path / "k.c"
    src.write_text(f"int {abi.CPU_CHECK_SYMBOL}(void) {{ return 0; }}\nvoid k(void) {{}}\n")
    so = tmp_path / "k.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    with pytest.warns(abi.KernelWarning, match="E2004"):
        assert abi.load_library(so) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert abi.load_library(so) is None  # one warning only
    assert isinstance(ctypes.CDLL(str(so)), ctypes.CDLL)


@pytest.mark.needs_llvm
@pytest.mark.needs_cc
def test_kernels_carry_the_abi_cpu_check() -> None:
    """Every library the backend links exports the ABI's CPU-check symbol."""
    from conftest import spec_of
    from ppy_core.runtime import abi
    from ppy_llvm import compile_specs

    kernel = compile_specs([spec_of("a*b+c")], "abi_check")[0]
    assert getattr(ctypes.CDLL(kernel.path), abi.CPU_CHECK_SYMBOL)() == 1
    assert abi.kernel_address(kernel) is not None


def test_unknown_op_is_refused_with_code() -> None:
    from types import SimpleNamespace as NS

    from ppy_llvm import LlvmBackend

    class TensorType:
        element = "f64"

    x = NS(type=TensorType())
    y = NS(type=TensorType())
    op = NS(name="tensor.einsum", operands=[x], results=[y], attributes={}, regions=[])
    ret = NS(name="func.return", operands=[y], results=[], attributes={}, regions=[])
    func = NS(body=NS(blocks=[NS(args=[x], ops=[op, ret])]), attributes={})
    why = LlvmBackend().can_lower(func)
    assert why is not None
    assert "[E2103]" in why


def _func_over(*libraries: str) -> object:
    """A stand-in func.func whose ops carry tensors of `libraries`."""
    from types import SimpleNamespace as NS

    values = [NS(type=NS(element="f64", library=lib)) for lib in libraries]
    op = NS(name="tensor.add", operands=values, results=values[:1])
    return NS(walk=lambda: [op])


def test_the_runtime_is_the_library_of_the_ir_with_a_registered_adapter() -> None:
    """The backend names no library: a site goes to the adapter registered under its
    tensors' library; none, two, or an unregistered one are refused (E2108)."""
    pytest.importorskip("ppy_torch")  # torch's adapter is one of the two registered here
    from ppy_llvm._backend import _runtime_of

    assert _runtime_of(_func_over("numpy", "numpy")) == ("numpy", "")
    assert _runtime_of(_func_over("torch")) == ("torch", "")
    assert "no runtime adapter registered" in _runtime_of(_func_over("nolib"))[1]
    assert "found 'numpy', 'torch'" in _runtime_of(_func_over("numpy", "torch"))[1]
    assert "found none" in _runtime_of(_func_over(""))[1]


@pytest.mark.needs_llvm
def test_an_adapter_refusing_the_kernel_keeps_the_site() -> None:
    """torch's adapter takes loop-free maps only: a sum over tensors is refused."""
    pytest.importorskip("ppy_torch")
    from conftest import spec_of
    from ppy_llvm._backend import _refusal

    assert _refusal("torch", spec_of("a*b+c")) == ""
    assert "without loops" in _refusal("torch", spec_of("sum(a*b)"))
    assert _refusal("numpy", spec_of("sum(a*b)")) == ""
    assert "no runtime adapter 'nolib'" in _refusal("nolib", spec_of("a*b+c"))
