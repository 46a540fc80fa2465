"""The `pandas` runtime adapter: a fused Series site's guard, kernel call and answer.

The guard takes exactly `pandas.Series` objects (no subclass) that
- have ONE index (`_one_index`: the same object, a view of it as a frame's columns
  carry, or equal RangeIndexes; equal names): then pandas aligns nothing and its
  answer has those labels (the first operand's index object here; pandas' own gives
  that object or a view of it, depending on the op and the backing). Any other
  indexes, equal ones included, run pandas, which aligns by its own rules;
- are all on one backing: NumPy (`float64` where the kernel reads numbers, `bool`
  where it reads booleans, C-contiguous) or Arrow (`double[pyarrow]` /
  `bool[pyarrow]`, one chunk, the chunk taken by the Arrow adapter's guard);
- have names that are None, str or integers (pandas' name rule is then equality),
  and no `attrs` or `allows_duplicate_labels=False` (metadata pandas propagates).
Python floats (or ints exact in float64) where it reads a scalar. Anything else
(nullable `Float64`/`Int64`/`boolean`, object, categorical, time zones, a mix of
backings, a DataFrame) runs the site's Python: pandas itself.

NumPy backing: the kernel's NumPy-null-model twin (`<symbol>_np`: NaN is the null,
a boolean a byte) writes into a fresh NumPy array that the Series wraps without a
copy. Arrow backing: the chunk goes through `ppy_arrow.runtime.ColumnSite` (Arrow's
null model; pandas' NaN-to-<NA> rule is in the kernel, so where pandas does not
apply it, pandas 2 or `future.distinguish_nan_and_na`, pandas runs), the answer
Array wrapped without a copy. Inputs are never written (copy-on-write holds).

The answer's dtype is pandas' own: learned once per site and backing by running the
site's Python on empty slices of the operands (e.g. `isna()` of an Arrow-backed
Series is a NumPy `bool` Series); a dtype the kernel cannot make runs pandas.
The name is the operands' common name, else None (pandas' `_maybe_match_name`).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any, ClassVar, Final

from ppy_core.runtime.abi import COLUMN_KINDS, KernelSignature, LoadedKernel
from ppy_core.runtime.adapter import RuntimeAdapter
from ppy_pandas.runtime._wrap import series_maker

EXACT_INT: Final = 2**53
_TWIN: Final = ctypes.CFUNCTYPE(
    ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64
)


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def twin_address(kernel: LoadedKernel) -> int | None:
    """The address of the kernel's NumPy-model twin (`<symbol>_np` in the same
    library), found through dladdr; None when the backend made none."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except (OSError, AttributeError):
        return None
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    if not dladdr(kernel.address, ctypes.byref(info)) or not info.dli_sname:
        return None
    try:
        fn = getattr(kernel.keepalive, info.dli_sname.decode() + "_np")
    except AttributeError:
        return None
    return ctypes.cast(fn, ctypes.c_void_p).value


def _one_index(mine: Any, first: Any) -> bool:
    """Whether two indexes are one index, so that pandas aligns nothing and its answer
    has these labels: the same object, a view of it (pandas' `Index.is_`: a frame's
    columns each carry a view of its index), or two equal RangeIndexes (an O(1) test),
    with equal names either way. Equal indexes otherwise (an O(n) test) run pandas."""
    if mine is first:
        return True
    if mine.name != first.name or type(mine) is not type(first):
        return False
    if mine.is_(first):
        return True
    return type(mine).__name__ == "RangeIndex" and bool(mine.equals(first))


def _future_options() -> dict[str, Any] | None:
    """pandas' table of `future.*` options (read per call: `pd.get_option` costs
    ~10 us), or None where this pandas has no `future.distinguish_nan_and_na`."""
    try:
        from pandas._config.config import _global_config

        table = _global_config["future"]
        table["distinguish_nan_and_na"]
    except (ImportError, KeyError, TypeError):
        return None
    return table  # type: ignore[no-any-return]


def _nan_is_na(options: dict[str, Any] | None) -> bool:
    """Whether pandas turns a NaN that Arrow-backed float arithmetic produces into <NA>
    (pandas 3's `_arith_method`, unless `future.distinguish_nan_and_na` is set;
    pandas 2 keeps the NaN)."""
    return options is not None and options.get("distinguish_nan_and_na") is False


