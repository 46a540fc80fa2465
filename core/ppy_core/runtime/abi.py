"""The kernel ABI: how a backend's compiled kernel is described, found and called.

It is the contract between a backend that writes kernels and a library's runtime
adapter that calls them, so neither needs the other. A kernel is a function in a
shared object; the library carries ``int CPU_CHECK_SYMBOL(void)`` (1 iff this CPU has
the features the code was built for). Its C signature depends on `kind`:

    map, map_bool:  void k(const double **arrays, const double *scalars, void *out,
                           int64_t begin, int64_t end, const ppy_loop *loops)
    sum ... min:    double k(const double **arrays, const double *scalars,
                             int64_t lo, int64_t n, const ppy_loop *loops)
    sum_rows ... min_rows_keep:  the same entry, reducing elements [lo, lo + n) of
                    operands of one shape (float32 ones in float32, returned as the
                    double of that float); the adapter calls it once per row along the
                    last axis and lays the numbers out as an array without that axis
                    (``_keep``: with it, of length 1)

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

Imports no compiler code and no library, and at import time nothing but `os` and
`warnings`: a cached start reads its units with `KernelUnit` and `LoadedKernel`
(plain classes); ctypes is imported only to open a library here (an adapter may open
it itself: ppy-numpy's C dispatcher does), and the build side's dataclasses
(`KernelSignature`, `CompiledKernel`, `ProofCase`, in `runtime.kernels`) load on
first use of their names.
"""

from __future__ import annotations

import os
import warnings

TYPE_CHECKING = False  # `typing`, `dataclasses` and `json` cost a cached start ~5 ms
if TYPE_CHECKING:
    import ctypes
    from collections.abc import Mapping, Sequence
    from typing import Any, Final

    from ppy_core.runtime.kernels import CompiledKernel, Expression, KernelSignature, ProofCase

#: version of this ABI, written into every kernel unit (a reader refuses others)
ABI_VERSION: Final = 1
#: columnar kernels (Arrow arrays with validity; result float64 or boolean), see above
COLUMN_KINDS: Final = frozenset({"column", "column_bool"})
#: the CPU check every kernel library exports: ``int ppy_kernel_cpu_ok(void)``
CPU_CHECK_SYMBOL: Final = "ppy_kernel_cpu_ok"
#: reductions of each row along the last axis (see above)
ROW_KINDS: Final = frozenset(
    f"{op}_{extent}" for op in ("sum", "max", "min") for extent in ("rows", "rows_keep")
)
KINDS: Final = frozenset(
    {"map", "map_bool", "sum", "mean", "prod", "max", "min", *COLUMN_KINDS, *ROW_KINDS}
)
#: leaves: 'a' float64 array, 's' float64 scalar, 'w' array a float may fill, 'b'
#: (columnar), 'f' float32 array, 'p' Python number cast to float32 (NumPy 2's weak
#: rule), 'l' int64 / 'i' int32 array, 'n' Python int (its int64 bits in the slot),
#: 'c' complex128 array (pairs of float64), 'j' int64 array a float64 kernel converts
LEAF_KINDS: Final = frozenset("asbwfplincj")
LOOP_SIGNATURES: Final = frozenset({"d->d", "dd->d", "ddd->d"})
#: symbol suffixes of a float64 map kernel's optional further entries, in its library
#: beside the plain entry (a runtime runs the plain entry where one is missing). The
#: entry reading row-broadcast operands as splats, with `map`'s signature:
SPLAT_SUFFIX: Final = "_splat"
#: the entry running the splat entry over a run of rows and returning its NaN witness,
#: ``int64_t (arrays, scalars, out, len, nrows, steps, loops)`` (an artifact's older void
#: ``_rows`` entry is not read)
ROWS_SUFFIX: Final = "_rows_nan"
#: a data marker: the table of the kernel's nodes whose NaN order NumPy's temporary
#: elision swaps (present only where it has such nodes)
SWAPS_SUFFIX: Final = "_swaps"

