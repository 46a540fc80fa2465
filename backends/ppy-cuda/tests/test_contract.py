"""Contract of ppy-cuda: entry points, names, claims, fingerprints, lazy imports.

The checks are ppy_core.testing.ContractSuite's; this file states ppy-cuda's specifics.
"""

from __future__ import annotations

import re

import pytest

from ppy_core import testing

DIST = testing.Distribution.of(__file__)


class TestContract(testing.ContractSuite):
    dist = DIST
    # (group, entry point name, fingerprint pattern)
    entries = (
        (
            "backends",
            "cuda",
            r"v2:toolkit=(none|\d+(\.\d+)+):driver=(none|\d+(\.\d+)+)(:sm=[\w,]+)?",
        ),
    )
    loaders = ("cuda",)  # ppy.loaders: the runtime side of its units
    # importing the package and creating its plugins/backends must import none of these
    libraries = ("llvmlite", "torch")
    # no library to block: the fingerprint names the toolkit and driver it finds, or none
    test_fingerprint_without_the_library_says_none = None

    def test_importing_the_package_imports_no_library(self) -> None:
        # ppy_core.testing.check_lazy_imports calls every entry point with no argument,
        # a `ppy.loaders` function included (it takes the unit): check by hand instead
        import subprocess
        import sys

        code = (
            "import sys, ppy_cuda, ppy_cuda.runtime, ppy_cuda.driver; "
            "ppy_cuda.create_backend().name; "
            "print([m for m in ('llvmlite', 'torch') if m in sys.modules])"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.stdout.strip() == "[]", out.stderr


def test_toolchain_ready_names_what_is_missing() -> None:
    backend = DIST.create("backends", "cuda")
    missing = backend.toolchain_ready()
    fingerprint = backend.fingerprint()
    if missing is None:
        assert ":toolkit=none" not in fingerprint
        assert ":driver=none" not in fingerprint
    else:
        # ptxas is optional (the driver compiles PTX); a driver with a GPU is not
        assert ("driver" in missing) == (":driver=none" in fingerprint)
        assert ":sm=" not in fingerprint


def test_bad_ir_is_refused_with_a_reason_not_a_traceback() -> None:
    backend = DIST.create("backends", "cuda")
    reason = backend.can_lower(object())  # not a func.func at all
    assert reason  # the driver records the refusal; nothing escapes


@pytest.mark.gpu
def test_fingerprint_on_a_gpu_names_driver_and_sm() -> None:
    fingerprint = DIST.create("backends", "cuda").fingerprint()
    assert re.search(r":driver=\d+(\.\d+)+", fingerprint), fingerprint
    assert re.search(r":sm=sm_\d+", fingerprint), fingerprint