class _ArrowDeclined(Exception):
    """The Arrow adapter's guard refused the chunks: pandas runs."""


def _declined(*_args: Any) -> Any:
    raise _ArrowDeclined


class SeriesSite:
    """One fused Series site: guard, run the kernel of the operands' backing, wrap."""

    def __init__(self, kernel: LoadedKernel, fallback: Callable[..., Any], site_id: str) -> None:
        import numpy as np
        import pandas as pd
        import pyarrow as pa

        from ppy_arrow.runtime import ColumnSite

        self._np, self._pd, self._pa = np, pd, pa
        self.leaves = kernel.signature.leaves
        self.bool_out = kernel.signature.kind == "column_bool"
        self._arrow = ColumnSite(kernel, _declined, site_id)
        twin = twin_address(kernel)
        self._twin = _TWIN(twin) if twin else None
        self._keep = kernel.keepalive
        self._numpy_dtypes = {"a": np.dtype("float64"), "b": np.dtype("bool")}
        self._arrow_types = {"a": pa.float64(), "b": pa.bool_()}
        self._arrow_dtypes = {k: pd.ArrowDtype(t) for k, t in self._arrow_types.items()}
        self._np_dtype, self._arrow_dtype = np.dtype, pd.ArrowDtype
        # where each array operand and each scalar is among the arguments
        self._arrays_at = tuple(k for k, kind in enumerate(self.leaves) if kind != "s")
        self._scalars_at = tuple(k for k, kind in enumerate(self.leaves) if kind == "s")
        self._options = _future_options()
        self._make = series_maker(pd)
        self._result_dtype: dict[str, Any] = {}  # backing -> pandas' answer dtype
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

    def _guard(self, args: tuple[Any, ...]) -> tuple[str, Any, Any] | str:
        """(backing, index, name), or why the operands are not the kernel's."""
        if len(args) != len(self.leaves):
            return "arity"
        pd = self._pd
        backing = index = None
        names: list[Any] = []
        for kind, value in zip(self.leaves, args, strict=True):
            if kind == "s":
                if type(value) is not float and not (
                    type(value) is int and abs(value) <= EXACT_INT
                ):
                    return "scalar operand not a float"
                continue
            if type(value) is not pd.Series:
                return f"operand is {type(value).__name__}, not a pandas Series"
            if value.attrs or not value.flags.allows_duplicate_labels:
                return "attrs or flags that pandas propagates"
            if index is None:
                index = value.index
            elif not _one_index(value.index, index):
                return "indexes are not one index (pandas aligns)"
            dtype = value.dtype
            if isinstance(dtype, self._np_dtype) and dtype == self._numpy_dtypes[kind]:
                mine = "numpy"
            elif (
                isinstance(dtype, self._arrow_dtype)
                and dtype.pyarrow_dtype == self._arrow_types[kind]
            ):
                mine = "arrow"
            else:
                return f"dtype {dtype} is not the kernel's"
            if backing is not None and mine != backing:
                return "operands on different backings"
            backing = mine
            name = value.name
            if name is not None and not isinstance(name, str | int | self._np.integer):
                return "a name pandas compares by its own rules"
            names.append(name)
        first = names[0]
        return backing or "numpy", index, first if all(n == first for n in names) else None

    def _dtype(self, backing: str, args: tuple[Any, ...]) -> Any:
        """pandas' answer dtype on this backing, from its own answer on empty slices."""
        if backing not in self._result_dtype:
            empty = tuple(a.iloc[:0] if type(a) is self._pd.Series else a for a in args)
            try:
                self._result_dtype[backing] = getattr(self.fallback(*empty), "dtype", None)
            except Exception:  # pandas raises on these dtypes: it raises on the call too
                self._result_dtype[backing] = None
        return self._result_dtype[backing]

    def __call__(self, *args: Any) -> Any:
        guarded = self._guard(args)
        if isinstance(guarded, str):
            return self._fall(guarded, args)
        backing, index, name = guarded
        dtype = self._dtype(backing, args)
        call = self._numpy if backing == "numpy" else self._arrow_call
        out = call(args, dtype)
        if isinstance(out, str):
            return self._fall(out, args)
        self.fast += 1
        return self._make(out, index, name)

    def _numpy(self, args: tuple[Any, ...], dtype: Any) -> Any:
        np = self._np
        want = np.dtype("bool") if self.bool_out else np.dtype("float64")
        if self._twin is None:
            return "no NumPy-model kernel"
        if dtype != want:
            return f"pandas answers {dtype}"
        arrays = [args[k]._values for k in self._arrays_at]
        for values in arrays:
            if not values.flags.c_contiguous:
                return "values not contiguous"
        n = len(arrays[0])
        out = np.empty(n, want)
        table = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
        scal = (ctypes.c_double * max(1, len(self._scalars_at)))(
            *[float(args[k]) for k in self._scalars_at]
        )
        self._twin(table, scal, out.ctypes.data, n)
        return out

    def _arrow_call(self, args: tuple[Any, ...], dtype: Any) -> Any:
        pd = self._pd
        if not _nan_is_na(self._options):  # the kernel nulls the NaNs it produces
            return "pandas keeps the NaNs Arrow arithmetic produces"
        bool_numpy = self.bool_out and dtype == self._np.dtype("bool")
        want = self._arrow_dtypes["b" if self.bool_out else "a"]
        if dtype != want and not bool_numpy:
            return f"pandas answers {dtype}"
        operands = []
        for kind, value in zip(self.leaves, args, strict=True):
            if kind == "s":
                operands.append(value)
                continue
            chunked = value.array._pa_array
            if chunked.num_chunks != 1:
                return "not one Arrow chunk"
            operands.append(chunked.chunk(0))
        try:
            result = self._arrow(*operands)
        except _ArrowDeclined:
            return "the Arrow adapter declined the chunks"
        if bool_numpy:  # null tests and their logic: never null
            if result.null_count:
                return "a null in a NumPy bool answer"
            return result.to_numpy(zero_copy_only=False)
        return pd.arrays.ArrowExtensionArray(result)


