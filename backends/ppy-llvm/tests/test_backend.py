"""Backend contract: entry point, lazy import, fingerprint, proof, CPU check."""

from __future__ import annotations

import ctypes
import json
import re
import subprocess
import sys
import warnings

import pytest


def test_import_is_lazy() -> None:
    code = (
        "import sys, ppy_llvm; ppy_llvm.create_backend(); "
        "print(json.dumps(sorted(m for m in ('llvmlite', 'numpy') if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json;" + code], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == []


def test_entry_point_name() -> None:
    from importlib.metadata import entry_points

    eps = [e for e in entry_points(group="ppy.backends") if e.name == "llvm"]
    assert eps
    assert eps[0].value == "ppy_llvm:create_backend"
    assert eps[0].load()().name == "llvm"


@pytest.mark.needs_llvm
def test_fingerprint_format_and_stability() -> None:
    from ppy_llvm import create_backend

    fp = create_backend().fingerprint()
    assert re.fullmatch(r"v1:llvmlite=\d+\.\d+\.\d+:cpu=[0-9a-f]{12}:features=[0-9a-f]{16}", fp)
    assert fp == create_backend().fingerprint()


def test_fingerprint_imports_no_llvmlite() -> None:
    """The fingerprint enters every NumPy module's cache key: a cached run (and
    `ppy run`) must not import llvmlite to compute it."""
    code = (
        "import sys; from ppy_llvm import create_backend; create_backend().fingerprint(); "
        "print('llvmlite' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


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
