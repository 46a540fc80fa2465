"""Names a module's stub (or annotated source) defines, as values: a module attribute
(`math.pi`, `sys.argv`, `os.environ.get`), a call of a function (its overloads
resolved) or of a class (an instance, its type arguments bound by the constructor)."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from ppy_core.compiler.check import stdlib
from ppy_core.compiler.check.signatures import Args, fit, member_type, mro, resolve
from ppy_core.compiler.check.stubs import Subst, convert, is_var, type_params
from ppy_core.compiler.check.types import FUNCTION, STR, class_of, generic, union
from ppy_core.ir.types import F64, I1, I64, NONE, UNKNOWN, OpaqueType, TupleType, Type


def construct(qualname: str, args: Args) -> Type:
    """An instance of the stub class `qualname` built from `args`."""
    found = stdlib.class_info(qualname)
    if found is None:
        return UNKNOWN
    module, info = found
    params = type_params(info.ast, module)
    if qualname in ("builtins.float", "builtins.int", "builtins.bool"):
        return {"builtins.float": F64, "builtins.int": I64, "builtins.bool": I1}[qualname]
    if not params:
        return OpaqueType(stdlib.canonical(qualname))
    fresh: Subst = dict.fromkeys(params, UNKNOWN)
    for name in ("__new__", "__init__"):
        for module_, info_, _subst in mro(qualname, ()):
            node = (info_.child_nodes or {}).get(name)
            if node is None or info_.ast.name == "object":
                continue
            bound = _construct_with(stdlib.functions(node.ast), module_, params, args)
            if bound is not None:
                return generic(qualname, [bound.get(p, UNKNOWN) for p in params])
            break
    return generic(qualname, fresh.values())


def _construct_with(
    functions: Sequence[ast.FunctionDef], module: str, params: list[str], args: Args
) -> Subst | None:
    for function in functions:
        bindings = fit(function, module, {}, args, bound=True)
        if bindings is None:
            continue
        first = [*function.args.posonlyargs, *function.args.args][:1]
        self_ann = first[0].annotation if first else None
        if isinstance(self_ann, ast.Subscript):  # `self: dict[str, _VT]` fixes _KT
            items = (
                self_ann.slice.elts if isinstance(self_ann.slice, ast.Tuple) else [self_ann.slice]
            )
            for param, item in zip(params, items, strict=False):
                if isinstance(item, ast.Name) and item.id in bindings:
                    bindings[param] = bindings[item.id]
                elif not (isinstance(item, ast.Name) and is_var(module, item.id)):
                    bindings[param] = convert(item, module, {})
        return bindings
    return None


def module_attribute(qualname: str) -> Type | None:
    """A module-level name read as a value (`math.pi`, `sys.argv`, `os.environ`);
    None if the stub has no such name."""
    found = stdlib.lookup(qualname)
    if found is None:
        owner, _, attr = qualname.rpartition(".")
        value = module_attribute(owner) if "." in owner else None
        return member_type(value, attr) if value is not None and class_of(value) else None
    module, info = found
    node = info.ast
    if isinstance(node, ast.AnnAssign) and not _bare_final(node.annotation):
        return convert(node.annotation, module, {})
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        return _value_type(node.value, module)  # `X = 1`, `F64: Final = ScalarType("f64")`
    if isinstance(node, ast.ClassDef):
        return OpaqueType("builtins.type")
    if stdlib.functions(node):
        return FUNCTION
    if type(node).__name__ == "ImportedName" or isinstance(node, ast.Module):
        return OpaqueType("types.ModuleType")
    return UNKNOWN


def _bare_final(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Final") or (
        isinstance(node, ast.Attribute) and node.attr == "Final"
    )


def _value_type(node: ast.expr, module: str) -> Type:
    """The type of a module-level value in a package's own source that has no
    annotation of its own: a literal, or an instance of a class it calls."""
    if isinstance(node, ast.Constant):
        return {str: STR, int: I64, float: F64, bool: I1, type(None): NONE}.get(
            type(node.value), UNKNOWN
        )
    if isinstance(node, ast.Tuple):  # `NAMES: Final = ("sqrt", "exp")`
        return TupleType(tuple(_value_type(e, module) for e in node.elts))
    if isinstance(node, ast.List | ast.Set):
        kind = "builtins.list" if isinstance(node, ast.List) else "builtins.set"
        return generic(kind, [union([_value_type(e, module) for e in node.elts])])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
        target = ast.unparse(node.func)
        found = stdlib.lookup(f"{module}.{target}")
        if found is not None and isinstance(found[1].ast, ast.ClassDef):
            return construct(stdlib.canonical(f"{found[0]}.{found[1].ast.name}"), Args((), {}))
    return UNKNOWN


def module_call(qualname: str, args: Args) -> Type | None:
    """What calling the stub name `qualname` returns: a function's overloads resolved by
    `args`, a class's instance; None if the stub has no such name."""
    found = stdlib.lookup(qualname)
    if found is None:
        return None
    module, info = found
    if isinstance(info.ast, ast.ClassDef):
        return construct(stdlib.canonical(f"{module}.{info.ast.name}"), args)
    functions = stdlib.functions(info.ast)
    if not functions:
        return UNKNOWN
    answer = resolve(functions, module, {}, args, bound=False)
    return answer if answer is not None else UNKNOWN


__all__ = ["construct", "module_attribute", "module_call"]
