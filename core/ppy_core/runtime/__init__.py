"""The runtime: loads artifacts, binds sites, dispatches, counts, verifies.

It imports no compiler code (no front end, no passes, no code generator), so a
built artifact runs in a process that could not compile it.
"""

from __future__ import annotations

from ppy_core.runtime.dispatch import compare, format_stats, reset_stats, stats

__all__ = ["stats", "reset_stats", "format_stats", "compare"]
