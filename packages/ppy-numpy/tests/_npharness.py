"""Test harness of ppy-numpy: compile a generated module through the real pipeline
(`ppy.load`), load the same source as plain Python, call both, compare bit for bit,
and read the fast-path counters (`ppy.stats()`).

Imported by the tests as a plain module (conftest puts this folder on sys.path).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import types
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import ppy

#: `[tool.ppy]` of the tests' throwaway project: only the llvm backend is asked for
#: its fingerprint, so compiling a NumPy module does not import torch or jax.
PYPROJECT = '[project]\nname = "npfuse-tests"\n\n[tool.ppy]\nbackends = ["llvm"]\n'


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one call did: its value or exception, and the warnings it gave."""

    value: Any
    error: tuple[type, str] | None
    warnings: tuple[tuple[type, str], ...]


@dataclass(slots=True)
class Pair:
    """One source compiled by ppy (`fast`) and run as plain Python (`plain`)."""

    name: str
    path: Path
    fast: types.ModuleType
    plain: types.ModuleType
    manifest: dict[str, Any]
    diagnostics: list[str]

    def records(self, function: str) -> list[dict[str, Any]]:
        """The manifest's expression-site records of `function`."""
        return [r for r in self.manifest["expr_sites"] if r["function"] == function]

    def site_ids(self, function: str) -> list[str]:
        """`ppy.stats()` keys of `function`'s sites."""
        return [f"{self.name}:{r['id']}" for r in self.records(function)]

    def counts(self, function: str) -> tuple[int, dict[str, int]]:
        """(fast-path calls, {fallback reason: calls}) summed over `function`'s sites."""
        stats = ppy.stats()
        fast, fallback = 0, {}
        for sid in self.site_ids(function):
            data = stats.get(sid, {"fast": 0, "fallback": {}})
            fast += int(data["fast"])
            for reason, n in data["fallback"].items():
                fallback[reason] = fallback.get(reason, 0) + int(n)
        return fast, fallback

    def compiled(self, function: str) -> bool:
        """Whether every site of `function` got a kernel."""
        records = self.records(function)
        return bool(records) and all(r["unit"] is not None for r in records)


def verify_mode() -> bool:
    """Whether this session runs in shadow mode (PPY_VERIFY=1)."""
    return os.environ.get("PPY_VERIFY") == "1"


def compile_pair(project: Path, name: str, source: str) -> Pair:
    """Write `source` as `project/name.py`, compile and load it with ppy, and load it
    again as plain Python (module `name_plain`)."""
    from ppy_core.compiler.cached import compile_file, load_manifest

    path = project / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    compiled = compile_file(path)
    diagnostics = [d.render() for d in compiled.diagnostics]
    fast = ppy.load(path, name)
    spec = importlib.util.spec_from_file_location(f"{name}_plain", path)
    assert spec is not None
    assert spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    return Pair(name, path, fast, plain, load_manifest(compiled.entry), diagnostics)


