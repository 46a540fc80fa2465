"""What CUDA toolchain and driver are here: probed once, when first asked.

The toolkit is whatever `ptxas --version` says (ptxas from $CUDA_HOME/bin,
$CUDA_PATH/bin, PATH, or /usr/local/cuda/bin); the driver is read from
/proc/driver/nvidia/version, else from `nvidia-smi`. Nothing runs at import time.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

TIMEOUT_S: Final = 20.0


@dataclass(frozen=True, slots=True)
class CudaToolchain:
    """ptxas (path, release, version) and the driver (version, GPUs with their sm)."""

    ptxas: str | None
    release: str | None  # "13.0"
    toolkit: str | None  # "13.0.88"
    driver: str | None  # "570.124.06"
    gpus: tuple[tuple[str, str], ...]  # (name, "sm_90")


def _run(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def find_ptxas() -> str | None:
    """The ptxas this backend would use, or None."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and (Path(root) / "bin" / "ptxas").is_file():
            return str(Path(root) / "bin" / "ptxas")
    found = shutil.which("ptxas")
    if found:
        return found
    default = Path("/usr/local/cuda/bin/ptxas")
    return str(default) if default.is_file() else None


def _toolkit(ptxas: str | None) -> tuple[str | None, str | None]:
    text = _run([ptxas, "--version"]) if ptxas else None
    if not text:
        return None, None
    release = re.search(r"release (\d+\.\d+)", text)
    version = re.search(r"\bV(\d+(?:\.\d+)+)", text)
    return (release.group(1) if release else None, version.group(1) if version else None)


def _driver() -> str | None:
    try:
        text = Path("/proc/driver/nvidia/version").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    found = re.search(r"Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)", text)
    if found:
        return found.group(1)
    smi = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return smi.splitlines()[0].strip() if smi and smi.strip() else None


def _gpus() -> tuple[tuple[str, str], ...]:
    smi = _run(["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"])
    gpus: list[tuple[str, str]] = []
    for line in (smi or "").splitlines():
        name, _, cap = line.rpartition(",")
        if name and cap.strip():
            gpus.append((name.strip(), "sm_" + cap.strip().replace(".", "")))
    return tuple(gpus)


@functools.cache
def probe() -> CudaToolchain:
    """Probe ptxas and the driver (once per process)."""
    ptxas = find_ptxas()
    release, toolkit = _toolkit(ptxas)
    driver = _driver()
    return CudaToolchain(ptxas, release, toolkit, driver, _gpus() if driver else ())


__all__ = ["CudaToolchain", "find_ptxas", "probe"]
