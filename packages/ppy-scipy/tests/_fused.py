"""Helpers of the fused `scipy.special` tests: compile a module both ways, read the
fast-path counters of its sites, compare results bit for bit."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

import ppy

HEADER = "import numpy as np\nfrom numpy.typing import NDArray\nfrom scipy import special\n"
SPECIALS = np.array(
    [
        *(0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 1e-310, -1e-310),
        *(2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308),
        *(1e300, -1e300, 1e-300, 1.0, -1.0, 0.5, -0.5, 2.0, 1e16, 171.7, 171.6, 1e-20),
        *(-1.0, -2.0, -3.0, -170.0, -1e10, -0.5, -2.5, 1 - 2**-53, 1 + 2**-52, 700.0, 27.0),
        *np.array([0x7FF8000000000ABC, 0xFFF80000DEADBEEF], dtype=np.uint64).view(np.float64),
    ]
)


def compile_pair(project: Path, module: str, source: str) -> tuple[Any, Any, dict[str, Any]]:
    """(`source` compiled by ppy, the same source run by Python, the compile's manifest);
    the compile must report no error."""
    from ppy_core.compiler.cached import compile_file, load_manifest

    path = project / f"{module}.py"
    path.write_text(source, encoding="utf-8")
    compiled = compile_file(path)
    assert not [d for d in compiled.diagnostics if d.code.startswith("E")], compiled.diagnostics
    fast = ppy.load(path, module)
    spec = importlib.util.spec_from_file_location(f"{module}_plain", path)
    assert spec is not None
    assert spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    return fast, plain, load_manifest(compiled.entry)


def counts(module: str, function: str, manifest: dict[str, Any]) -> tuple[int, int]:
    """(fast calls, fallbacks) of `function`'s sites so far."""
    stats = ppy.stats()
    ids = [f"{module}:{r['id']}" for r in manifest["expr_sites"] if r["function"] == function]
    fast = sum(int(stats.get(i, {}).get("fast", 0)) for i in ids)
    fallback = sum(sum(stats.get(i, {}).get("fallback", {}).values()) for i in ids)
    return fast, fallback


def unit(function: str, manifest: dict[str, Any]) -> dict[str, Any] | None:
    """The compiled unit of `function`'s one site (None: the site stayed Python)."""
    (record,) = [r for r in manifest["expr_sites"] if r["function"] == function]
    return record["unit"]  # type: ignore[no-any-return]


def loops(function: str, manifest: dict[str, Any]) -> list[list[str]]:
    """The library loops `function`'s kernel calls, as ``[name, signature]``."""
    found = unit(function, manifest)
    assert found is not None, f"{function} got no kernel"
    return list(found["data"]["signature"]["loops"])


def same(got: Any, want: Any) -> str | None:
    """None when `got` is `want` bit for bit (type, dtype, shape, every bit), else why."""
    if type(got) is not type(want):
        return f"{type(got).__name__} != {type(want).__name__}"
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{got.dtype}{got.shape} != {want.dtype}{want.shape}"
    bits = np.dtype(f"u{got.dtype.itemsize}")
    bad = np.flatnonzero(got.view(bits) != want.view(bits))
    if not bad.size:
        return None
    return f"index {bad[0]}: {got.flat[bad[0]]!r} != {want.flat[bad[0]]!r}"


def special_inputs(seed: int, n: int) -> np.ndarray:
    """Random magnitudes over the exponent range, SPECIALS and gamma's poles mixed in."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-8, 8, n)
    wide = rng.standard_normal(n) * 10.0 ** rng.uniform(-300, 300, n)
    x = np.where(rng.random(n) < 0.3, wide, x)
    picks = rng.random(n) < 0.3
    x[picks] = SPECIALS[rng.integers(0, len(SPECIALS), int(picks.sum()))]
    x[rng.random(n) < 0.1] = -rng.integers(0, 30, 1).astype(np.float64)  # gamma's poles
    return x
