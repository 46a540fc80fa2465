"""Typed loops: the Emitter attributes the `loops.vector` mixins all read.

Declared once here (for type checkers; Emitter sets them in its __init__) instead of
in each of `_loops_vector`, `_loops_vector_chunks` and `_loops_vector_warn`.
"""

from __future__ import annotations

from typing import Any


class VectorFields:
    """The builder, the llvmlite module, the scalar types and the function."""

    b: Any
    ir: Any
    i1: Any
    i64: Any
    f64: Any
    fn: Any
