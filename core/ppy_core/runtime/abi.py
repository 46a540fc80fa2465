"""The kernel ABI: how a backend's compiled kernel is described, found and called.

It is the contract between a backend that writes kernels and a library's runtime
adapter that calls them, so neither needs the other. A kernel is a function in a
shared object; the library carries ``int CPU_CHECK_SYMBOL(void)`` (1 iff this CPU has
the features the code was built for). Its C signature depends on `kind`:

    map, map_bool:  void k(const double **arrays, const double *scalars, void *out,
                           int64_t begin, int64_t end, const ppy_loop *loops)
    sum ... min:    double k(const double **arrays, const double *scalars,
                             int64_t lo, int64_t n, const ppy_loop *loops)

    column, column_bool:  int64_t k(const struct ArrowArray *const *arrays,
                          const double *scalars, void *out_values,
                          uint8_t *out_validity, int64_t n, int64_t *info)

A columnar kernel reads each array through its C Data Interface struct (values and
validity bitmap where they lie; ``offset`` a multiple of 8), writes n values
(doubles, or bits for column_bool) and n validity bits, and returns 0, or a
nonzero code after which the library's own compute must run. ``info[0]`` is the
result's null count, ``info[1]`` 1 iff the library would give it a validity bitmap.

`leaves` has one letter per operand in call order: ``a`` a float64 buffer (a
float64 Arrow array for columnar kernels), ``b`` a boolean Arrow array, ``s`` a
float64 scalar, ``w`` a float64 buffer that the adapter may also fill from a finite
scalar, broadcast (no power and no library loop reads it, so a scalar there gives
the library's answer wherever the call raises no FP flag). `loops` names the
library's own inner loops the kernel calls (``("sin", "d->d")``), in the order of
the ``loops`` table the adapter fills with ``{function pointer, data}`` pairs. A
manifest carries all of it as plain data (`CompiledKernel.unit_data`); the kernel's
shared object is the unit's first file.

Imports no compiler code and no library: ctypes only, and only to open a library.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import ctypes

#: version of this ABI, written into every kernel unit (a reader refuses others)
ABI_VERSION: Final = 1
#: columnar kernels (Arrow arrays with validity; result float64 or boolean), see above
COLUMN_KINDS: Final = frozenset({"column", "column_bool"})
#: the CPU check every kernel library exports: ``int ppy_kernel_cpu_ok(void)``
CPU_CHECK_SYMBOL: Final = "ppy_kernel_cpu_ok"
KINDS: Final = frozenset({"map", "map_bool", "sum", "mean", "prod", "max", "min", *COLUMN_KINDS})
LEAF_KINDS: Final = frozenset("asbw")
LOOP_SIGNATURES: Final = frozenset({"d->d", "dd->d"})

_LIBS: dict[str, ctypes.CDLL | None] = {}
_WARNED: set[str] = set()


class KernelWarning(RuntimeWarning):
    """A kernel library cannot run here (another CPU, not loadable): its sites run Python."""


@dataclass(frozen=True, slots=True)
class KernelSignature:
    """What an adapter needs to call a kernel: result kind, leaf kinds, library loops.

    `nan_ok`: a NaN result of a serial reduction has the library's own NaN bits (a
    proof showed it on this build), so it may stand; otherwise the library recomputes."""

    kind: str
    leaves: str
    loops: tuple[tuple[str, str], ...] = ()
    nan_ok: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kernel kind {self.kind!r} is not one of {sorted(KINDS)}")
        if not set(self.leaves) <= LEAF_KINDS:
            raise ValueError(f"kernel leaves {self.leaves!r}: each is 'a', 'b', 's' or 'w'")
        for loop in self.loops:
            if len(loop) != 2 or loop[1] not in LOOP_SIGNATURES:
                raise ValueError(f"kernel loop {loop!r}: (name, one of {sorted(LOOP_SIGNATURES)})")

    def to_dict(self) -> dict[str, Any]:
        """Manifest form (JSON-serializable)."""
        return {
            "kind": self.kind,
            "leaves": self.leaves,
            "loops": [list(loop) for loop in self.loops],
            "nan_ok": self.nan_ok,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KernelSignature:
        """Inverse of `to_dict`; ValueError (KeyError, TypeError) when malformed."""
        return cls(
            str(data["kind"]),
            str(data["leaves"]),
            tuple((str(name), str(sig)) for name, sig in data.get("loops", ())),
            bool(data.get("nan_ok", False)),
        )

    def to_json(self) -> str:
        """`to_dict` as canonical JSON text."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> KernelSignature:
        """Inverse of `to_json`."""
        return cls.from_dict(json.loads(text))


