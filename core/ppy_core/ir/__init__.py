"""The IR: types, SSA values, operations, dialects, text form, verifier, passes."""

from __future__ import annotations

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
from ppy_core.ir.types import (
    F32,
    F64,
    I1,
    I64,
    NONE,
    UNKNOWN,
    ColumnType,
    OpaqueType,
    ScalarType,
    TensorType,
    TupleType,
    Type,
    UnknownType,
)

__all__ = [
    "EFFECTS", "PURE", "Block", "Dialect", "DialectRegistry", "Operation", "Region", "Value",
    "attribute", "operand", "region", "result", "verify", "CORE_DIALECTS", "core_registry",
    "parse_ir", "Pass", "PassManager", "print_attribute", "print_ir", "RewritePattern",
    "Rewriter", "apply_patterns", "F32", "F64", "I1", "I64", "NONE", "UNKNOWN", "ColumnType",
    "OpaqueType", "ScalarType", "TensorType", "TupleType", "Type", "UnknownType",
]