def _backing(dtype: Any) -> str:
    return "arrow" if type(dtype).__name__ == "ArrowDtype" else "numpy"


def _describe_frame(frame: Any) -> tuple[Any, ...]:
    columns = ",".join(
        f"{name!r}:{dtype}:{_backing(dtype)}" for name, dtype in frame.dtypes.items()
    )
    return ("instance", "pandas", "pandas.DataFrame", columns, type(frame.index).__name__)


def _describe_series(series: Any) -> tuple[Any, ...]:
    dtype = series.dtype
    return ("instance", "pandas", "pandas.Series", str(dtype), _backing(dtype))


class PandasAdapter(RuntimeAdapter):
    """Columnar kernels over pandas Series (kinds `column` and `column_bool`)."""

    name: ClassVar[str] = "pandas"

    def describer(self, cls: type) -> Callable[[Any], tuple[Any, ...]] | None:
        """A call's signature of an exact DataFrame: its columns' names, dtypes and
        backings (NumPy or Arrow) and its index's class; of an exact Series, its dtype
        and backing. The compiler types them as the plugin's frame and Series (a
        constant column selection is a Series); each site still guards what it reads."""
        import pandas

        if cls is pandas.DataFrame:
            return _describe_frame
        if cls is pandas.Series:
            return _describe_series
        return None

    def kernel_site(
        self, kernel: LoadedKernel, fallback: Callable[..., Any], site_id: str
    ) -> SeriesSite:
        """A `SeriesSite` around `kernel` (see the module docstring)."""
        return SeriesSite(kernel, fallback, site_id)

    def accepts(self, signature: KernelSignature) -> str | None:
        """Columnar kernels without library loops; leaves `a`, `b`, `s`."""
        if signature.kind not in COLUMN_KINDS:
            return f"the pandas adapter calls columnar kernels, not {signature.kind!r}"
        if signature.loops:
            return "the pandas adapter resolves no library loops"
        return None


def create_adapter() -> PandasAdapter:
    """Entry point ``ppy.runtimes: pandas``."""
    return PandasAdapter()


__all__ = ["PandasAdapter", "SeriesSite", "create_adapter"]