def call(fn: Callable[..., Any], args: tuple[Any, ...], **errstate: str) -> Outcome:
    """Call `fn(*args)` under `np.errstate(**errstate)`, recording every warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(**errstate):
            try:
                value, error = fn(*args), None
            except Exception as exc:  # the same exception is the same answer
                value, error = None, (type(exc), str(exc))
    return Outcome(value, error, tuple((w.category, str(w.message)) for w in caught))


def _bits(x: Any) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view({1: "u1", 2: "u2", 4: "u4"}.get(a.dtype.itemsize, np.uint64))


def difference(got: Any, want: Any, nan_payload: bool = True) -> str | None:
    """None if `got` is `want`: type, dtype, shape, layout and every bit (with
    `nan_payload=False`, any NaN equals any NaN). Else what differs."""
    if type(got) is not type(want):
        return f"type {type(got).__name__} != {type(want).__name__}"
    if not isinstance(got, np.ndarray | np.generic):
        return None if got == want or (got != got and want != want) else f"{got!r} != {want!r}"
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"dtype/shape {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    if isinstance(got, np.ndarray) and got.flags.c_contiguous != want.flags.c_contiguous:
        return "layout differs"
    g, w = _bits(got), _bits(want)
    same = g == w
    if not nan_payload and got.dtype.kind == "f":
        same |= np.isnan(np.asarray(got)) & np.isnan(np.asarray(want))
    if bool(np.all(same)):
        return None
    i = int(np.flatnonzero(~np.asarray(same).ravel())[0])
    return (
        f"first difference at flat index {i}: "
        f"{np.asarray(got).ravel()[i]!r} ({int(g.ravel()[i]):#x}) != "
        f"{np.asarray(want).ravel()[i]!r} ({int(w.ravel()[i]):#x})"
    )


def outcome_difference(
    got: Outcome, want: Outcome, nan_payload: bool = True, warning_order: bool = False
) -> str | None:
    """`difference` for whole outcomes: values, exceptions and warnings.

    Warnings are compared as a multiset unless `warning_order`: a site's leaves (say
    `np.reciprocal(0.0)`) run before its fused operations, so a warning of a leaf can
    come before one NumPy gave earlier in the expression (see the package README)."""
    if got.error != want.error:
        return f"error {got.error} != {want.error}"
    gw, ww = got.warnings, want.warnings
    if not warning_order:
        gw, ww = tuple(sorted(gw, key=repr)), tuple(sorted(ww, key=repr))
    if gw != ww:
        return f"warnings {got.warnings} != {want.warnings}"
    if got.error is None:
        return difference(got.value, want.value, nan_payload)
    return None


# -- inputs ---------------------------------------------------------------------------

SPECIALS = np.array(
    [
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
        -1e-310,  # subnormals and the edge
        1.7976931348623157e308,
        -1.7976931348623157e308,
        1e300,
        -1e300,
        1e-300,  # huge, tiny
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        3.0,
        np.pi,
        -np.pi / 2,
        709.8,
        -745.5,
        1e16,
        0.7,
        *np.array(
            [0x7FF8000000000ABC, 0xFFF80000DEADBEEF, 0x7FF0000000000001],  # NaN payloads,
            dtype=np.uint64,
        ).view(np.float64),  # a signaling NaN
    ]
)
#: lengths around NumPy's SIMD widths and its pairwise-sum blocks
LENGTHS = (*range(10), 127, 128, 129, 255, 256, 257)
SHAPES_2D = ((2, 3), (16, 17), (1, 1), (9, 15), (0, 4))


def random_array(rng: np.random.Generator, shape: Any, special: float = 0.25) -> np.ndarray:
    """float64, C-contiguous: magnitudes over many decades, specials mixed in."""
    size = int(np.prod(shape))
    x = rng.standard_normal(size) * 10.0 ** rng.uniform(-8, 8, size)
    mask = rng.random(size) < special
    x[mask] = SPECIALS[rng.integers(0, len(SPECIALS), int(mask.sum()))]
    return x.reshape(shape)


def special_array(rng: np.random.Generator, shape: Any) -> np.ndarray:
    """Only special values."""
    size = int(np.prod(shape))
    return SPECIALS[rng.integers(0, len(SPECIALS), size)].reshape(shape).copy()


def shapes() -> Iterator[Any]:
    """Every test shape: the 1-D lengths, then the 2-D shapes."""
    yield from ((n,) for n in LENGTHS)
    yield from SHAPES_2D


def expect_refusal(value: Any, kind: str | None, size: int, parallel: bool = False) -> bool:
    """Whether the guard must refuse rather than take the fast path: an empty input; a
    max/min whose result is NaN or +-0 (NumPy's internal order decides its bits); a
    NaN sum/mean/prod of a run split over threads (`parallel`: the serial order's NaN
    bits are proven NumPy's, the split's are not)."""
    if size == 0:
        return True
    if kind is None or value is None:
        return False
    v = float(value)
    if kind in ("max", "min"):
        return v != v or v == 0.0
    return v != v and parallel


@contextlib.contextmanager
def counting(pair: Pair, function: str) -> Iterator[dict[str, Any]]:
    """`with counting(pair, "f") as c:` ... afterwards c["fast"], c["fallback"] hold
    the increase of `function`'s counters."""
    fast0, fb0 = pair.counts(function)
    out: dict[str, Any] = {}
    yield out
    fast1, fb1 = pair.counts(function)
    out["fast"] = fast1 - fast0
    out["fallback"] = {r: n - fb0.get(r, 0) for r, n in fb1.items() if n != fb0.get(r, 0)}


def generic(pair: Pair, function: str) -> Callable[..., Any]:
    """`function` without its specializing dispatcher (`ppy_core.runtime.observed`): the
    module's own compiled function, whose speculative sites a test of their guards calls."""
    fn = getattr(pair.fast, function)
    return getattr(fn, "__wrapped__", fn)  # type: ignore[no-any-return]


def run_both(
    pair: Pair, function: str, args: tuple[Any, ...], *, speculative: bool = False, **errstate: str
) -> tuple[str | None, dict[str, Any], Outcome]:
    """Call `function` of both builds under `errstate`: (what differs or None, the
    fast build's counter increase, NumPy's outcome). `speculative`: the generic
    function's speculative sites (`generic`), not the specializing dispatcher."""
    fn = generic(pair, function) if speculative else getattr(pair.fast, function)
    with counting(pair, function) as counts:
        got = call(fn, args, **errstate)
    want = call(getattr(pair.plain, function), args, **errstate)
    return outcome_difference(got, want), counts, want


#: a store test's world: fresh arrays (every one compared after the call) and the args
World = Callable[[], tuple[list[np.ndarray], tuple[Any, ...]]]


def direct_writes(pair: Pair, function: str) -> int:
    """Store calls of `function`'s sites written straight into their targets."""
    stats = ppy.stats()
    return sum(int(stats.get(sid, {}).get("direct", 0)) for sid in pair.site_ids(function))


def run_world(
    pair: Pair, function: str, world: World, *, speculative: bool = False, **err: str
) -> tuple[dict[str, Any], int]:
    """Call store `function` on one fresh world and NumPy on another; assert every
    array of the world, the value, exception and warnings are NumPy's. The counters'
    increase and the direct writes. `speculative`: call the generic function (its
    speculative sites' guards), not the specializing dispatcher."""
    arrays_fast, args_fast = world()
    arrays_plain, args_plain = world()
    direct0 = direct_writes(pair, function)
    fn = generic(pair, function) if speculative else getattr(pair.fast, function)
    with counting(pair, function) as c:
        got = call(fn, args_fast, **err)
    want = call(getattr(pair.plain, function), args_plain, **err)
    assert got.error == want.error, (got.error, want.error)
    assert sorted(got.warnings, key=repr) == sorted(want.warnings, key=repr)
    for i, (g, w) in enumerate(zip(arrays_fast, arrays_plain, strict=True)):
        assert difference(g, w) is None, (i, difference(g, w))
    if want.error is None and want.value is not None:
        assert difference(got.value, want.value) is None
    return c, direct_writes(pair, function) - direct0


def with_reasons(counts: Mapping[str, Any]) -> str:
    """Readable counters for an assertion message."""
    return f"fast +{counts.get('fast')}, fallback {counts.get('fallback')}"
