"""Site dispatchers at run time: the compiled code behind its guard, the original
Python as fallback, counters for `ppy.stats()`, and the PPY_VERIFY / PPY_FALLBACK
modes. The common path adds nothing: a loader's dispatcher is used as it is."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings

TYPE_CHECKING = False  # `typing` itself costs a launcher ~3 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

# ppy_core.diagnostics (dataclasses, inspect: ~10 ms) loads only when a check fails,
# and `verify` (math, struct) only under PPY_VERIFY or when asked to compare:
# a launcher's start pays for nothing it does not use.

_SITES: dict[str, Any] = {}
_REASONS: dict[str, dict[str, int]] = {}
_MEMBERS: dict[str, list[Any]] = {}  # more sites counted under one id (specializations)


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


class Temporary:
    """An argument a dispatcher hands its fallback in place of a temporary (a value
    only the caller's stack held, e.g. a call's result): a fresh copy the fallback
    reads once through `fresh`, so its expression again sees a value held by nothing
    else, as Python's own evaluation does (a library may compute into such a value
    in place, and its result can depend on that: NumPy's temporary elision)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def fresh(value: Any) -> Any:
    """A fallback's read of an argument fed by an expression (`transform.FRESH`): a
    `Temporary`'s value, given up by the box; anything else as it is."""
    if type(value) is Temporary:
        box = value
        value, box.value = box.value, None
    return value


def register(site_id: str, site: Any, *, member: bool = False) -> None:
    """`site` answers for `site_id` (a module loaded again replaces its sites); a
    `member` (a function's specialization at the same place, `runtime.observed`)
    counts under the same id, beside the site there."""
    if member and site_id in _SITES:
        _MEMBERS.setdefault(site_id, []).append(site)
        return
    _SITES[site_id] = site
    _MEMBERS.pop(site_id, None)


def replace(site_id: str, old: Any, new: Any) -> None:
    """`new` answers for `site_id` where `old` did (a site bound at its first call,
    `module.Unbound`), as the site or as one of its members."""
    if _SITES.get(site_id) is old:
        _SITES[site_id] = new
        return
    members = _MEMBERS.get(site_id, [])
    for i, member in enumerate(members):
        if member is old:
            members[i] = new
            return


def stats() -> dict[str, dict[str, Any]]:
    """Per site: fast-path calls and fallbacks by reason."""
    out: dict[str, dict[str, Any]] = {}
    for site_id, site in _SITES.items():
        getter = _stats_getter(site)
        data = dict(getter()) if getter else {"fast": 0, "fallback": {}}
        for member in _MEMBERS.get(site_id, ()):
            _add_counts(data, member)
        extra = _REASONS.get(site_id)
        if extra:
            merged = dict(data.get("fallback", {}))
            for reason, n in extra.items():
                merged[reason] = merged.get(reason, 0) + n
            data["fallback"] = merged
        if site_id in _verified():
            data["verified"] = _verified()[site_id]
        out[site_id] = data
    return out


def _add_counts(data: dict[str, Any], member: Any) -> None:
    """A member's counters added to its site's: fast calls, fallbacks by reason, and
    any other count a site reports (a NumPy site's `splat`, `rows`, `direct`)."""
    getter = _stats_getter(member)
    if getter is None:
        return
    for name, value in getter().items():
        if name == "fallback":
            merged = dict(data.get("fallback", {}))
            for reason, n in value.items():
                merged[reason] = merged.get(reason, 0) + n
            data["fallback"] = merged
        elif isinstance(value, int) and not isinstance(value, bool):
            data[name] = int(data.get(name, 0)) + value


def reset_stats() -> None:
    for site in [*_SITES.values(), *(m for ms in _MEMBERS.values() for m in ms)]:
        reset = getattr(site, "ppy_reset", None) or getattr(site, "reset_stats", None)
        if callable(reset):
            reset()
        if isinstance(site, PythonSite):
            site.calls = 0
    _REASONS.clear()
    _verified().clear()


def format_stats() -> str:
    rows = ["ppy stats: site, fast-path calls, fallbacks by reason"]
    for site_id, data in sorted(stats().items()):
        fallbacks = ", ".join(f"{r}: {n}" for r, n in sorted(data.get("fallback", {}).items()))
        verified = f"   (PPY_VERIFY: {data['verified']} verified)" if "verified" in data else ""
        rows.append(f"  {site_id:30s} {data.get('fast', 0):>10d}   {fallbacks or '-'}{verified}")
    return "\n".join(rows)


