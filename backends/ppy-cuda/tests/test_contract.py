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
            r"v1:toolkit=(none|\d+(\.\d+)+):driver=(none|\d+(\.\d+)+)(:sm=[\w,]+)?",
        ),
    )
    # importing the package and creating its plugins/backends must import none of these
    libraries = ("llvmlite",)
    # no library to block: the fingerprint names the toolkit and driver it finds, or none
    test_fingerprint_without_the_library_says_none = None


def test_toolchain_ready_names_what_is_missing() -> None:
    backend = DIST.create("backends", "cuda")
    missing = backend.toolchain_ready()
    fingerprint = backend.fingerprint()
    if missing is None:
        assert ":toolkit=none" not in fingerprint
        assert ":driver=none" not in fingerprint
    else:
        assert ("ptxas" in missing) == (":toolkit=none" in fingerprint)
        assert ("driver" in missing) == (":driver=none" in fingerprint)


def test_lowers_nothing_yet_and_says_so() -> None:
    from ppy_core.diagnostics import BackendError

    backend = DIST.create("backends", "cuda")
    assert "does not lower yet" in (backend.can_lower(None) or "")
    with pytest.raises(BackendError) as raised:
        backend.lower(None, None)
    assert raised.value.code == "E2001"


@pytest.mark.gpu
def test_fingerprint_on_a_gpu_names_driver_and_sm() -> None:
    fingerprint = DIST.create("backends", "cuda").fingerprint()
    assert re.search(r":driver=\d+(\.\d+)+", fingerprint), fingerprint
    assert re.search(r":sm=sm_\d+", fingerprint), fingerprint
