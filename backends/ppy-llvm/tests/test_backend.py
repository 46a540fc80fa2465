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
    pattern = r"v1:llvmlite=\d+\.\d+\.\d+:cpu=[0-9a-f]{12}:features=[0-9a-f]{16}"
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

    verdict = proven()
    assert set(verdict) == set(CANDIDATES)
    backend = LlvmBackend()
    for name, why in verdict.items():
        spec = spec_of("power(a,b)" if name == "power" else name)
        refusal = backend.can_lower_spec(spec)
        assert (refusal is None) == (why == "ok"), (name, why, refusal)
    assert backend.can_lower_spec(spec_of("a*b+c")) is None


@pytest.mark.needs_cc
def test_library_for_other_cpu_is_refused(tmp_path) -> None:
    from ppy_llvm import loader

    src = tmp_path / "k.c"
    src.write_text("int ppy_llvm_cpu_ok(void) { return 0; }\nvoid k(void) {}\n")
    so = tmp_path / "k.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    with pytest.warns(RuntimeWarning, match="E2105"):
        assert loader.load_library(so) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert loader.load_library(so) is None  # one warning only
    assert isinstance(ctypes.CDLL(str(so)), ctypes.CDLL)


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
