"""What the jax plugin answers around the array operations: pytree utilities, PRNG
keys, the function transforms (`value_and_grad`), an Array's own methods and Python
operators on Arrays. Imports no JAX.

Types follow JAX's own annotations: a pytree is `Any` there (`PyTree = Any`), so
`jax.tree.unflatten` and `jax.eval_shape` return the checker's `typing.Any`, and
`jax.tree.leaves` a list (`list[Leaf]`, a leaf being any object); a tree's structure
is a `PyTreeDef`; a key is a key-typed Array, kept apart from float Arrays. Operators
on Arrays are typed, never converged: eager JAX runs them (see `surface`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ppy_core.interface.plugin import CallAnswer, CallContext, OperatorContext
from ppy_core.ir.types import F64, I1, I64, OpaqueType, TensorType, TupleType, Type
from ppy_jax.surface import ARRAY, BOOL_ARRAY, LIBRARY

TREE: Final = OpaqueType("typing.Any")  # JAX: `PyTree = Any`
TREEDEF: Final = OpaqueType("jax.tree_util.PyTreeDef")
LEAVES: Final = OpaqueType("builtins.list")  # `list[Leaf]`, `Leaf = Any`
KEY: Final = OpaqueType("jax.random.KeyArray")
VALUE_AND_GRAD: Final = OpaqueType("jax.ValueAndGradFunction")  # f -> (value, grads)
GRAD: Final = OpaqueType("jax.GradFunction")  # f -> grads
#: pytree utilities under both their names
TREES: Final[Mapping[str, Type]] = {
    **{f"jax.tree.{n}": t for n, t in (("structure", TREEDEF), ("unflatten", TREE),
                                       ("leaves", LEAVES), ("map", TREE))},
    **{f"jax.tree_util.tree_{n}": t for n, t in (("structure", TREEDEF), ("unflatten", TREE),
                                                 ("leaves", LEAVES), ("map", TREE))},
    "jax.eval_shape": TREE,  # ShapeDtypeStructs in the function's output structure
    "jax.random.key": KEY,
    "jax.random.PRNGKey": KEY,
    "jax.random.split": KEY,
    "jax.value_and_grad": VALUE_AND_GRAD,
    "jax.grad": GRAD,
}  # fmt: skip
#: calling what a transform returned: (the function's value, gradients shaped as the
#: argument's tree) for value_and_grad, the gradients for grad
CALLED: Final[Mapping[str, Type]] = {
    f"{VALUE_AND_GRAD.name}.__call__": TupleType((ARRAY, TREE)),
    f"{GRAD.name}.__call__": TREE,
}
#: an Array's methods that give an Array of the same type
SAME_ARRAY: Final = frozenset({"block_until_ready", "copy", "squeeze", "ravel", "flatten"})
ARITHMETIC: Final = frozenset({"Add", "Sub", "Mult", "Div", "Pow", "USub", "UAdd", "MatMult"})
COMPARISONS: Final = frozenset({"Lt", "LtE", "Gt", "GtE", "Eq", "NotEq"})
#: Python numbers are weakly typed in JAX: they take the Array's dtype
WEAK: Final = (F64, I64, I1)


def call(ctx: CallContext) -> CallAnswer | None:
    """Pytree utilities, keys, transforms, calling a transformed function, and an
    Array's methods; None for the rest."""
    callee = ctx.callee
    if callee in TREES:
        return CallAnswer(TREES[callee])
    if callee in CALLED:
        return CallAnswer(CALLED[callee])
    owner, _, name = callee.rpartition(".")
    if owner == "jax.Array" and name in SAME_ARRAY and _is_array(ctx.receiver):
        return CallAnswer(ctx.receiver)  # type: ignore[arg-type]
    return None


def operator(ctx: OperatorContext) -> Type | None:
    """`a - b`, `x ** 2`, `a > 0` on Arrays: an Array (bool for comparisons), when every
    operand is a JAX Array of one dtype or a Python number; else None (not typed)."""
    arrays = [t for t in ctx.operands if _is_array(t)]
    if not arrays or not all(_is_array(t) or t in WEAK for t in ctx.operands):
        return None
    elements = {t.element for t in arrays}  # type: ignore[attr-defined]
    if len(elements) != 1:
        return None  # JAX's promotion between dtypes is not modelled
    if ctx.op in COMPARISONS:
        return BOOL_ARRAY
    if ctx.op in ARITHMETIC:
        return TensorType(elements.pop(), None, LIBRARY)
    return None


def _is_array(t: Type | None) -> bool:
    return isinstance(t, TensorType) and t.library == LIBRARY


__all__ = ["CALLED", "KEY", "TREE", "TREES", "ARRAY", "call", "operator"]
