"""Runtime of ppy-numpy: guarded dispatch of fused kernels (no compiler imports).

`Site` (from the C extension ``_dispatch``) holds a kernel address, its
signature, the Python fallback and a site id; `make_site` builds one from a
kernel's signature fields, resolving NumPy's inner loops by ufunc name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["PAR_THRESHOLD", "make_site", "num_threads", "set_num_threads"]

#: elements from which a kernel is split over threads. Measured on the 2-core machine
#: of packages/ppy-numpy/README.md with `python benchmarks/numpy_fusion.py` (its table
#: "Where a second thread pays off"): the first size where 2 threads beat 1 by 10% or
#: more, there and above. Waking the second thread costs tens of µs there (a VM), so
#: memory-bound loops pay off late. `prod` stays serial (its order is sequential).
PAR_THRESHOLD: dict[str, int] = {
    "map": 200_000,
    "map_bool": 200_000,
    "sum": 500_000,
    "mean": 500_000,
    "max": 500_000,
    "min": 500_000,
    "prod": -1,
}
#: kernels that call NumPy loops (transcendentals) are compute-bound: split earlier
PAR_THRESHOLD_LOOPS = 10_000


def make_site(
    address: int,
    kind: str,
    leaves: str,
    loops: Sequence[tuple[str, str]],
    fallback: Callable[..., Any],
    site_id: str,
    keepalive: object = None,
    nan_ok: bool = False,
) -> Any:
    """A `_dispatch.Site`; loops are ``(numpy ufunc name, "d->d" | "dd->d")``. With
    `nan_ok` a reduction's NaN result stands (its NaN bits proven NumPy's) when the
    run was serial; otherwise NumPy recomputes a NaN result."""
    import numpy

    from . import _dispatch

    table = tuple((getattr(numpy, name), sig) for name, sig in loops)
    threshold = PAR_THRESHOLD[kind]
    if loops and threshold >= 0:
        threshold = min(threshold, PAR_THRESHOLD_LOOPS)
    return _dispatch.Site(
        address, kind, leaves, fallback, site_id, table, keepalive, threshold, nan_ok
    )


def num_threads() -> int:
    """Threads a large kernel uses (``PPY_NUM_THREADS``, default: cores)."""
    from . import _dispatch

    return int(_dispatch.num_threads())


def set_num_threads(n: int) -> None:
    """Change the thread count for this process."""
    from . import _dispatch

    _dispatch.set_num_threads(int(n))
