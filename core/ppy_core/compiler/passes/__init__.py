"""The core passes, run on every site after the plugins' passes.

Each pass is a frozen dataclass with a `name` (its CLI name), `owner = "core"`
and `run(root)`, which edits the IR under `root` in place; the pass manager
(`ppy_core.ir.PassManager`) verifies the IR after each one. No pass simplifies
arithmetic: rewrites must be bit-exact (`x + 0.0` is not `x` for `-0.0`).
"""

from __future__ import annotations

from typing import Final

from ppy_core.compiler.passes._cse import CommonSubexpressionElimination
from ppy_core.compiler.passes._dce import DeadCodeElimination
from ppy_core.compiler.passes._fuse import FUSIBLE, FuseElementwise

CORE_PASSES: Final = (CommonSubexpressionElimination(), DeadCodeElimination(), FuseElementwise())
"""The core passes in the order the driver runs them."""

__all__ = [
    "CORE_PASSES",
    "FUSIBLE",
    "CommonSubexpressionElimination",
    "DeadCodeElimination",
    "FuseElementwise",
]
