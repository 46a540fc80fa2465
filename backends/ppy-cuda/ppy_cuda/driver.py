"""The CUDA driver API through ctypes on libcuda.so.1: just what a launch needs.

Why ctypes and not cuda-python's `cuda-bindings`: the handful of calls used here
(cuInit, primary context retain/push/pop, cuModuleLoadData, cuModuleGetFunction,
cuLaunchKernel) are the driver's stable C ABI, present in every driver since CUDA 7;
`cuda-bindings` is a compiled wheel tied to one CUDA major version (12 or 13), a
dependency torch does not bring, and it would have to match the driver too. Every
argtype is declared (an undeclared pointer argument is truncated to 32 bits).
Contexts: only the device's *primary* context, the one torch uses; never one of
our own. Nothing is loaded at import time.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

_P = ctypes.c_void_p
_SIGNATURES: dict[str, list[Any]] = {
    "cuInit": [ctypes.c_uint],
    "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
    "cuDevicePrimaryCtxRetain": [ctypes.POINTER(_P), ctypes.c_int],
    "cuCtxPushCurrent_v2": [_P],
    "cuCtxPopCurrent_v2": [ctypes.POINTER(_P)],
    "cuModuleLoadData": [ctypes.POINTER(_P), ctypes.c_char_p],
    "cuModuleGetFunction": [ctypes.POINTER(_P), _P, ctypes.c_char_p],
    "cuLaunchKernel": [
        _P,
        *[ctypes.c_uint] * 6,
        ctypes.c_uint,
        _P,
        ctypes.POINTER(_P),
        ctypes.POINTER(_P),
    ],
    "cuGetErrorString": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
}


class DriverError(RuntimeError):
    """A driver call returned an error (its CUresult and name)."""


class Driver:
    """One process's handle on libcuda (`Driver.load()`; None where there is none)."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
        self._contexts: dict[int, _P] = {}
        self._lock = threading.Lock()
        self.check(lib.cuInit(0), "cuInit")

    @classmethod
    def load(cls, name: str = "libcuda.so.1") -> Driver | None:
        """The driver, or None where libcuda is missing or cuInit fails (no GPU)."""
        try:
            return cls(ctypes.CDLL(name))
        except (OSError, AttributeError, DriverError):
            return None

    def check(self, result: int, call: str) -> None:
        """Raise `DriverError` unless `result` is CUDA_SUCCESS."""
        if result != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(result, ctypes.byref(text))
            raise DriverError(f"{call}: CUresult {result} ({(text.value or b'?').decode()})")

    def context(self, device: int) -> _P:
        """The device's primary context (torch's), retained once per process."""
        with self._lock:
            if device not in self._contexts:
                dev = ctypes.c_int()
                self.check(self.lib.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
                ctx = _P()
                self.check(
                    self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev.value),
                    "cuDevicePrimaryCtxRetain",
                )
                self._contexts[device] = ctx
            return self._contexts[device]

    def load_function(self, device: int, ptx: str, name: str) -> _P:
        """Load `ptx` into the device's primary context (the driver JIT-compiles it for
        the GPU); the entry `name`."""
        ctx = self.context(device)
        self.check(self.lib.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent")
        try:
            module, function = _P(), _P()
            self.check(
                self.lib.cuModuleLoadData(ctypes.byref(module), ptx.encode() + b"\0"),
                "cuModuleLoadData",
            )
            self.check(
                self.lib.cuModuleGetFunction(ctypes.byref(function), module, name.encode()),
                "cuModuleGetFunction",
            )
            return function
        finally:
            popped = _P()
            self.lib.cuCtxPopCurrent_v2(ctypes.byref(popped))

    def launch(
        self, device: int, function: _P, grid: int, block: int, stream: int, args: list[Any]
    ) -> None:
        """Enqueue `function` on `stream` (torch's current stream) with `args` (ctypes
        values, in the kernel's parameter order)."""
        ctx = self.context(device)
        params = (_P * len(args))(*[ctypes.cast(ctypes.pointer(a), _P) for a in args])
        self.check(self.lib.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent")
        try:
            self.check(
                self.lib.cuLaunchKernel(
                    function, grid, 1, 1, block, 1, 1, 0, _P(stream), params, None
                ),
                "cuLaunchKernel",
            )
        finally:
            popped = _P()
            self.lib.cuCtxPopCurrent_v2(ctypes.byref(popped))


__all__ = ["Driver", "DriverError"]
