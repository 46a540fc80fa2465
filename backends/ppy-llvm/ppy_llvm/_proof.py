"""Proof, per NumPy build and CPU, that a fused call of NumPy's own inner loop
gives NumPy's bits: random and special inputs, many lengths and offsets.

The verdicts are cached in the kernel cache under a key of the backend
fingerprint + NumPy's version and extension module (size, mtime), so the
check re-runs when either changes. Only functions that pass are fused.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from ._host import fingerprint
from ._spec import LOOP_UNARY, KernelBuilder, KernelSpec

CANDIDATES = (*LOOP_UNARY, "power")
LENGTHS = (*range(1, 34), 63, 64, 65, 255, 256, 257, 511, 1000, 4099)
OFFSETS = (0, 1, 2, 3)


def numpy_build_key() -> str:
    """NumPy's version plus its umath module's size and mtime."""
    import numpy
    from numpy._core import _multiarray_umath as umath

    st = os.stat(umath.__file__)
    return f"{numpy.__version__}:{st.st_size}:{int(st.st_mtime)}"


def special_values() -> Any:
    """Edge inputs: signed zeros, infinities, NaNs, subnormals, domain and overflow edges."""
    import numpy as np

    base = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        -np.nan,
        5e-324,
        -5e-324,
        2.2250738585072014e-308,
        1e-310,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1 - 2**-53,
        1 + 2**-52,
        np.pi,
        -np.pi,
        np.pi / 2,
        1e300,
        -1e300,
        709.78,
        709.79,
        -745.2,
        -745.1,
        1e22,
        2.0**1023,
        1e-20,
        710.5,
        -708.4,
        0.7,
        1.5,
        20.0,
        -20.0,
        3e7,
        1e16,
    ]
    return np.array(base)


def inputs(rng: Any, n: int) -> Any:
    """Random magnitudes over the exponent range with specials sprinkled in."""
    import numpy as np

    x = rng.uniform(-10, 10, n)
    wide = rng.standard_normal(n) * 10.0 ** rng.uniform(-30, 30, n)
    x = np.where(rng.random(n) < 0.3, wide, x)
    sp = special_values()
    picks = rng.random(n) < 0.15
    x[picks] = sp[rng.integers(0, len(sp), int(picks.sum()))]
    return x


def proof_specs() -> dict[str, list[KernelSpec]]:
    """Per candidate: a bare call and a fused one (arithmetic in and out)."""
    out: dict[str, list[KernelSpec]] = {}
    for name in CANDIDATES:
        b1, b2 = KernelBuilder(), KernelBuilder()
        x1, y1 = b1.leaf(), b1.leaf()
        x2, y2 = b2.leaf(), b2.leaf()
        if name == "power":
            s1 = b1.build(b1.op("pow", x1, y1))
            s2 = b2.build(b2.op("add", b2.op("pow", b2.op("mul", x2, y2), b2.const(2.5)), y2))
        else:
            s1 = b1.build(b1.op("unary", x1, op=name))
            s2 = b2.build(b2.op("add", b2.op("unary", b2.op("mul", x2, y2), op=name), y2))
        out[name] = [s1, s2]
    return out


def _reference(name: str, x: Any, y: Any, fused: bool) -> Any:
    import numpy as np

    f = getattr(np, name)
    if name == "power":
        return np.power(x * y, 2.5) + y if fused else np.power(x, y)
    return f(x * y) + y if fused else f(x)


def run_proof() -> dict[str, str]:
    """``{name: "ok" | reason}`` for every candidate, by experiment."""
    import numpy as np

    from ppy_numpy._runtime import make_site

    from ._build import compile_specs
    from .loader import kernel_address

    specs = proof_specs()
    flat = [s for pair in specs.values() for s in pair]
    compiled = dict(zip([id(s) for s in flat], compile_specs(flat, "proof"), strict=True))
    rng = np.random.default_rng(20251129)
    verdict: dict[str, str] = {}
    with np.errstate(all="ignore"):
        for name, pair in specs.items():
            verdict[name] = "ok"
            for fused, spec in enumerate(pair):
                k = compiled[id(spec)]
                found = kernel_address(k)
                if found is None:
                    verdict[name] = "kernel library failed to load"
                    break
                try:
                    site = make_site(
                        found[0],
                        k.signature.kind,
                        k.signature.leaves,
                        k.signature.loops,
                        lambda *a: None,
                        f"proof:{name}",
                        found[1],
                    )
                except LookupError as exc:
                    verdict[name] = f"no float64 loop: {exc}"
                    break
                bad = _check(site, name, bool(fused), rng)
                if bad:
                    verdict[name] = bad
                    break
    return verdict


def _check(site: Any, name: str, fused: bool, rng: Any) -> str:
    import numpy as np

    for n in LENGTHS:
        for off in OFFSETS:
            buf_x, buf_y = inputs(rng, n + off), np.abs(inputs(rng, n + off)) + 0.25
            x, y = buf_x[off:], buf_y[off:]
            got = site(x, y)
            want = _reference(name, x, y, fused)
            if got is None:
                return f"fast path did not run at n={n}"
            if not np.array_equal(got.view(np.uint64), want.view(np.uint64)):
                i = int(np.flatnonzero(got.view(np.uint64) != want.view(np.uint64))[0])
                return f"bits differ at n={n} offset={off} x={x[i]!r}: {got[i]!r} != {want[i]!r}"
    return ""


def _cache_path() -> str:
    from ._toolchain import cache_dir

    key = hashlib.sha256(f"{fingerprint()}|{numpy_build_key()}".encode()).hexdigest()[:24]
    return str(cache_dir() / f"proof-{key}.json")


def proven(refresh: bool = False) -> dict[str, str]:
    """The cached verdicts for this fingerprint + NumPy build (computed on first use)."""
    path = _cache_path()
    if not refresh and os.path.exists(path):
        with open(path) as fh:
            return dict(json.load(fh))
    verdict = run_proof()
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        json.dump(verdict, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)
    return verdict


# -- NaN results of reductions ----------------------------------------------------------

NAN_LENGTHS = (*range(1, 41), 127, 128, 129, 255, 256, 257, 1000, 1031, 4099, 100_003)


def _nan_reference(kind: str, x: Any, y: Any) -> Any:
    import numpy as np

    return np.sum(x * y) if kind == "sum" else np.prod(x * y)


def _nan_inputs(rng: Any, n: int) -> tuple[Any, Any]:
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


def run_nan_proof() -> dict[str, str]:
    """``{"sum": "ok" | reason, "prod": ...}``: does the kernel's serial order give
    NumPy's NaN bits for sum(x*y) / prod(x*y) of NaN-laden data, at many lengths?"""
    import numpy as np

    from ppy_numpy._runtime import make_site

    from ._build import compile_specs
    from .loader import kernel_address

    specs = {}
    for kind, reduce in (("sum", "add"), ("prod", "mul")):
        b = KernelBuilder()
        x, y = b.leaf(), b.leaf()
        specs[kind] = b.build(b.op("mul", x, y), reduce=reduce)  # type: ignore[arg-type]
    kernels = dict(zip(specs, compile_specs(list(specs.values()), "proof-nan"), strict=True))
    rng = np.random.default_rng(20251130)
    verdict = {}
    with np.errstate(all="ignore"):
        for kind, k in kernels.items():
            found = kernel_address(k)
            if found is None:
                verdict[kind] = "kernel library failed to load"
                continue
            site = make_site(
                found[0],
                k.signature.kind,
                k.signature.leaves,
                (),
                lambda *a: None,
                f"proof:nan-{kind}",
                found[1],
                True,
            )
            verdict[kind] = _nan_check(site, kind, rng)
    return verdict


def _nan_check(site: Any, kind: str, rng: Any) -> str:
    import numpy as np

    for n in NAN_LENGTHS:
        for _ in range(12):
            x, y = _nan_inputs(rng, n)
            got, want = site(x, y), _nan_reference(kind, x, y)
            if got is None:
                return f"the kernel's result was refused at n={n}"
            if np.float64(got).view(np.uint64) != np.float64(want).view(np.uint64):
                return f"NaN bits differ at n={n}: {float(got)!r} != {float(want)!r}"
    return "ok"


def nan_verdicts(refresh: bool = False) -> dict[str, str]:
    """The cached NaN-result verdicts for this fingerprint + NumPy build."""
    head, tail = os.path.split(_cache_path())
    path = os.path.join(head, "proof-nan-" + tail.removeprefix("proof-"))
    if not refresh and os.path.exists(path):
        with open(path) as fh:
            return dict(json.load(fh))
    verdict = run_nan_proof()
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        json.dump(verdict, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)
    return verdict