def _verified() -> dict[str, int]:
    """Verified calls per site (`verify.VERIFIED`; empty while verify never loaded)."""
    verify = sys.modules.get("ppy_core.runtime.verify")
    return verify.VERIFIED if verify is not None else {}  # type: ignore[no-any-return]


def compare(got: Any, want: Any) -> str | None:
    """None if `got` is `want` bit for bit (NaNs of any payload equal), else where not
    (`verify.compare`)."""
    from ppy_core.runtime.verify import compare as _compare

    return _compare(got, want)


def install_stats_printer() -> None:
    if os.environ.get("PPY_STATS") == "1":
        import atexit

        atexit.register(lambda: print(format_stats(), file=sys.stderr))


def wrap(site_id: str, site: Any, fallback: Callable[..., Any], *, writes: bool = False) -> Any:
    """The dispatcher as the program calls it: `site` itself unless PPY_VERIFY or
    PPY_FALLBACK asks for checks around it. `writes`: a function site that writes its
    arguments (under PPY_VERIFY its Python runs on copies of them)."""
    verify = os.environ.get("PPY_VERIFY") == "1"
    mode = os.environ.get("PPY_FALLBACK", "")
    if not verify and mode not in ("warn", "error"):
        return site
    from ppy_core.runtime.verify import check as _check
    from ppy_core.runtime.verify import check_store as _check_store
    from ppy_core.runtime.verify import check_writes as _check_writes
    from ppy_core.runtime.verify import recorded as _recorded
    from ppy_core.runtime.verify import reemit as _reemit
    from ppy_core.runtime.verify import shadow_store as _shadow_store
    from ppy_core.runtime.verify import shadow_writes as _shadow_writes

    # a store site writes its target, a writing function site its arguments: their
    # Python runs first, on copies (`verify`)
    stateful = verify and (writes or bool(getattr(site, "stateful", False)))

    warned: set[str] = set()

    def fell_back(before: dict[str, int], cause: BaseException | None) -> None:
        after = _counts(site)[1]
        if not mode or after == before:
            return
        reason = next((r for r, n in after.items() if before.get(r, 0) != n), "?")
        if mode == "error":
            from ppy_core.diagnostics import Error

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

    def checked(*args: Any, **kwargs: Any) -> Any:
        before = _counts(site)
        caught: list[Any] = []
        if not stateful:
            shadow = None
        elif writes:
            shadow = _shadow_writes(fallback, args, kwargs)
        else:
            shadow = _shadow_store(site, fallback, args, kwargs)
        try:
            if verify:  # the IEEE-flags rule compares the warnings of both paths
                result, caught = _recorded(site, args, kwargs, stateful)
            else:
                result = site(*args, **kwargs)
        except Exception as exc:  # the Python path raised (as Python would): still a fallback
            fell_back(before[1], exc)
            raise
        if _counts(site)[1] != before[1]:
            fell_back(before[1], None)
        elif stateful and writes:
            _check_writes(site_id, shadow, args, result, caught)
        elif stateful:
            _check_store(site_id, shadow, args, result, caught)
        elif verify:  # no fallback counted: a fast call, or a site that counts nothing
            _check(site_id, fallback, args, kwargs, result, caught)
        _reemit(caught)
        return result

    for name in _FORWARDED:  # fn.ppy_stats(), fn.__ppy_region__ ... still answer
        if hasattr(site, name):
            with contextlib.suppress(AttributeError, TypeError):
                setattr(checked, name, getattr(site, name))
    checked.__wrapped__ = site  # type: ignore[attr-defined]
    return checked


_FORWARDED = (
    "ppy_stats",
    "ppy_reset",
    "stats",
    "reset_stats",
    "__ppy_stats__",
    "__ppy_reset_stats__",
    "__ppy_region__",
    "__name__",
    "__qualname__",
    "__doc__",
    "__module__",
)


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


def note_fallback(site_id: str, reason: str) -> None:
    bucket = _REASONS.setdefault(site_id, {})
    bucket[reason] = bucket.get(reason, 0) + 1


def loaded_sites() -> Mapping[str, Any]:
    return dict(_SITES)


__all__ = [
    "PythonSite",
    "register",
    "replace",
    "stats",
    "reset_stats",
    "format_stats",
    "wrap",
    "compare",
    "install_stats_printer",
    "FallbackWarning",
    "loaded_sites",
]