_LIBS: dict[str, ctypes.CDLL | None] = {}
_WARNED: set[str] = set()
#: (kind, leaves, loops) that `check_signature` passed: a module of hundreds of
#: kernels has a few signatures
_CHECKED: set[tuple[str, str, tuple[tuple[str, str], ...]]] = set()
#: the build side's records, defined in `runtime.kernels` (dataclasses), named here
_LAZY = frozenset({"CompiledKernel", "Expression", "KernelSignature", "ProofCase"})


class KernelWarning(RuntimeWarning):
    """A kernel library cannot run here (another CPU, not loadable): its sites run Python."""


def check_signature(kind: str, leaves: str, loops: Sequence[Sequence[str]]) -> None:
    """ValueError unless (kind, leaves, loops) is a signature this ABI defines."""
    if kind not in KINDS:
        raise ValueError(f"kernel kind {kind!r} is not one of {sorted(KINDS)}")
    if not isinstance(leaves, str) or not set(leaves) <= LEAF_KINDS:
        raise ValueError(f"kernel leaves {leaves!r}: each is one of {''.join(sorted(LEAF_KINDS))}")
    for loop in loops:
        if len(loop) != 2 or loop[1] not in LOOP_SIGNATURES:
            raise ValueError(f"kernel loop {loop!r}: (name, one of {sorted(LOOP_SIGNATURES)})")


