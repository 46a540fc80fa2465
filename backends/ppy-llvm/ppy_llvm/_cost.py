"""The cost rule: a kernel that cannot beat its library's own calls is not built.

A fused kernel wins by doing in one pass what the library does in several (one
temporary per operation, one loop per call). A reduction whose every computing node
is a library loop call (`np.log(x).sum()`, `np.max(np.tanh(x))`, `np.mean(np.exp(x))`)
has nothing to fuse: NumPy runs its loop once over the whole array (SIMD, AVX-512 on
this machine) and then its own sum, while the kernel calls that loop once per pairwise
leaf (at most 128 elements, `_codegen.LEAF`) or per block of 256 and keeps the FP flags
across every call. Measured with `python benchmarks/npbench.py --suite
numpy_benchmarks --cost` (the per-site table; interleaved best-of-100 over 1e5
float64): sum over one loop 1.00-1.33x NumPy's time (log 1.24, exp 1.13, tanh 1.30,
log1p 1.30, arctan 1.25, sin 1.02), max over one 1.03-1.74x (exp 1.74, log 1.41), and
from 1e4 elements on (1.26x at 1e4, 0.92x at 3e3: the win below is a microsecond, the
loss above grows with the array). Any arithmetic fused around the loop pays for it
(`np.sum(np.exp(x) * 2.0)`: 0.77-0.86x at 1e4-1e6), so such reductions still build.
A float32 map of one arithmetic operation (`a / b`, `x - m`, `s * x`) has nothing to
fuse either, and NumPy's float32 loops outrun the kernel's (interleaved best-of-150,
one thread: `a / b` over 524,288 float32 114 us against NumPy's 50, `a + b` 128 against
63, `a * 0.5` 104 against 41, 2.0-3.3x from 1e3 elements on); two operations still
lose (1.3-1.4x), four win (0.72-0.86x), and `np.maximum(x, 0)` alone wins (0.67x:
NumPy's float32 extrema are slow), so only the single arithmetic op is refused.
An abs of a complex128 array computed whole (`_complex`) with two operations or fewer
around it gains nothing either (`_complex.CHEAP_AROUND`); compared with a scalar it
wins (`abs(Z) > horizon`, 0.70x). The site stays Python with `E2109`, named by
`ppy explain`. `PPY_COST_RULE=0` turns the rule off (to measure what it refuses; the
backend's fingerprint, hence the cache key, says which way it was).
"""

from __future__ import annotations

import os

from ._complex import complex_cost
from ._spec import KernelSpec, loop_name

#: the inline arithmetic of a float32 map that NumPy's own loop does faster alone
_ARITHMETIC = frozenset({"add", "sub", "mul", "div"})


def rule_on() -> bool:
    """Whether the rule decides (``PPY_COST_RULE=0``: every kernel builds)."""
    return os.environ.get("PPY_COST_RULE", "1") != "0"


def cost_refusal(spec: KernelSpec) -> str | None:
    """Why `spec` is not worth a kernel (its `E2109` detail), or None if it is."""
    if not rule_on():
        return None
    computing = [n for n in spec.nodes if n.op != "const"]
    if spec.reduce is None:
        if spec.dtype == "f32" and len(computing) == 1 and computing[0].op in _ARITHMETIC:
            return f"one float32 {computing[0].op}, nothing to fuse: NumPy's loop is faster"
        return complex_cost(spec)
    loops = [loop_name(n, spec) for n in computing]
    if not computing or not all(loops):
        return None
    names = ", ".join(sorted({str(name) for name in loops}))
    return f"a {spec.result_kind} over NumPy's {names} loop with no arithmetic to fuse"


__all__ = ["cost_refusal", "rule_on"]
