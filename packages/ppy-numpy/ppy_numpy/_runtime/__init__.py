"""Runtime of ppy-numpy: the `numpy` runtime adapter (no compiler imports).

`NumpyAdapter` is registered as ``ppy.runtimes: numpy``: the core's binder hands
it a kernel loaded through the kernel ABI (`ppy_core.runtime.abi`), whatever
backend compiled it, and gets back a `Site` of the C extension ``_dispatch``: the
guard (exact float64 C-contiguous ndarrays, float scalars), the kernel call with
NumPy's own inner loops resolved by ufunc name, the FP-flag check against
`np.geterr()`, threads, counters; the site's Python path when the guard fails.
`make_site` builds one from a kernel's signature fields.
"""

from __future__ import annotations

from ppy_core.runtime.abi import ROWS_SUFFIX, SPLAT_SUFFIX, SWAPS_SUFFIX, address_in
from ppy_core.runtime.adapter import RuntimeAdapter

TYPE_CHECKING = False  # a cached start imports no `typing` extras, no ABI dataclasses
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, ClassVar

    from ppy_core.runtime.abi import KernelSignature, LoadedKernel, ProofCase

__all__ = [
    "PAR_THRESHOLD",
    "NumpyAdapter",
    "create_adapter",
    "make_site",
    "num_threads",
    "resolve_ufunc",
    "set_num_threads",
]

#: elements from which a kernel is split over threads. Measured on the 2-core machine
#: of packages/ppy-numpy/README.md with `python benchmarks/numpy_fusion.py` (its table
#: "Where a second thread pays off"): the first size where 2 threads beat 1 by 10% or
#: more, there and above. Waking the second thread costs tens of µs there (a VM), so
#: memory-bound loops pay off late. `prod` stays serial (its order is sequential).
#: Reductions (benchmarks/reductions.py --threads, benchmarks/results/reductions.md: one vs
#: two, quiet machine): a sum of 5e5 took 0.86x NumPy's time on one thread, 1.01x on
#: two; from 1e6 two win. A max/min (one vrange a vector) of 1e6 float64 took 0.96x
#: on one, 1.58x on two, float32 rows of 1e6 0.88x vs 1.34x; from 4e6 two win or tie.
PAR_THRESHOLD: dict[str, int] = {
    "map": 200_000,
    "map_bool": 200_000,
    "sum": 1_000_000,
    "mean": 1_000_000,
    "max": 4_000_000,
    "min": 4_000_000,
    "prod": -1,
    # rows along the last axis split by rows (as memory-bound as a whole reduction)
    **{
        f"{op}_{extent}": 1_000_000 if op == "sum" else 4_000_000
        for op in ("sum", "max", "min")
        for extent in ("rows", "rows_keep")
    },
}
#: kernels that call NumPy loops (transcendentals) are compute-bound: split earlier
PAR_THRESHOLD_LOOPS = 10_000
#: NumPy loops as cheap as arithmetic (memory-bound): they keep the kind's threshold
#: (measured with benchmarks/numpy_dtypes.py: clip at 1e4 over 2 threads took 2.9x NumPy)
CHEAP_LOOPS = frozenset({"clip", "fmax", "fmin", "sign"})
#: a store's form (`RuntimeAdapter.store_site`) -> the C Site's `store` (_store.h)
STORES: dict[str, int] = {"": 0, "=": 1, "item": 2, "name": 3}


def make_site(
    address: int,
    kind: str,
    leaves: str,
    loops: Sequence[tuple[str, str]],
    fallback: Callable[..., Any],
    site_id: str,
    keepalive: object = None,
    *,
    nan_ok: bool = False,
    store: str = "",
    views: Sequence[Any] | None = None,
    splat: tuple[int, int] = (0, 0),
    swaps: tuple[int, ...] = (),
) -> Any:
    """A `_dispatch.Site`; loops are ``(numpy ufunc name, "d->d" | "dd->d" | "ddd->d")``. With
    `nan_ok` a reduction's NaN result stands (its NaN bits proven NumPy's) when the
    run was serial; otherwise NumPy recomputes a NaN result. A `store` (see
    `NumpyAdapter.store_site`) makes a site writing its statement's target; `views`
    (`RuntimeAdapter.takes_views`) the kernel leaves the site takes from its arguments;
    `splat` the addresses of the kernel's entries reading row-broadcast operands, per
    row and over a run of rows (`entry_address`; 0 where it has none);
    `swaps` the kernel's `swaps_table`."""
    import numpy

    from . import _dispatch

    table = tuple((resolve_ufunc(numpy, name), sig) for name, sig in loops)
    threshold = PAR_THRESHOLD[kind]
    if any(name not in CHEAP_LOOPS for name, _ in loops) and threshold >= 0:
        threshold = min(threshold, PAR_THRESHOLD_LOOPS)

    site = _dispatch.Site(
        kernel=address,
        kind=kind,
        leaves=leaves,
        fallback=fallback,
        site_id=site_id,
        loops=table,
        keepalive=keepalive,
        par_threshold=threshold,
        nan_ok=nan_ok,
        store=STORES[store],
        views=view_table(views),
        splat=splat[0],
        rows=splat[1],
        swaps=swaps,
    )
    if not any(":" in name for name, _ in loops):
        return site
    from .foreign import guard  # another library's loops: its error state decides

    return guard(site, loops)


