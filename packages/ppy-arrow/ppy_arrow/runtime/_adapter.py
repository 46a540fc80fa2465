"""The `pyarrow` runtime adapter: guards a fused columnar site's operands, lends them
to the kernel through the C Data Interface, builds the answer's Array over buffers
pyarrow allocated and the kernel filled.

The operands reach the kernel as C Data Interface `ArrowArray` structs that borrow
their buffers for the call (`_cdata.borrow`): pyarrow's own exporter would first
count an uncounted array's nulls, and whether Arrow gives a result a bitmap
depends on that count being known.

The guard takes exactly: a `pyarrow.DoubleArray` where the kernel reads float64
(`a`), a `pyarrow.BooleanArray` where it reads booleans (`b`), a Python float (or an
int Arrow casts to float64 exactly) where it reads a scalar (`s`); all arrays of one
length, in CPU memory, at an offset that is a multiple of 8 (their bitmaps are read
in place, byte by byte). Anything else (a ChunkedArray, another type, a bitmap
sliced inside a byte) runs the site's Python, that is Arrow's own compute.

Slots under a null in the answer hold what the kernel computed from the values
under the inputs' nulls (fill_null's fill where it filled, 0-bits past the end of
the last bitmap byte): Arrow leaves them unspecified.

Imports no compiler code; PyArrow when the first site is bound.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any, ClassVar, Final

from ppy_arrow.runtime._cdata import Borrow, state
from ppy_core.runtime.abi import COLUMN_KINDS, KernelSignature, LoadedKernel
from ppy_core.runtime.adapter import RuntimeAdapter

_KERNEL: Final = ctypes.CFUNCTYPE(
    ctypes.c_int64,
    ctypes.c_void_p,  # const struct ArrowArray *const *arrays
    ctypes.c_void_p,  # const double *scalars
    ctypes.c_void_p,  # void *out_values
    ctypes.c_void_p,  # uint8_t *out_validity
    ctypes.c_int64,  # n
    ctypes.c_void_p,  # int64_t *info
)
EXACT_INT: Final = 2**53


class ColumnSite:
    """One fused columnar site: guard, lend, call, wrap; Arrow's compute otherwise."""

    def __init__(self, kernel: LoadedKernel, fallback: Callable[..., Any], site_id: str) -> None:
        import pyarrow as pa

        self._pa = pa
        self._fn = _KERNEL(kernel.address)
        self._keep = kernel.keepalive
        self.leaves = kernel.signature.leaves
        self.bool_out = kernel.signature.kind == "column_bool"
        self._out_type = pa.bool_() if self.bool_out else pa.float64()
        self._classes = {"a": pa.DoubleArray, "b": pa.BooleanArray}
        self.fallback = fallback
        self.site_id = site_id
        self.fast = 0
        self.fallbacks: dict[str, int] = {}

    def ppy_stats(self) -> dict[str, Any]:
        """Fast-path calls and fallbacks by reason, for `ppy.stats()`."""
        return {"fast": self.fast, "fallback": dict(self.fallbacks)}

    def _fall(self, reason: str, args: tuple[Any, ...]) -> Any:
        self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
        return self.fallback(*args)

    def _guard(self, args: tuple[Any, ...]) -> tuple[list[Any], list[float], int] | str:
        """(arrays, scalars, length), or why the operands are not the kernel's."""
        if len(args) != len(self.leaves):
            return "arity"
        arrays: list[Any] = []
        scalars: list[float] = []
        n = -1
        for kind, value in zip(self.leaves, args, strict=True):
            if kind == "s":
                if type(value) is float:
                    scalars.append(value)
                elif type(value) is int and abs(value) <= EXACT_INT:
                    scalars.append(float(value))
                else:
                    return "scalar operand not a float"
                continue
            if type(value) is not self._classes[kind]:
                return f"operand is {type(value).__name__}, not {self._classes[kind].__name__}"
            now = state(value)
            if now[3] % 8:
                return "offset not a multiple of 8"
            if n >= 0 and now[1] != n:
                return "lengths differ"
            for buffer in now[4]:
                if buffer is not None and not buffer.is_cpu:
                    return "array not in CPU memory"
            n = now[1]
            arrays.append(now)
        return arrays, scalars, n

    def __call__(self, *args: Any) -> Any:
        guarded = self._guard(args)
        if isinstance(guarded, str):
            return self._fall(guarded, args)
        arrays, scalars, n = guarded
        pa = self._pa
        nbytes = (n + 7) // 8
        values = pa.allocate_buffer(nbytes if self.bool_out else 8 * n)
        validity = pa.allocate_buffer(nbytes)
        lent = Borrow(arrays)  # the arrays as they stand, raw null counts included
        scal = (ctypes.c_double * max(1, len(scalars)))(*scalars)
        info = (ctypes.c_int64 * 2)()
        rc = self._fn(lent.table, scal, values.address, validity.address, n, info)
        if rc != 0:
            return self._fall("kernel declined", args)
        self.fast += 1
        if not info[1]:
            return pa.Array.from_buffers(self._out_type, n, [None, values], null_count=0)
        # with a bitmap, a count of 0 would make pyarrow drop it: leave it uncounted
        # (-1), as Arrow's own select/fill_null results are; `null_count` counts it
        nulls = info[0] or -1
        return pa.Array.from_buffers(self._out_type, n, [validity, values], null_count=nulls)


class ArrowAdapter(RuntimeAdapter):
    """Columnar kernels over PyArrow arrays (kinds `column` and `column_bool`)."""

    name: ClassVar[str] = "pyarrow"

    def kernel_site(
        self, kernel: LoadedKernel, fallback: Callable[..., Any], site_id: str
    ) -> ColumnSite:
        """A `ColumnSite` around `kernel` (see the module docstring)."""
        return ColumnSite(kernel, fallback, site_id)

    def accepts(self, signature: KernelSignature) -> str | None:
        """Columnar kernels without library loops; leaves `a`, `b`, `s`."""
        if signature.kind not in COLUMN_KINDS:
            return f"the pyarrow adapter calls columnar kernels, not {signature.kind!r}"
        if signature.loops:
            return "the pyarrow adapter resolves no library loops"
        return None


def create_adapter() -> ArrowAdapter:
    """Entry point ``ppy.runtimes: pyarrow``."""
    return ArrowAdapter()


__all__ = ["ArrowAdapter", "ColumnSite", "create_adapter"]
