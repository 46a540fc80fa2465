"""Site dispatchers at run time: the compiled code behind its guard, the original
Python as fallback, counters for `ppy.stats()`, and the PPY_VERIFY / PPY_FALLBACK
modes. The common path adds nothing: a loader's dispatcher is used as it is."""

from __future__ import annotations

import atexit
import math
import os
import struct
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from ppy_core.diagnostics import Error, VerifyError

_SITES: dict[str, Any] = {}
_REASONS: dict[str, dict[str, int]] = {}


class FallbackWarning(UserWarning):
    """A compiled site ran its Python path (PPY_FALLBACK=warn)."""


class PythonSite:
    """A site whose compiled part is missing: every call is a counted fallback."""

    __slots__ = ("calls", "fallback", "reason")

    def __init__(self, fallback: Callable[..., Any], reason: str) -> None:
        self.fallback, self.reason, self.calls = fallback, reason, 0

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        return self.fallback(*args)

    def ppy_stats(self) -> dict[str, Any]:
        return {"fast": 0, "fallback": {self.reason: self.calls} if self.calls else {}}


def register(site_id: str, site: Any) -> None:
    _SITES[site_id] = site


def stats() -> dict[str, dict[str, Any]]:
    """Per site: fast-path calls and fallbacks by reason."""
    out: dict[str, dict[str, Any]] = {}
    for site_id, site in _SITES.items():
        getter = _stats_getter(site)
        data = dict(getter()) if getter else {"fast": 0, "fallback": {}}
        extra = _REASONS.get(site_id)
        if extra:
            merged = dict(data.get("fallback", {}))
            for reason, n in extra.items():
                merged[reason] = merged.get(reason, 0) + n
            data["fallback"] = merged
        out[site_id] = data
    return out


def reset_stats() -> None:
    for site in _SITES.values():
        reset = getattr(site, "ppy_reset", None) or getattr(site, "reset_stats", None)
        if callable(reset):
            reset()
        if isinstance(site, PythonSite):
            site.calls = 0
    _REASONS.clear()


def format_stats() -> str:
    rows = ["ppy stats: site, fast-path calls, fallbacks by reason"]
    for site_id, data in sorted(stats().items()):
        fallbacks = ", ".join(f"{r}: {n}" for r, n in sorted(data.get("fallback", {}).items()))
        rows.append(f"  {site_id:30s} {data.get('fast', 0):>10d}   {fallbacks or '-'}")
    return "\n".join(rows)


def install_stats_printer() -> None:
    if os.environ.get("PPY_STATS") == "1":
        atexit.register(lambda: print(format_stats(), file=sys.stderr))


def wrap(site_id: str, site: Any, fallback: Callable[..., Any]) -> Any:
    """The dispatcher as the program calls it: `site` itself unless PPY_VERIFY or
    PPY_FALLBACK asks for checks around it."""
    verify = os.environ.get("PPY_VERIFY") == "1"
    mode = os.environ.get("PPY_FALLBACK", "")
    if not verify and mode not in ("warn", "error"):
        return site
    warned: set[str] = set()

    def fell_back(before: dict[str, int], cause: BaseException | None) -> None:
        after = _counts(site)[1]
        if not mode or after == before:
            return
        reason = next((r for r, n in after.items() if before.get(r, 0) != n), "?")
        if mode == "error":
            raise Error(
                f"site {site_id} fell back to Python: {reason}",
                code="E2001",
                hint="PPY_FALLBACK=error is set; unset it to allow fallbacks",
            ) from cause
        if reason not in warned:
            warned.add(reason)
            warnings.warn(
                f"ppy: site {site_id} fell back to Python: {reason}", FallbackWarning, stacklevel=3
            )

    def checked(*args: Any) -> Any:
        before = _counts(site)
        try:
            result = site(*args)
        except Exception as exc:  # the Python path raised (as Python would): still a fallback
            fell_back(before[1], exc)
            raise
        after = _counts(site)
        if after[0] > before[0]:
            if verify:
                expected = fallback(*args)
                problem = compare(result, expected)
                if problem:
                    raise VerifyError(
                        f"site {site_id}: fast path and Python differ: {problem}",
                        hint="please report this: the fast path is wrong here",
                    )
        else:
            fell_back(before[1], None)
        return result

    return checked


def _stats_getter(site: Any) -> Any:
    """Sites report counters as `ppy_stats()` (or a C dispatcher's `stats()`)."""
    for name in ("ppy_stats", "stats"):
        getter = getattr(site, name, None)
        if callable(getter):
            return getter
    return None


def _counts(site: Any) -> tuple[int, dict[str, int]]:
    getter = _stats_getter(site)
    if getter is None:
        return 0, {}
    data = getter()
    return int(data.get("fast", 0)), dict(data.get("fallback", {}))


def compare(got: Any, want: Any) -> str | None:
    """None if `got` is `want` bit for bit (NaNs of any payload equal), else where not."""
    if type(got) is not type(want):
        return f"type {type(got).__name__} != {type(want).__name__}"
    if isinstance(got, float):
        return None if _same_float(got, want) else f"{got!r} != {want!r}"
    if isinstance(got, tuple | list):
        if len(got) != len(want):
            return f"length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            problem = compare(g, w)
            if problem:
                return f"[{i}]: {problem}"
        return None
    gview, wview = _buffer(got), _buffer(want)
    if gview is None or wview is None:
        return None if got == want else f"{got!r} != {want!r}"
    for attribute in ("dtype", "requires_grad", "device"):
        if str(getattr(got, attribute, "")) != str(getattr(want, attribute, "")):
            return f"{attribute} {getattr(got, attribute)} != {getattr(want, attribute)}"
    return _compare_buffers(gview, wview)


def _buffer(value: Any) -> memoryview | None:
    """The bytes of an array: the buffer protocol, or a tensor's CPU copy (duck-typed:
    the runtime imports no library)."""
    try:
        return memoryview(value)
    except TypeError:
        pass
    if callable(getattr(value, "detach", None)) and callable(getattr(value, "numpy", None)):
        return memoryview(value.detach().cpu().contiguous().numpy())
    return None


def _compare_buffers(got: memoryview, want: memoryview) -> str | None:
    if got.shape != want.shape or got.format != want.format:
        return f"shape/format {got.shape} {got.format} != {want.shape} {want.format}"
    if got.tobytes() == want.tobytes():
        return None
    flat_g = got.cast("B").cast(got.format) if got.ndim != 1 else got
    flat_w = want.cast("B").cast(want.format) if want.ndim != 1 else want
    for i, (g, w) in enumerate(zip(flat_g.tolist(), flat_w.tolist(), strict=True)):
        same = _same_float(g, w) if isinstance(g, float) else g == w
        if not same:
            return f"first difference at flat index {i}: {g!r} != {w!r}"
    return None


def _same_float(a: float, b: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    return struct.pack("<d", a) == struct.pack("<d", b)


def note_fallback(site_id: str, reason: str) -> None:
    bucket = _REASONS.setdefault(site_id, {})
    bucket[reason] = bucket.get(reason, 0) + 1


def loaded_sites() -> Mapping[str, Any]:
    return dict(_SITES)


__all__ = [
    "PythonSite",
    "register",
    "stats",
    "reset_stats",
    "format_stats",
    "wrap",
    "compare",
    "install_stats_printer",
    "FallbackWarning",
    "loaded_sites",
]
