"""Runtime side of ppy-llvm: load kernel libraries without llvmlite.

A library carries ``int ppy_llvm_cpu_ok(void)`` compiled for the baseline
CPU; a library built for features this CPU lacks is refused with one warning
(E2105) and its sites run NumPy.
"""

from __future__ import annotations

import ctypes
import json
import warnings
from dataclasses import dataclass
from pathlib import Path

from ._errors import CODES

_LIBS: dict[str, ctypes.CDLL | None] = {}
_WARNED: set[str] = set()


@dataclass(frozen=True, slots=True)
class KernelSignature:
    """What the dispatcher needs: result kind, leaf kinds ('a'/'s'), NumPy loops."""

    kind: str  # map | map_bool | sum | mean | prod | max | min
    leaves: str
    loops: tuple[tuple[str, str], ...]  # (numpy ufunc name, "d->d" | "dd->d")
    nan_ok: bool = False  # a NaN result of a serial run has NumPy's bits (proven)

    def to_json(self) -> str:
        """Manifest form."""
        return json.dumps(
            {
                "kind": self.kind,
                "leaves": self.leaves,
                "loops": [list(x) for x in self.loops],
                "nan_ok": self.nan_ok,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> KernelSignature:
        """Inverse of `to_json`."""
        d = json.loads(text)
        return cls(
            d["kind"],
            d["leaves"],
            tuple((a, b) for a, b in d["loops"]),
            bool(d.get("nan_ok", False)),
        )


@dataclass(frozen=True, slots=True)
class CompiledKernel:
    """One kernel in a shared library: path, symbol, signature, backend fingerprint."""

    path: str
    symbol: str
    signature: KernelSignature
    fingerprint: str


def _warn_once(key: str, detail: str) -> None:
    if key in _WARNED:
        return
    _WARNED.add(key)
    message, hint = CODES["E2105"]
    warnings.warn(
        f"{message.format(detail=detail)}  [E2105]\n  hint: {hint}", RuntimeWarning, stacklevel=3
    )


def load_library(path: str | Path) -> ctypes.CDLL | None:
    """dlopen `path` once; None (after one warning) if it cannot run on this CPU."""
    key = str(path)
    if key not in _LIBS:
        try:
            lib = ctypes.CDLL(key)
            ok = bool(lib.ppy_llvm_cpu_ok())
        except (OSError, AttributeError) as exc:
            _warn_once(key, f"{key} ({exc})")
            lib, ok = None, False
        if lib is not None and not ok:
            _warn_once(key, key)
            lib = None
        _LIBS[key] = lib
    return _LIBS[key]


def kernel_address(kernel: CompiledKernel) -> tuple[int, ctypes.CDLL] | None:
    """(function address, library handle to keep alive), or None -> use NumPy."""
    lib = load_library(kernel.path)
    if lib is None:
        return None
    fn = getattr(lib, kernel.symbol)
    return ctypes.cast(fn, ctypes.c_void_p).value or 0, lib


def load_site(data: dict[str, str], directory: Path, fallback: object, record: dict) -> object:
    """The runtime loader named in the manifest: a guarded NumPy dispatcher around the
    kernel in `directory`, or an error (the site then runs as Python)."""
    from ppy_numpy._runtime import make_site

    signature = KernelSignature.from_json(data["signature"])
    kernel = CompiledKernel(
        str(Path(directory) / record["unit"]["files"][0]),
        data["symbol"],
        signature,
        data["fingerprint"],
    )
    found = kernel_address(kernel)
    if found is None:
        raise OSError(f"{kernel.path} cannot run on this CPU")
    address, keepalive = found
    return make_site(
        address,
        signature.kind,
        signature.leaves,
        signature.loops,
        fallback,
        record["id"],
        keepalive,
        signature.nan_ok,
    )
