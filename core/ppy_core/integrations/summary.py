"""The one line that says what ppy did in a process: modules compiled, sites, fast
calls, fallbacks by reason (`ppy.summary()`; the pytest plugin ends a run with it;
gathered from Dask workers with `client.run(ppy.summary)`)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def summary(stats: Mapping[str, Mapping[str, Any]], modules: int) -> str:
    """`ppy: M modules compiled, S sites, F fast calls, B fallbacks (reason n, ...)`."""
    fast = sum(int(s.get("fast", 0)) for s in stats.values())
    reasons: dict[str, int] = {}
    for site in stats.values():
        for reason, n in dict(site.get("fallback", {})).items():
            reasons[reason] = reasons.get(reason, 0) + int(n)
    slow = sum(reasons.values())
    line = (
        f"ppy: {modules} module{'s' if modules != 1 else ''} compiled, {len(stats)} sites, "
        f"{fast} fast calls, {slow} fallbacks"
    )
    if reasons:
        ranked = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        line += " (" + ", ".join(f"{r} {n}" for r, n in ranked) + ")"
    return line


def current() -> str:
    """This process's line: `ppy.stats()` and the modules the loaders ran compiled."""
    from ppy_core.runtime.compiling import LOADED
    from ppy_core.runtime.dispatch import stats

    return summary(stats(), len(set(LOADED)))


__all__ = ["summary", "current"]
