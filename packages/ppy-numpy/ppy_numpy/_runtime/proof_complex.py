"""The proof, per NumPy build and CPU, of kernels reading complex128 arrays.

A kernel that computes ``abs(z)`` of a complex128 array itself (ppy-llvm's
`_complex`: NumPy's SIMD hypot, whose fma and NaN choices are its build's) is run
against NumPy on complex inputs ("complex" cases): random magnitudes over the whole
exponent range in either part, each part now and then a special value (signed zeros,
infinities, NaNs with payloads and signalling ones, subnormals, the overflow edge),
at many lengths and offsets, C and F ordered. The kernel is called with (z, y), y a
float64 array of z's shape, as every proof kernel is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ppy_core.runtime.abi import Expression, ProofCase

COMPLEX = "complex"  # the ProofCase inputs this module runs
SEED = 20251203
_PAYLOADS = (0x7FF800000000ABCD, 0xFFF80000DEAD0000, 0x7FF0000000000001, 0xFFF8000000000000)


def complex_specials() -> Any:
    """Edge values of one part: `proof.special_values`, NaNs with payloads, and
    magnitudes whose squares overflow or underflow."""
    import numpy as np

    from .proof import special_values

    payloads = np.array(_PAYLOADS, dtype=np.uint64).view(np.float64)
    edges = np.array([1.7976931348623157e308, 1e154, 1e-154, 1e-162, -1.4e308, 3.0, 4.0])
    return np.concatenate([special_values(), payloads, edges])


def complex_inputs(rng: Any, n: int) -> Any:
    """n complex128 values: each part wide-ranging with specials sprinkled in apart."""
    import numpy as np

    from .proof import wide_inputs

    special = complex_specials()
    parts = []
    for _ in range(2):
        x = wide_inputs(rng, n)
        picks = rng.random(n) < 0.2
        x[picks] = special[rng.integers(0, len(special), int(picks.sum()))]
        parts.append(x)
    z = np.empty(n, np.complex128)
    z.real, z.imag = parts
    return z


def run_complex_cases(cases: Sequence[ProofCase]) -> dict[str, str]:
    """``{case name: "ok" | the first reason not}`` of the "complex" cases."""
    import numpy as np

    from . import make_site
    from .proof import loaded_cases

    rng = np.random.default_rng(SEED)
    verdict: dict[str, str] = {}
    with np.errstate(all="ignore"):
        for case, found in loaded_cases(cases, verdict, lambda case: ""):
            sig = case.kernel.signature
            site = make_site(
                found[0], sig.kind, sig.leaves, sig.loops, lambda *a: None, case.name, found[1]
            )
            verdict[case.name] = _check(site, case.expression, rng) or "ok"
    return verdict


def _check(site: Any, expression: Expression, rng: Any) -> str:
    import numpy as np

    from .proof import LENGTHS, OFFSETS, wide_inputs

    for n in LENGTHS:
        for off in OFFSETS:
            z = complex_inputs(rng, n + off)[off:]
            y = np.abs(wide_inputs(rng, n + off))[off:] + 0.25
            found = _differs(site, expression, z, y)
            if found:
                return f"{found} at n={n} offset={off}"
    z = complex_inputs(rng, 37 * 29).reshape(29, 37, order="F")  # the flat F-ordered call
    y = np.asfortranarray(np.abs(wide_inputs(rng, z.size)).reshape(z.shape) + 0.25)
    found = _differs(site, expression, z, y)
    return f"{found} (F-ordered)" if found else ""


def _differs(site: Any, expression: Expression, z: Any, y: Any) -> str:
    """Why the site's answer is not NumPy's bit for bit, or in its layout ("" where
    it is)."""
    import numpy as np

    from .proof import evaluate

    got, want = site(z, y), evaluate(expression, (z, y))
    if got is None:
        return "fast path did not run"
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype != w.dtype or g.shape != w.shape or g.flags.f_contiguous != w.flags.f_contiguous:
        return f"{g.dtype}{g.shape} != {w.dtype}{w.shape} (or its layout)"
    gb = np.ascontiguousarray(g).reshape(-1).view(np.uint8)
    wb = np.ascontiguousarray(w).reshape(-1).view(np.uint8)
    if np.array_equal(gb, wb):
        return ""
    i = int(np.flatnonzero(gb != wb)[0]) // g.itemsize
    zi, gi, wi = (np.ascontiguousarray(a).reshape(-1)[i] for a in (z, g, w))
    return f"bits differ for z={zi!r}: {gi!r} != {wi!r}"


__all__ = ["COMPLEX", "complex_inputs", "complex_specials", "run_complex_cases"]
