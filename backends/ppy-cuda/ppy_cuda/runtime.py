"""Run a compiled CUDA site: guard, launch through the driver, or run torch.

`load_site` is the loader the manifest names (entry point `ppy.loaders: cuda`). A
`CudaSite` runs its PTX kernel when every tensor operand is a contiguous CUDA tensor
of the kernel's dtype, all one shape and device, outside autograd (the CPU fused
path's rule); a Python float or int stands for each scalar leaf. Anything else is a
counted fallback to the site's Python (torch itself). The kernel runs in torch's
primary context on `torch.cuda.current_stream()`; its output comes from
`torch.empty_like` (torch's caching allocator, so it is ordered on that stream);
modules are loaded once per device; n == 0 launches nothing. A machine without a
driver is one warning (E2035) and torch from then on; a failed load or launch is one
warning (E2036) and torch for that site. Imports no compiler code.
"""

from __future__ import annotations

import ctypes
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

BLOCK: Final = 256
_WARNED: set[str] = set()


def warn_once(key: str, message: str) -> None:
    """One warning per `key` per process."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


class TorchOps:
    """The few torch calls a site makes, behind one object so tests can stand in a
    fake device (no GPU here)."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.dtypes = {"f32": torch.float32, "f64": torch.float64}

    def is_tensor(self, t: Any) -> bool:
        return type(t) is self.torch.Tensor  # a subclass may override any op

    def on_device(self, t: Any) -> bool:
        return bool(t.is_cuda)

    def grad_needed(self, tensors: list[Any]) -> bool:
        return self.torch.is_grad_enabled() and any(t.requires_grad for t in tensors)

    def empty_like(self, t: Any, boolean: bool) -> Any:
        return (
            self.torch.empty_like(t, dtype=self.torch.bool) if boolean else self.torch.empty_like(t)
        )

    def stream(self, device: int) -> int:
        return int(self.torch.cuda.current_stream(device).cuda_stream)


class CudaSite:
    """A guarded kernel site (see the module's docstring)."""

    def __init__(
        self,
        data: Mapping[str, Any],
        ptx: str,
        fallback: Callable[..., Any],
        *,
        ops: Any = None,
        driver: Callable[[], Any] | None = None,
    ) -> None:
        self.ptx, self.fallback = ptx, fallback
        self.entry, self.dtype = str(data["entry"]), str(data["dtype"])
        self.leaves, self.boolean = str(data["leaves"]), bool(data["bool"])
        self.name = str(data.get("site", self.entry))
        self._ops, self._driver_factory = ops, driver
        self._driver: Any = None
        self._functions: dict[int, Any] = {}  # device -> loaded entry
        self.broken: str | None = None
        self.fast, self.launches, self.reasons = 0, 0, {}

    def ppy_stats(self) -> dict[str, Any]:
        """Fast-path calls, kernel launches, fallbacks by reason."""
        return {"fast": self.fast, "launches": self.launches, "fallback": dict(self.reasons)}

    def _miss(self, reason: str, args: tuple[Any, ...]) -> Any:
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        return self.fallback(*args)

    def _guard(self, ops: Any, args: tuple[Any, ...]) -> tuple[str | None, list[Any], list[Any]]:
        if len(args) != len(self.leaves):
            return "arity", [], []
        tensors, values = [], []
        for kind, arg in zip(self.leaves, args, strict=True):
            if kind == "s":
                if type(arg) not in (float, int):
                    return "type", [], []
                values.append(ctypes.c_double(float(arg)))
                continue
            if not ops.is_tensor(arg):
                return "type", [], []
            if not ops.on_device(arg):
                return "device", [], []
            tensors.append(arg)
            values.append(arg)
        first = tensors[0]
        if any(t.dtype is not ops.dtypes[self.dtype] for t in tensors):
            return "dtype", [], []
        if any(t.shape != first.shape or t.device != first.device for t in tensors):
            return "shape", [], []
        if not all(t.is_contiguous() for t in tensors):
            return "layout", [], []
        if ops.grad_needed(tensors):
            return "grad", [], []
        return None, tensors, values

    def __call__(self, *args: Any) -> Any:
        if self.broken is not None:
            return self._miss(self.broken, args)
        if self._ops is None:
            try:
                self._ops = TorchOps()
            except ImportError:
                self.broken = "no torch"
                return self._miss(self.broken, args)
        reason, tensors, values = self._guard(self._ops, args)
        if reason is not None:
            return self._miss(reason, args)
        out = self._ops.empty_like(tensors[0], self.boolean)
        n = tensors[0].numel()
        self.fast += 1
        if n == 0:
            return out
        device = int(tensors[0].device.index or 0)
        try:
            function = self._function(device)
            if function is None:
                self.fast -= 1
                return self._miss(self.broken or "driver", args)
            params = [ctypes.c_int64(n), ctypes.c_void_p(out.data_ptr())]
            params += [
                v if isinstance(v, ctypes.c_double) else ctypes.c_void_p(v.data_ptr())
                for v in values
            ]
            grid = (n + BLOCK - 1) // BLOCK
            self._driver.launch(device, function, grid, BLOCK, self._ops.stream(device), params)
        except Exception as exc:  # a driver error: torch runs from now on (one warning)
            self.fast -= 1
            self.broken = "launch failed"
            warn_once(
                f"launch:{self.name}", f"ppy: CUDA site {self.name} runs torch: {exc}  [E2036]"
            )
            return self._miss(self.broken, args)
        self.launches += 1
        return out

    def _function(self, device: int) -> Any:
        if device in self._functions:
            return self._functions[device]
        if self._driver is None:
            self._driver = (self._driver_factory or shared_driver)()
            if self._driver is None:
                self.broken = "no driver"
                warn_once(
                    "driver",
                    "ppy: no CUDA driver could be loaded (libcuda.so.1, cuInit): CUDA sites "
                    "run torch  [E2035]",
                )
                return None
        self._functions[device] = self._driver.load_function(device, self.ptx, self.entry)
        return self._functions[device]


_SHARED: list[Any] = []


def shared_driver() -> Any:
    """The process's `Driver` (loaded on first use; None where there is none)."""
    if not _SHARED:
        from ppy_cuda.driver import Driver

        _SHARED.append(Driver.load())
    return _SHARED[0]


def load_site(
    unit_data: Mapping[str, Any],
    build_dir: str | Path,
    fallback: Callable[..., Any],
    record: Mapping[str, Any] | None = None,
) -> Callable[..., Any]:
    """The manifest's loader: a `CudaSite` over the unit's PTX (read now; loaded into a
    device's context at its first CUDA call). A missing PTX file is one warning and
    the site's Python."""
    path = Path(build_dir) / str(unit_data["file"])
    try:
        ptx = path.read_text(encoding="utf-8")
    except OSError as exc:
        warn_once(
            f"missing:{path}",
            f"ppy: CUDA kernel {path} is unreadable ({exc}); the site runs torch  [E2036]",
        )
        return fallback
    return CudaSite(unit_data, ptx, fallback)


__all__ = ["BLOCK", "CudaSite", "TorchOps", "load_site", "shared_driver"]
