"""The backend's coded errors (E2030-E2039, declared in `ppy_core.diagnostics`)."""

from __future__ import annotations

from ppy_core.diagnostics import BackendError

HINTS = {
    "E2030": "the site stays torch: only elementwise float32/float64 trees lower to PTX",
    "E2031": "give an (arch, PTX ISA) pair from ppy_cuda.target.ARCH_ISA (sm_75 6.3, "
    "sm_80 7.0, sm_90 7.8)",
    "E2032": "the PTX was refused by ptxas: report it, with the PTX file named here",
    "E2033": "a torch op whose CUDA bits are not proven equal to PPy's stays torch",
    "E2034": "install the CUDA toolkit matching torch.version.cuda, or set PPY_CUDA_LIBDEVICE",
    "E2035": "the site runs torch: check the NVIDIA driver (nvidia-smi) and torch.cuda",
    "E2036": "the kernel launch failed; the site runs torch from now on",
}


def cuda_error(code: str, message: str) -> BackendError:
    """A `BackendError` with this backend's hint for `code`."""
    return BackendError(message, hint=HINTS[code], code=code)


__all__ = ["HINTS", "cuda_error"]