#: ufuncs NumPy's namespace shows only through a function wrapper (`np.clip`)
UMATH_ONLY = frozenset({"clip"})


def view_table(views: Sequence[Any] | None) -> tuple[tuple[Any, ...], ...] | None:
    """The C Site's `views` from the manifest's: per kernel leaf (its argument, the
    basic index taken of it as a tuple of slices, ints and None, or None: the argument),
    and where the index holds loop counters (`{"arg": j, "add": c}`: argument j, an int,
    plus c) their (position, argument, offset), the index holding 0 there."""
    if not views:
        return None
    table: list[tuple[Any, ...]] = []
    for arg, index in views:
        if index is None:
            table.append((int(arg), None))
            continue
        counters = tuple(
            (at, int(part["arg"]), int(part["add"]))
            for at, part in enumerate(index)
            if isinstance(part, dict)
        )
        parts = tuple(0 if isinstance(p, dict) else _index_part(p) for p in index)
        table.append((int(arg), parts, counters) if counters else (int(arg), parts))
    return tuple(table)


def _index_part(part: Any) -> Any:
    """One item of a view's index: [lo, hi, step] a slice, an int itself, None a new axis."""
    return slice(*part) if isinstance(part, list) else part


def resolve_ufunc(numpy: Any, name: str) -> Any:
    """The ufunc a kernel's loop names: NumPy's by bare name (``sin``), another
    library's by ``module:attr`` (``scipy.special:erf``), that module imported only
    now, when a kernel names it. LookupError when it is not there."""
    import importlib

    module, sep, attr = name.partition(":")
    if not sep:
        if name in UMATH_ONLY:  # `np.clip` is a Python function around this ufunc
            return getattr(importlib.import_module("numpy._core.umath"), name)
        return getattr(numpy, name)
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise LookupError(f"loops: no ufunc {name!r} ({exc})") from exc


def _ufunc_name(name: str) -> bool:
    """``sin`` or ``dotted.module:attr``."""
    module, sep, attr = name.partition(":")
    if not sep:
        return name.isidentifier()
    return attr.isidentifier() and all(p.isidentifier() for p in module.split("."))


def num_threads() -> int:
    """Threads a large kernel uses (``PPY_NUM_THREADS``, default: cores)."""
    from . import _dispatch

    return int(_dispatch.num_threads())


def set_num_threads(n: int) -> None:
    """Change the thread count for this process."""
    from . import _dispatch

    _dispatch.set_num_threads(int(n))


def _element_kinds(numpy: Any) -> dict[Any, str]:
    """Native-order dtypes -> the IR's element kinds (another order or kind is its
    dtype string, which no IR type has: typed Unknown)."""
    names = {
        "float64": "f64",
        "float32": "f32",
        "float16": "f16",
        "int64": "i64",
        "int32": "i32",
        "int16": "i16",
        "int8": "i8",
        "uint8": "u8",
        "uint32": "u32",
        "bool": "i1",
        "complex128": "c128",
        "complex64": "c64",
    }
    return {numpy.dtype(name): kind for name, kind in names.items()}


def python_describer(kinds: dict[Any, str]) -> Callable[[Any], tuple[Any, ...]]:
    """What a signature says of an exact ndarray (`NumpyAdapter.describer`): its element
    kind (`kinds`, else its dtype's str), rank, layout class and writeability. The C
    extension's `_dispatch.describe` gives the same tuples (tested against this)."""

    def describe(a: Any) -> tuple[Any, ...]:
        flags = a.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        element = kinds.get(a.dtype) or a.dtype.str
        return ("array", "numpy", "numpy.ndarray", element, a.ndim, layout, flags.writeable)

    return describe