class KernelUnit:
    """A kernel as a manifest unit describes it, read at run time: its symbol, the
    signature's fields (`kind`, `leaves`, `loops`, `nan_ok`, as `KernelSignature`'s,
    so an adapter reads either alike) and its backend's fingerprint. Immutable."""

    __slots__ = ("fingerprint", "kind", "leaves", "loops", "nan_ok", "symbol")

    symbol: str
    kind: str
    leaves: str
    loops: tuple[tuple[str, str], ...]
    nan_ok: bool
    fingerprint: str

    def __init__(
        self,
        symbol: str,
        kind: str,
        leaves: str,
        loops: tuple[tuple[str, str], ...] = (),
        nan_ok: bool = False,
        fingerprint: str = "",
    ) -> None:
        signature: tuple[Any, ...] | None = (kind, leaves, loops)
        try:
            known = signature in _CHECKED
        except TypeError:  # a field that does not hash (loops as lists): checked each time
            known, signature = False, None
        if not known:
            check_signature(kind, leaves, loops)
            if signature is not None:
                _CHECKED.add(signature)
        put = object.__setattr__
        put(self, "symbol", symbol)
        put(self, "kind", kind)
        put(self, "leaves", leaves)
        put(self, "loops", loops)
        put(self, "nan_ok", nan_ok)
        put(self, "fingerprint", fingerprint)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> KernelUnit:
        """A unit's `data` (`CompiledKernel.unit_data`); ValueError when malformed or
        written for another ABI version."""
        if not isinstance(data, dict) or data.get("abi") != ABI_VERSION:
            found = data.get("abi") if isinstance(data, dict) else data
            raise ValueError(f"kernel ABI {found!r}, this runtime reads {ABI_VERSION}")
        try:
            sig = data["signature"]
            loops = tuple((str(name), str(s)) for name, s in sig.get("loops", ()))
            return cls(
                str(data["symbol"]),
                str(sig["kind"]),
                str(sig["leaves"]),
                loops,
                bool(sig.get("nan_ok", False)),
                str(data.get("fingerprint", "")),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed kernel unit: {exc!r}") from None

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"KernelUnit is immutable (set {name})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KernelUnit):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in self.__slots__))

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"KernelUnit({fields})"


class LoadedKernel:
    """A kernel ready to call, as an adapter receives it: the function's address, its
    signature (a `KernelUnit`, or a `KernelSignature`: the same fields), the library
    handle to keep alive, and the unit's files (the kernel's library first, then what
    the adapter asked to ship beside it) in `directory`."""

    __slots__ = ("address", "directory", "files", "keepalive", "signature")

    def __init__(
        self,
        address: int,
        signature: KernelUnit | KernelSignature,
        keepalive: object,
        directory: str | os.PathLike[str] = "",
        files: Sequence[str] = (),
    ) -> None:
        from pathlib import Path  # loaded already wherever a kernel is (numpy, torch ...)

        self.address, self.signature, self.keepalive = address, signature, keepalive
        # a binder passes its module folder's Path: made again, ~10 µs a kernel
        self.directory = directory if isinstance(directory, Path) else Path(directory)
        self.files = tuple(files)

    def __repr__(self) -> str:
        return f"LoadedKernel(address={self.address:#x}, signature={self.signature!r})"


def warn_unusable(key: str, detail: str) -> None:
    """One E2004 warning per `key`: a kernel library (`detail` says which and why)
    cannot run on this machine; its sites run Python."""
    if key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(
        f"ppy: kernel library {detail} cannot run on this machine; its sites run Python  "
        f"[E2004]\n  hint: rebuild on this machine (`ppy build`), the program runs meanwhile",
        KernelWarning,
        stacklevel=3,
    )


_warn_once = warn_unusable


def load_library(path: str | os.PathLike[str]) -> ctypes.CDLL | None:
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
            warn_unusable(key, f"{key} ({exc})")
            lib, ok = None, False
        if lib is not None and not ok:
            warn_unusable(key, f"{key} (built for CPU features this one lacks)")
            lib = None
        _LIBS[key] = lib
    return _LIBS[key]


def address_in(lib: ctypes.CDLL, symbol: str) -> int:
    """The address of `symbol` in the open library `lib`, or 0 where it has none.

    One dlsym on the library's handle: no ctypes function object is made (`getattr`
    on a CDLL makes one and caches it on the handle, ~13 µs; a missing name raises
    through two frames, ~15 µs), which a start binding hundreds of kernels (a module
    whose sites differ in their literals: one wrapper symbol each) paid per site."""
    from _ctypes import dlsym  # loaded with ctypes, which opened `lib`

    try:
        return dlsym(lib._handle, symbol) or 0
    except OSError:  # not in the library (dlsym's NULL)
        return 0


def symbol_address(path: str, symbol: str) -> tuple[int, ctypes.CDLL] | None:
    """(address of `symbol` in the library at `path`, its handle to keep alive), or
    None (one E2004 warning): run the Python path."""
    lib = load_library(path)
    if lib is None:
        return None
    address = address_in(lib, symbol)
    if not address:
        warn_unusable(f"{path}:{symbol}", f"{path} (no symbol {symbol})")
        return None
    return address, lib


def kernel_address(kernel: CompiledKernel) -> tuple[int, ctypes.CDLL] | None:
    """(function address, library handle to keep alive), or None: run the Python path."""
    return symbol_address(kernel.path, kernel.symbol)


def load_kernel(
    data: Mapping[str, Any], directory: str | os.PathLike[str], files: Sequence[str]
) -> LoadedKernel | None:
    """The kernel a manifest unit describes (its library is `files[0]` in `directory`),
    or None when its library cannot run here (one warning). ValueError if malformed.
    Opens the library with ctypes (`RuntimeAdapter.load_kernel`'s default)."""
    if not files:
        raise ValueError("a kernel unit names no library file")
    unit = KernelUnit.from_data(data)
    found = symbol_address(os.path.join(directory, files[0]), unit.symbol)
    if found is None:
        return None
    return LoadedKernel(found[0], unit, found[1], directory, files)


def __getattr__(name: str) -> object:
    """The build side's records (`runtime.kernels`), imported on first use."""
    if name in _LAZY:
        from ppy_core.runtime import kernels

        return getattr(kernels, name)
    raise AttributeError(f"module 'ppy_core.runtime.abi' has no attribute {name!r}")


__all__ = [
    "ABI_VERSION",
    "COLUMN_KINDS",
    "CPU_CHECK_SYMBOL",
    "KINDS",
    "ROW_KINDS",
    "ROWS_SUFFIX",
    "SPLAT_SUFFIX",
    "SWAPS_SUFFIX",
    "CompiledKernel",
    "Expression",
    "KernelSignature",
    "KernelUnit",
    "KernelWarning",
    "LoadedKernel",
    "ProofCase",
    "address_in",
    "check_signature",
    "kernel_address",
    "load_kernel",
    "load_library",
    "symbol_address",
    "warn_unusable",
]
