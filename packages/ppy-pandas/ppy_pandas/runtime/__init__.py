"""Run-time side of ppy-pandas (imports no compiler code; pandas only when a site binds).

`create_adapter`: the `pandas` runtime adapter (entry point `ppy.runtimes`), which runs
a fused Series expression's kernel over either backing and wraps the answer as the
Series pandas itself would return.
"""

from __future__ import annotations

from ppy_pandas.runtime._adapter import PandasAdapter, SeriesSite, create_adapter

__all__ = ["PandasAdapter", "SeriesSite", "create_adapter"]
