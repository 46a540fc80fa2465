"""Typed loops: whether a function gets its C-order variant compiled.

`compile_loops` builds each loops function twice: for any strides, and for
C-contiguous arrays (`_c`, strides from the shape), whose constant strides let LLVM
strength-reduce and vectorize element loops (`a[i, j]`). A function whose arrays are
touched only by array statements (`loops.vector`) gains nothing from it: each
statement tests at run time whether its views step by one element and runs its
vectorized chunks either way (`_loops_vector_chunks`). There the `_c` symbol is a
call of the other variant, and LLVM compiles the function once: adi's time-step
loop of fourteen statements took twice as long to compile otherwise.
"""

from __future__ import annotations

from typing import Any

#: ops whose code does not depend on which variant is built (no element access)
_STRIDE_FREE = frozenset(
    f"loops.{name}"
    for name in (
        *("const", "get", "set", "binop", "compare", "unary", "cast", "call"),
        *("short_circuit", "dim", "for", "while", "if", "yield", "break", "continue"),
        *("return", "index_check"),
    )
)


def needs_contiguous(func: Any) -> bool:
    """Whether the C-order variant may run faster than the general one."""
    for op in func.walk():
        if op.name == "loops.vector":
            if any(set(view) - {"i", "s"} for view in op.attributes["views"]):
                return True  # a view of another kind: leave its variants as they are
        elif op.name not in _STRIDE_FREE and op.name not in ("func.func", "func.return"):
            return True
    return False


def call_variant(module: Any, sym: str, name: str) -> None:
    """`name`: a function of the same signature that calls `sym` (its C-order entry)."""
    from llvmlite import ir

    target = module.globals[sym]
    fn = ir.Function(module, target.function_type, name=name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.call(target, list(fn.args), tail=True))


__all__ = ["call_variant", "needs_contiguous"]