@dataclass(frozen=True, slots=True)
class CompiledKernel:
    """One kernel in a shared library: path, symbol, signature, its backend's fingerprint."""

    path: str
    symbol: str
    signature: KernelSignature
    fingerprint: str

    def unit_data(self) -> dict[str, Any]:
        """What a manifest records for the kernel (its file goes in the unit's files)."""
        return {
            "abi": ABI_VERSION,
            "symbol": self.symbol,
            "signature": self.signature.to_dict(),
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_unit(cls, data: Mapping[str, Any], path: str | Path) -> CompiledKernel:
        """Inverse of `unit_data`, the library at `path`; ValueError when malformed."""
        if data.get("abi") != ABI_VERSION:
            raise ValueError(f"kernel ABI {data.get('abi')!r}, this runtime reads {ABI_VERSION}")
        return cls(
            str(path),
            str(data["symbol"]),
            KernelSignature.from_dict(data["signature"]),
            str(data.get("fingerprint", "")),
        )


@dataclass(frozen=True, slots=True)
class LoadedKernel:
    """A kernel ready to call, as an adapter receives it: the function's address, its
    signature, the library handle to keep alive, and the unit's files (the kernel's
    library first, then what the adapter asked to ship beside it) in `directory`."""

    address: int
    signature: KernelSignature
    keepalive: object
    directory: Path = Path()
    files: tuple[str, ...] = ()


def _warn_once(key: str, detail: str) -> None:
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(
        f"ppy: kernel library {detail} cannot run on this machine; its sites run Python  "
        f"[E2004]\n  hint: rebuild on this machine (`ppy build`), the program runs meanwhile",
        KernelWarning,
        stacklevel=3,
    )


def load_library(path: str | Path) -> ctypes.CDLL | None:
    """dlopen `path` once per process; None (after one E2004 warning) when it does not
    load or its CPU check says this CPU lacks a feature its code uses."""
    key = str(path)
    if key not in _LIBS:
        import ctypes

        lib: ctypes.CDLL | None
        try:
            lib = ctypes.CDLL(key)
            ok = bool(getattr(lib, CPU_CHECK_SYMBOL)())
        except (OSError, AttributeError) as exc:
            _warn_once(key, f"{key} ({exc})")
            lib, ok = None, False
        if lib is not None and not ok:
            _warn_once(key, f"{key} (built for CPU features this one lacks)")
            lib = None
        _LIBS[key] = lib
    return _LIBS[key]


def kernel_address(kernel: CompiledKernel) -> tuple[int, ctypes.CDLL] | None:
    """(function address, library handle to keep alive), or None: run the Python path."""
    import ctypes

    lib = load_library(kernel.path)
    if lib is None:
        return None
    try:
        fn = getattr(lib, kernel.symbol)
    except AttributeError:
        _warn_once(f"{kernel.path}:{kernel.symbol}", f"{kernel.path} (no symbol {kernel.symbol})")
        return None
    return ctypes.cast(fn, ctypes.c_void_p).value or 0, lib


def load_kernel(
    data: Mapping[str, Any], directory: Path, files: Sequence[str]
) -> LoadedKernel | None:
    """The kernel a manifest unit describes (its library is `files[0]` in `directory`),
    or None when its library cannot run here (one warning). ValueError if malformed."""
    if not files:
        raise ValueError("a kernel unit names no library file")
    kernel = CompiledKernel.from_unit(data, Path(directory) / files[0])
    found = kernel_address(kernel)
    if found is None:
        return None
    return LoadedKernel(found[0], kernel.signature, found[1], Path(directory), tuple(files))


# -- proofs -------------------------------------------------------------------------------

#: a proof's reference expression: a leaf index (int), a constant (float), or
#: (op, *operands) with op "add"/"mul" (the library's elementwise operators),
#: "sum"/"prod" (its reductions), or the name of one of the kernel's loops
Expression = int | float | tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class ProofCase:
    """One experiment of a proof: `kernel` must give the bits of `expression` computed
    by the library itself. `inputs` says what to feed it: "wide" (magnitudes over the
    exponent range, special values, many lengths and offsets) or "nan" (NaN-laden
    data: whether a reduction's NaN result has the library's bits). Cases sharing a
    `name` share one verdict."""

    name: str
    expression: Expression
    kernel: CompiledKernel
    inputs: str = "wide"


__all__ = [
    "ABI_VERSION",
    "COLUMN_KINDS",
    "CPU_CHECK_SYMBOL",
    "KINDS",
    "CompiledKernel",
    "Expression",
    "KernelSignature",
    "KernelWarning",
    "LoadedKernel",
    "ProofCase",
    "kernel_address",
    "load_kernel",
    "load_library",
]