class NumpyAdapter(RuntimeAdapter):
    """Kernels over NumPy arrays: any kind of the ABI, NumPy's loops by ufunc name."""

    name: ClassVar[str] = "numpy"
    #: the kernels' element types (`_store.h` guards the target's dtype against them)
    store_elements: ClassVar[frozenset[str]] = frozenset({"f64", "f32", "i64", "i32"})
    #: views are taken in C from exact ndarrays (`_dispatch.c`'s take_leaves)
    takes_views: ClassVar[bool] = True

    def describer(self, cls: type) -> Callable[[Any], tuple[Any, ...]] | tuple[Any, ...] | None:
        """An exact `numpy.ndarray` by dtype, rank, layout and writeability; a NumPy
        scalar by its type (typed as the plugin types `np.float64`: a float the sites
        guard as NumPy's); ndarray subclasses (`np.matrix`, masked arrays) are not
        described (they stay their class: the generic function answers for them)."""
        import numpy

        if cls is not numpy.ndarray:
            if issubclass(cls, numpy.generic) and cls.__module__ == "numpy":
                return ("instance", "numpy", f"numpy.{cls.__name__}")
            return None
        kinds = _element_kinds(numpy)
        try:
            from . import _dispatch
        except ImportError:  # the extension is not built: the same answer in Python
            return python_describer(kinds)
        _dispatch.set_element_kinds(kinds)
        return _dispatch.describe  # in C: a dispatcher describes its arrays every call

    def kernel_site(
        self,
        kernel: LoadedKernel,
        fallback: Callable[..., Any],
        site_id: str,
        views: Sequence[Any] | None = None,
    ) -> Any:
        """A `_dispatch.Site` around `kernel` (see the module docstring)."""
        return _site(kernel, fallback, site_id, "", views)

    def store_site(
        self,
        kernel: LoadedKernel,
        fallback: Callable[..., Any],
        site_id: str,
        store: str,
        views: Sequence[Any] | None = None,
    ) -> Any:
        """A `_dispatch.Site` writing its statement's target (``_store.h``): straight
        into the target view when no operand overlaps it, else through a temporary."""
        if store not in STORES or not store:
            raise ValueError(f"store {store!r} is not one of {sorted(STORES)[1:]}")
        return _site(kernel, fallback, site_id, store, views)

    def accepts(self, signature: KernelSignature) -> str | None:
        """Every kind; loops by the name of a NumPy ufunc or ``module:attr`` of another
        library's (checked without importing: `make_site` refuses an unknown one when
        the site is bound)."""
        bad = [name for name, _ in signature.loops if not _ufunc_name(name)]
        return f"loops {bad} are not ufunc names" if bad else None

    def build_key(self) -> str:
        """NumPy's version plus its umath extension's size and mtime."""
        from ppy_numpy._runtime.proof import numpy_build_key

        return numpy_build_key()

    def prove(self, cases: Sequence[ProofCase]) -> dict[str, str]:
        """Each case's kernel against NumPy's own answer (`proof.run_cases`; those on
        complex128 inputs `proof_complex.run_complex_cases`)."""
        from ppy_numpy._runtime.proof import run_cases
        from ppy_numpy._runtime.proof_complex import COMPLEX, run_complex_cases

        mine = [c for c in cases if c.inputs == COMPLEX]
        verdict = run_complex_cases(mine) if mine else {}
        return verdict | run_cases([c for c in cases if c.inputs != COMPLEX])


def _site(
    kernel: LoadedKernel,
    fallback: Callable[..., Any],
    site_id: str,
    store: str = "",
    views: Sequence[Any] | None = None,
) -> Any:
    """A `_dispatch.Site` from a loaded kernel's signature (`store` "" for a fresh result)."""
    sig = kernel.signature
    key = (kernel.address, getattr(sig, "symbol", ""))
    entries = _ENTRIES.get(key)
    if entries is None or entries[0] is not kernel.keepalive:  # once per kernel
        splat = (entry_address(kernel, SPLAT_SUFFIX), entry_address(kernel, ROWS_SUFFIX))
        entries = _ENTRIES[key] = (kernel.keepalive, splat, swaps_table(kernel))
    return make_site(
        kernel.address,
        sig.kind,
        sig.leaves,
        sig.loops,
        fallback,
        site_id,
        kernel.keepalive,
        nan_ok=sig.nan_ok,
        store=store,
        views=views,
        splat=entries[1],
        swaps=entries[2],
    )


#: (a kernel's address, its symbol) -> (its library's handle, its further entries'
#: addresses, its swaps table): looked up in the library once per kernel, not once per
#: site (a module of a thousand sites shares a few kernels); the handle is kept, so
#: the address stays the kernel's
_ENTRIES: dict[tuple[int, str], tuple[Any, tuple[int, int], tuple[int, ...]]] = {}


def entry_address(kernel: LoadedKernel, suffix: str) -> int:
    """The address of `kernel`'s entry `suffix` in its library, or 0 where it has none
    (one dlsym, `abi.address_in`: a module of hundreds of kernels binds each site's)."""
    import ctypes

    symbol = getattr(kernel.signature, "symbol", "")
    if not symbol or not isinstance(kernel.keepalive, ctypes.CDLL):
        return 0
    return address_in(kernel.keepalive, symbol + suffix)


def swaps_table(kernel: LoadedKernel) -> tuple[int, ...]:
    """How NumPy's temporary elision meets `kernel` (ppy-llvm's
    `_kernel_map.elision_table`): () never; else its flags, then per swap node its
    left operand's array leaf and its right side's array leaves (bits)."""
    address = entry_address(kernel, SWAPS_SUFFIX)
    if not address:
        return ()
    import ctypes

    fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(address)
    out = (ctypes.c_int64 * 65)()
    return tuple(out[: fn(out)])


def create_adapter() -> NumpyAdapter:
    """Entry point ``ppy.runtimes: numpy``."""
    return NumpyAdapter()
