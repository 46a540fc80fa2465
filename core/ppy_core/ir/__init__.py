"""The IR: types, SSA values, operations, dialects, text form, verifier, passes.

Types load eagerly (plugins and the runtime name them); the rest of the facade
loads on first use, so a cached run that only reads types stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ppy_core.ir.types import (
    F32,
    F64,
    I1,
    I64,
    NONE,
    UNKNOWN,
    ColumnType,
    OpaqueType,
    RangeType,
    ScalarType,
    TensorType,
    TupleType,
    Type,
    UnknownType,
)

if TYPE_CHECKING:
    from ppy_core.ir.core import (
        EFFECTS,
        PURE,
        Block,
        Dialect,
        DialectRegistry,
        Operation,
        Region,
        Value,
        attribute,
        operand,
        region,
        result,
        verify,
    )
    from ppy_core.ir.dialects import CORE_DIALECTS, core_registry
    from ppy_core.ir.parser import parse_ir
    from ppy_core.ir.passes import Pass, PassManager
    from ppy_core.ir.printer import print_attribute, print_ir
    from ppy_core.ir.rewrite import RewritePattern, Rewriter, apply_patterns

_LAZY: dict[str, str] = {
    **dict.fromkeys(
        (
            "EFFECTS",
            "PURE",
            "Block",
            "Dialect",
            "DialectRegistry",
            "Operation",
            "Region",
            "Value",
            "attribute",
            "operand",
            "region",
            "result",
            "verify",
        ),
        "ppy_core.ir.core",
    ),
    "CORE_DIALECTS": "ppy_core.ir.dialects",
    "core_registry": "ppy_core.ir.dialects",
    "parse_ir": "ppy_core.ir.parser",
    "Pass": "ppy_core.ir.passes",
    "PassManager": "ppy_core.ir.passes",
    "print_attribute": "ppy_core.ir.printer",
    "print_ir": "ppy_core.ir.printer",
    "RewritePattern": "ppy_core.ir.rewrite",
    "Rewriter": "ppy_core.ir.rewrite",
    "apply_patterns": "ppy_core.ir.rewrite",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ppy_core.ir' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "EFFECTS",
    "PURE",
    "Block",
    "Dialect",
    "DialectRegistry",
    "Operation",
    "Region",
    "Value",
    "attribute",
    "operand",
    "region",
    "result",
    "verify",
    "CORE_DIALECTS",
    "core_registry",
    "parse_ir",
    "Pass",
    "PassManager",
    "print_attribute",
    "print_ir",
    "RewritePattern",
    "Rewriter",
    "apply_patterns",
    "F32",
    "F64",
    "I1",
    "I64",
    "NONE",
    "UNKNOWN",
    "ColumnType",
    "OpaqueType",
    "ScalarType",
    "TensorType",
    "RangeType",
    "TupleType",
    "Type",
    "UnknownType",
]
