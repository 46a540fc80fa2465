"""Run-time side of ppy-arrow (imports no compiler code, PyArrow only when used).

- `exported(array)`: lend a `pyarrow.Array` to native code as an Arrow C Data
  Interface `ArrowArray`/`ArrowSchema` pair, released exactly once when the
  `with` block ends; `imported(obj)` does the same for any `__arrow_c_array__`
  object; `Lent` is the pair.
- `create_adapter`: the `pyarrow` runtime adapter (entry point `ppy.runtimes`),
  which calls fused columnar kernels with their operands lent that way.
"""

from __future__ import annotations

from ppy_arrow.runtime._adapter import ArrowAdapter, ColumnSite, create_adapter
from ppy_arrow.runtime._cdata import ArrowArray, ArrowSchema, Lent, exported, imported

__all__ = [
    "ArrowAdapter",
    "ArrowArray",
    "ArrowSchema",
    "ColumnSite",
    "Lent",
    "create_adapter",
    "exported",
    "imported",
]
