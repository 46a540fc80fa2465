"""The per-call test of an annotated rank (`x: Annotated[np.ndarray, ppy.Shape(None)]`).

Python does not check annotations, so where a site's meaning needs a parameter's
annotated rank (an implied view, `frontend/implied.py`: `np.outer(u, v)` read as
`u[:, None] * v[None, :]` only for vectors) the rewrite runs it under `rank_is(u, 1)`,
else Python's statement. The test is the specializing dispatcher's own description of
an argument (`signatures.describe`, an adapter's C for a NumPy array), so an annotated
rank is guarded exactly as an observed one; it reads no attribute of the object and
runs none of its code.
"""

from __future__ import annotations

from typing import Any

from ppy_core.runtime.signatures import describe


def rank_is(value: Any, rank: int) -> bool:
    """Whether `value` is an array its library's adapter describes with `rank` dims."""
    try:
        described = describe(value)
    except Exception:  # an adapter that cannot say: the statement runs as Python
        return False
    return len(described) >= 5 and described[0] == "array" and described[4] == rank


__all__ = ["rank_is"]
