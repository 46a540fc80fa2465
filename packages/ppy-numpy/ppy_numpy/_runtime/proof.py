"""Proofs, per NumPy build and CPU, that a kernel gives NumPy's own bits.

What NumPy computes for a transcendental depends on its build and on the CPU's SIMD
features, so a backend that calls NumPy's inner loops from a fused kernel asks this
adapter (`NumpyAdapter.prove`, through the core's kernel ABI) to run each kernel
against NumPy itself: random and special inputs at many lengths and offsets
("wide"), a dense sample of about two million values over the float64 range where
exponentials change, every bit pattern class and its edges, FP flags included
("dense": for a kernel that computes a function inline instead of calling NumPy's
loop; "dense32" the same over float32 for a float32 kernel), or NaN-laden data for
whether a reduction's NaN result keeps NumPy's bits ("nan"). The backend caches the
verdicts under `numpy_build_key()`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ppy_core.runtime.abi import Expression, ProofCase, kernel_address

LENGTHS = (*range(1, 34), 63, 64, 65, 255, 256, 257, 511, 1000, 4099)
OFFSETS = (0, 1, 2, 3)
NAN_LENGTHS = (*range(1, 41), 127, 128, 129, 255, 256, 257, 1000, 1031, 4099, 100_003)
SEEDS = {"wide": 20251129, "nan": 20251130, "dense": 20251201, "dense32": 20251202}
#: "dense" flag check: this many runs of short stretches under np.errstate(all="raise")
FLAG_RUNS = 3000


def numpy_build_key() -> str:
    """NumPy's version plus its umath module's size and mtime."""
    import numpy
    from numpy._core import _multiarray_umath as umath

    st = os.stat(umath.__file__)
    return f"numpy={numpy.__version__}:{st.st_size}:{int(st.st_mtime)}"


def special_values() -> Any:
    """Edge inputs: signed zeros, infinities, NaNs, subnormals, domain and overflow edges."""
    import numpy as np

    return np.array(
        [
            *(0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324),
            *(2.2250738585072014e-308, 1e-310, 1.0, -1.0, 0.5, -0.5, 1 - 2**-53, 1 + 2**-52),
            *(np.pi, -np.pi, np.pi / 2, 1e300, -1e300, 709.78, 709.79, -745.2, -745.1),
            *(1e22, 2.0**1023, 1e-20, 710.5, -708.4, 0.7, 1.5, 20.0, -20.0, 3e7, 1e16),
        ]
    )


def wide_inputs(rng: Any, n: int) -> Any:
    """Random magnitudes over the exponent range with specials sprinkled in."""
    import numpy as np

    x = rng.uniform(-10, 10, n)
    wide = rng.standard_normal(n) * 10.0 ** rng.uniform(-30, 30, n)
    x = np.where(rng.random(n) < 0.3, wide, x)
    sp = special_values()
    picks = rng.random(n) < 0.15
    x[picks] = sp[rng.integers(0, len(sp), int(picks.sum()))]
    return x


def dense_inputs(rng: Any) -> Any:
    """About two million float64 values, shuffled: uniform over [-750, 750] (every
    table interval of a 2^(k/N) reduction many times over), the overflow and
    subnormal-result edges of exp, the midpoints between multiples of ln2/128 (where
    a reduction's rounding flips) +- a few ulps, magnitudes around 2^-54 and 512,
    subnormal and tiny inputs, random bit patterns (NaN payloads, infinities) and
    `special_values`."""
    import numpy as np

    step = np.log(2.0) / 128
    mid = (rng.integers(-140_000, 132_000, 200_000) + 0.5) * step
    mid = (mid.view(np.int64) + rng.integers(-4, 5, mid.size)).view(np.float64)
    sign = np.where(rng.random(300_000) < 0.5, -1.0, 1.0)
    parts = [
        rng.uniform(-750.0, 750.0, 1_000_000),
        rng.uniform(-746.0, -707.0, 200_000),
        rng.uniform(700.0, 710.0, 100_000),
        mid,
        sign[:100_000] * 2.0 ** rng.uniform(-60.0, -48.0, 100_000),
        sign[100_000:200_000] * rng.uniform(510.0, 514.0, 100_000),
        sign[200_000:] * 10.0 ** rng.uniform(-323.5, -290.0, 100_000),
        rng.integers(0, 2**64, 200_000, dtype=np.uint64, endpoint=False).view(np.float64),
        np.tile(special_values(), 100),
    ]
    x = np.concatenate(parts)
    return x[rng.permutation(x.size)]


def special_values32() -> Any:
    """float32 edge inputs of exp: signed zeros, infinities, quiet and signalling NaNs,
    subnormals, float32's extremes, and NumPy's float32 exp cut-offs with their
    neighbours (88.72283935546875 and -103.97208404541015625, where it returns inf / 0
    and sets the flag itself)."""
    import numpy as np

    edges = np.array([88.72283935546875, -103.97208404541015625, 88.0, -87.33654, -87.0])
    edges32 = edges.astype(np.float32)
    near = np.concatenate(
        [np.nextafter(edges32, np.float32(np.inf)), np.nextafter(edges32, np.float32(-np.inf))]
    )
    bits = np.array(
        [
            *(0x7FC00000, 0xFFC00000, 0x7FA00000, 0xFFA00001, 0x7FC0ABCD, 0x00000001),
            *(0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000),
            0xFF800000,
        ],
        dtype=np.uint32,
    ).view(np.float32)
    plain = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-30, -1e-30, 20.0, -20.0, 1e10])
    return np.concatenate([edges32, near, bits, plain.astype(np.float32)])


def dense_inputs32(rng: Any) -> Any:
    """About 1.2 million float32 values, shuffled: uniform over [-110, 95] (beyond both
    cut-offs), the subnormal-result and overflow edges, the midpoints between multiples
    of ln2 (where the reduction's rounding to an integer flips) +- a few ulps, tiny and
    subnormal magnitudes, random bit patterns (NaN payloads, signalling NaNs,
    infinities) and `special_values32`."""
    import numpy as np

    mid = ((rng.integers(-151, 129, 100_000) + 0.5) * np.log(2.0)).astype(np.float32)
    mid = (mid.view(np.int32) + rng.integers(-4, 5, mid.size).astype(np.int32)).view(np.float32)
    sign = np.where(rng.random(100_000) < 0.5, -1.0, 1.0)
    parts = [
        rng.uniform(-110.0, 95.0, 600_000),
        rng.uniform(-104.5, -86.0, 150_000),
        rng.uniform(87.5, 89.0, 50_000),
        sign * 2.0 ** rng.uniform(-149.0, -10.0, 100_000),
    ]
    x = np.concatenate(
        [
            *(p.astype(np.float32) for p in parts),
            mid,
            rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32),
            np.tile(special_values32(), 100),
        ]
    )
    return x[rng.permutation(x.size)]


def nan_inputs(rng: Any, n: int) -> tuple[Any, Any]:
    """Arrays whose products hold NaNs of both signs and several payloads (and inf*0)."""
    import numpy as np

    payloads = np.array(
        [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF800000000ABCD, 0xFFF80000DEAD0000],
        dtype=np.uint64,
    ).view(np.float64)
    x, y = rng.standard_normal(n), rng.uniform(0.5, 1.5, n)
    k = int(rng.integers(1, 6))
    x[rng.integers(0, n, k)] = payloads[rng.integers(0, len(payloads), k)]
    if rng.random() < 0.3:
        x[rng.integers(0, n)], y[rng.integers(0, n)] = np.inf, 0.0
    return x, y


def evaluate(expression: Expression, leaves: Sequence[Any]) -> Any:
    """The ABI's proof expression computed by NumPy itself."""
    import numpy as np

    if isinstance(expression, int):
        return leaves[expression]
    if isinstance(expression, float):
        return expression
    op, *operands = expression
    args = [evaluate(operand, leaves) for operand in operands]
    named: dict[str, Callable[..., Any]] = {
        "add": lambda a, b: a + b,
        "mul": lambda a, b: a * b,
        "sum": np.sum,
        "prod": np.prod,
    }
    from ppy_numpy._runtime import resolve_ufunc

    function = named.get(op) or resolve_ufunc(np, op)
    return function(*args)


def run_cases(cases: Sequence[ProofCase]) -> dict[str, str]:
    """``{case name: "ok" | the first reason not}``: every case of a name must pass."""
    import numpy as np

    from ppy_numpy._runtime import make_site

    rngs = {kind: np.random.default_rng(seed) for kind, seed in SEEDS.items()}
    verdict: dict[str, str] = {}

    def unknown(case: ProofCase) -> str:
        return "" if case.inputs in rngs else f"unknown proof inputs {case.inputs!r}"

    with np.errstate(all="ignore"):
        for case, found in loaded_cases(cases, verdict, unknown):
            sig = case.kernel.signature
            try:
                site = make_site(
                    found[0],
                    sig.kind,
                    sig.leaves,
                    sig.loops,
                    lambda *a: None,
                    f"proof:{case.name}",
                    found[1],
                    nan_ok=case.inputs == "nan",
                )
            except (LookupError, AttributeError, TypeError) as exc:
                verdict[case.name] = f"no float64 loop: {exc}"
                continue
            check = {"nan": _check_nan, "dense": _check_dense, "dense32": _check_dense32}.get(
                case.inputs, _check_wide
            )
            verdict[case.name] = check(site, case.expression, rngs[case.inputs]) or "ok"
    return verdict


def loaded_cases(
    cases: Sequence[ProofCase], verdict: dict[str, str], refuse: Callable[[ProofCase], str]
) -> Iterator[tuple[ProofCase, tuple[int, Any]]]:
    """The cases whose name has not failed yet, each with its kernel's address. A case
    `refuse` gives a reason for (asked before its kernel is loaded), or whose kernel
    library does not load, fails its name in `verdict` instead. Lazy: a verdict the
    caller records for a yielded case's name skips that name's later cases."""
    for case in cases:
        if verdict.get(case.name, "ok") != "ok":
            continue
        reason = refuse(case)
        if not reason:
            found = kernel_address(case.kernel)
            if found is not None:
                yield case, found
                continue
            reason = "kernel library failed to load"
        verdict[case.name] = reason


def _check_wide(site: Any, expression: Expression, rng: Any) -> str:
    import numpy as np

    for n in LENGTHS:
        for off in OFFSETS:
            buf_x, buf_y = wide_inputs(rng, n + off), np.abs(wide_inputs(rng, n + off)) + 0.25
            x, y = buf_x[off:], buf_y[off:]
            got = site(x, y)
            want = evaluate(expression, (x, y))
            if got is None:
                return f"fast path did not run at n={n}"
            if not np.array_equal(got.view(np.uint64), want.view(np.uint64)):
                i = int(np.flatnonzero(got.view(np.uint64) != want.view(np.uint64))[0])
                return f"bits differ at n={n} offset={off} x={x[i]!r}: {got[i]!r} != {want[i]!r}"
    return ""


def _check_dense(site: Any, expression: Expression, rng: Any) -> str:
    """`dense_inputs` in one call and misaligned, then short stretches of them under
    np.errstate(all="raise"): the kernel must raise (fall back) exactly where NumPy does."""
    import numpy as np

    x = dense_inputs(rng)
    y = np.abs(wide_inputs(rng, x.size)) + 0.25
    for off in (0, 1, 3):
        got, want = site(x[off:], y[off:]), evaluate(expression, (x[off:], y[off:]))
        if got is None:
            return "fast path did not run on the dense sample"
        if not np.array_equal(got.view(np.uint64), want.view(np.uint64)):
            i = int(np.flatnonzero(got.view(np.uint64) != want.view(np.uint64))[0])
            xi = x[off + i]
            return f"bits differ on the dense sample at x={xi!r}: {got[i]!r} != {want[i]!r}"
    with np.errstate(all="raise"):
        for _ in range(FLAG_RUNS):
            n = int(rng.integers(1, 40))
            at = int(rng.integers(0, x.size - n))
            xs, ys = x[at : at + n], y[at : at + n]
            try:
                evaluate(expression, (xs, ys))
                numpy_raises = False
            except FloatingPointError:
                numpy_raises = True
            if (site(xs, ys) is None) != numpy_raises:
                return f"FP flags differ from NumPy's on {xs[:8].tolist()}"
    return ""


def _check_dense32(site: Any, expression: Expression, rng: Any) -> str:
    """`dense_inputs32` against NumPy's float32 answer: where no NaN comes out, the same
    bits in one call and misaligned (a float32 site answers a NaN result from NumPy
    itself); then short stretches under np.errstate(all="raise"): the site must fall
    back exactly where NumPy raises or a NaN comes out."""
    import numpy as np

    x = dense_inputs32(rng)
    y = (np.abs(wide_inputs(rng, x.size)) + 0.25).astype(np.float32)
    want_all = evaluate(expression, (x, y))
    keep = ~np.isnan(want_all)
    xs, ys = x[keep], y[keep]
    for off in (0, 1, 3):
        got, want = site(xs[off:], ys[off:]), evaluate(expression, (xs[off:], ys[off:]))
        if got is None:
            return "fast path did not run on the float32 sample"
        if got.dtype != want.dtype or not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
            i = int(np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))[0])
            return f"float32 bits differ at x={xs[off + i]!r}: {got[i]!r} != {want[i]!r}"
    with np.errstate(all="raise"):
        for _ in range(FLAG_RUNS):
            n = int(rng.integers(1, 40))
            at = int(rng.integers(0, x.size - n))
            xr, yr = x[at : at + n], y[at : at + n]
            try:
                numpy_falls = bool(np.isnan(evaluate(expression, (xr, yr))).any())
            except FloatingPointError:
                numpy_falls = True
            if (site(xr, yr) is None) != numpy_falls:
                return f"FP flags differ from NumPy's on {xr[:8].tolist()}"
    return ""


def _check_nan(site: Any, expression: Expression, rng: Any) -> str:
    import numpy as np

    for n in NAN_LENGTHS:
        for _ in range(12):
            x, y = nan_inputs(rng, n)
            got, want = site(x, y), evaluate(expression, (x, y))
            if got is None:
                return f"the kernel's result was refused at n={n}"
            if np.float64(got).view(np.uint64) != np.float64(want).view(np.uint64):
                return f"NaN bits differ at n={n}: {float(got)!r} != {float(want)!r}"
    return ""


__all__ = [
    "dense_inputs",
    "dense_inputs32",
    "evaluate",
    "loaded_cases",
    "numpy_build_key",
    "run_cases",
    "special_values",
    "special_values32",
    "wide_inputs",
]
