"""Row reductions (`KernelSpec.along`): the reduction entry, float64 and float32, run
once per row by the dispatcher (ABI kinds ``sum_rows`` ... ``min_rows_keep``), equals
NumPy's `np.sum/max/min(x, axis=-1)` bit for bit at every pairwise boundary (rows of
1..9, 127..129, 255..257, 1000 elements; rows of one element are NumPy's, faster
there); float32 sums accumulate in float32."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from conftest import make_site
from ppy_llvm import KernelBuilder, KernelSpec, compile_specs

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

LENGTHS = [*range(1, 10), 127, 128, 129, 255, 256, 257, 1000]
NUMPY = {"add": np.sum, "max": np.max, "min": np.min}


def _spec(reduce: str, dtype: str, keep: bool, product: bool = False) -> KernelSpec:
    b = KernelBuilder()
    x = b.leaf()
    leaves = [x]
    if product:  # a tree under the reduction: sum(x * y)
        leaves.append(b.leaf())
    result = b.op("mul", x, leaves[1]) if product else x
    along = "rows_keep" if keep else "rows"
    return KernelSpec(tuple(b.leaves), tuple(b.nodes), result, reduce, False, dtype, along=along)  # type: ignore[arg-type]


CASES = [
    (reduce, dtype, keep, product)
    for reduce in NUMPY
    for dtype in ("f64", "f32")
    for keep in (False, True)
    for product in (False, True)
    if not (product and reduce != "add")
]


@pytest.fixture(scope="module")
def row_sites() -> dict[tuple[str, str, bool, bool], Any]:
    from ppy_core.runtime.abi import kernel_address

    specs = [_spec(*case) for case in CASES]
    out = {}
    for case, kernel in zip(CASES, compile_specs(specs, "rows"), strict=True):
        addr, lib = kernel_address(kernel)  # type: ignore[misc]
        sig = kernel.signature
        reduce, _, keep, product = case
        ref = _reference(NUMPY[reduce], keep, product)
        out[case] = make_site(addr, sig.kind, sig.leaves, sig.loops, ref, str(case), lib)
    return out


def same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    """Every bit equal (conftest's `same_bits` reads 8-byte elements only)."""
    view = {4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
    return bool(np.array_equal(got.view(view), want.view(view)))


def _reference(fn: Any, keep: bool, product: bool) -> Any:
    if product:
        return lambda x, y: fn(x * y, axis=-1, keepdims=keep)
    return lambda x: fn(x, axis=-1, keepdims=keep)


def test_the_signature_names_the_rows() -> None:
    from ppy_llvm._build import signature_of

    assert signature_of(_spec("max", "f32", True)).kind == "max_rows_keep"
    assert signature_of(_spec("add", "f64", False)).kind == "sum_rows"
    assert '"along": "rows"' in _spec("add", "f64", False).to_json()
    assert _spec("add", "f64", False).key() != _spec("add", "f64", True).key()


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_rows_bitwise(row_sites: dict[Any, Any], case: tuple[str, str, bool, bool]) -> None:
    reduce, dtype, keep, product = case
    site, ref = row_sites[case], _reference(NUMPY[reduce], keep, product)
    rng = np.random.default_rng(len(str(case)))
    np_dtype = np.float32 if dtype == "f32" else np.float64
    for n in LENGTHS:
        args = [
            (rng.standard_normal((3, 2, n)) * 10.0 ** rng.uniform(-3, 3, (3, 2, n))).astype(
                np_dtype
            )
            for _ in range(2 if product else 1)
        ]
        got, want = site(*args), ref(*args)
        assert (got.dtype, got.shape) == (want.dtype, want.shape), (case, n)
        assert same_bits(got, want), (case, n)
    # rows of one element are NumPy's: it copies them faster than a call a row (issue 28)
    assert site.stats()["fast"] == len(LENGTHS) - 1
    assert site.stats()["fallback"] == {"guard: shape": 1}
