"""Annotations in the checked code that no plugin types: builtins and standard-library
classes with their type arguments (`list[int]`, `dict[str, float]`, `tuple[str, ...]`,
`Iterator[bytes]`), unions (`str | None`, `Optional[str]`), `Any` and `object`.
A plugin's own types (`np.ndarray`, `torch.Tensor`, a pydantic model) are asked first,
by the compiler's typer; this reads what remains as a type checker does."""

from __future__ import annotations

import ast
from collections.abc import Callable

from ppy_core.compiler.check import stdlib
from ppy_core.compiler.check.stubs import literal_type
from ppy_core.compiler.check.types import ANY, FUNCTION, OBJECT, generic, union
from ppy_core.ir.types import NONE, UNKNOWN, OpaqueType, TupleType, Type

_SPECIAL = {
    "typing.Any": ANY,
    "typing_extensions.Any": ANY,
    "builtins.object": OBJECT,
    "typing.Callable": FUNCTION,
    "collections.abc.Callable": FUNCTION,
}


def class_name(qualname: str) -> str | None:
    """The stub class `qualname` names (following re-exports), if it names one."""
    found = stdlib.lookup(qualname) if stdlib.has_types(qualname) else None
    if found is None or not isinstance(found[1].ast, ast.ClassDef):
        return None
    return stdlib.canonical(f"{found[0]}.{found[1].ast.name}")


def read(
    node: ast.expr,
    qualname: Callable[[ast.expr], str | None],
    annotation: Callable[[ast.expr], Type],
) -> Type:
    """`node` as a type, naming things with `qualname` and reading nested annotations
    with `annotation` (so a plugin's types inside `list[np.ndarray]` are its own)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union([annotation(node.left), annotation(node.right)])
    if isinstance(node, ast.Subscript):
        return _subscripted(node, qualname, annotation)
    name = qualname(node)
    if name is None:
        return UNKNOWN
    if name in _SPECIAL:
        return _SPECIAL[name]
    if name.startswith("builtins.") and name[9:] in stdlib.SCALARS:
        return stdlib.SCALARS[name[9:]]
    found = class_name(name)
    if found is not None:
        return stdlib.SCALARS.get(found.removeprefix("builtins."), OpaqueType(found))
    return UNKNOWN


def _subscripted(
    node: ast.Subscript,
    qualname: Callable[[ast.expr], str | None],
    annotation: Callable[[ast.expr], Type],
) -> Type:
    name = qualname(node.value)
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if name is None:
        return UNKNOWN
    short = name.rpartition(".")[2]
    if name.startswith(("typing.", "typing_extensions.")):
        if short == "Optional":
            return union([annotation(items[0]), NONE])
        if short == "Union":
            return union([annotation(i) for i in items])
        if short in ("Final", "ClassVar", "Annotated"):
            return annotation(items[0])
        if short == "Literal":
            return union([literal_type(i) for i in items])
    if name in _SPECIAL:
        return _SPECIAL[name]
    if short == "type" or name == "typing.Type":
        return OpaqueType("builtins.type")
    found = class_name(name)
    if found is None:
        return UNKNOWN
    if found == "builtins.tuple":
        if len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is ...:
            return generic(found, [annotation(items[0])])
        return TupleType(tuple(annotation(i) for i in items))
    return generic(found, [annotation(i) for i in items])


def names_dtype(node: ast.expr | None, qualname: Callable[[ast.expr], str | None]) -> bool:
    """Whether an annotation states its array's element type: `npt.NDArray[np.float32]`
    and `Annotated[..., ppy.DType("f32")]` do; a bare `np.ndarray` or `torch.Tensor`
    admits any dtype (its plugin's type holds a default element, which the compiler
    assumes and the guard checks), so no dtype contradicts it."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return False
    if not isinstance(node, ast.Subscript):
        return False
    if qualname(node.value) not in ("typing.Annotated", "typing_extensions.Annotated"):
        return True
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return names_dtype(items[0], qualname) or any(
        isinstance(i, ast.Call) and (qualname(i.func) or "").endswith("ppy.DType")
        for i in items[1:]
    )


__all__ = ["OBJECT", "class_name", "names_dtype", "read"]
