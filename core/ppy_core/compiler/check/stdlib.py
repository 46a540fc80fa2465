"""Types of the standard library, read from typeshed's stubs (never written by hand).

`typeshed-client` bundles typeshed and resolves a qualified name over `ast`, honouring
typeshed's `VERSIONS` file and the stubs' `sys.version_info` / `sys.platform` branches
for the running interpreter. We read only what a checker needs of a name: what a
function returns, the class an instance is, a class's methods and attributes. A return
annotation we cannot reduce to one IR type (a TypeVar, a union, overloads that
disagree) is Unknown: the checker says so under strict instead of guessing.

typeshed is chosen over hand-written tables because it is maintained with CPython and
covers every stdlib module; over running mypy, because parsing a few stubs with `ast`
costs milliseconds and we need only return types.
"""

from __future__ import annotations

import ast
import functools
import os
import sys
from pathlib import Path
from typing import Any, Final

from ppy_core.ir.types import F64, I1, I64, NONE, UNKNOWN, OpaqueType, Type

#: builtins classes the IR has scalar types for; other classes are opaque by name
SCALARS: Final[dict[str, Type]] = {
    "float": F64,
    "int": I64,
    "bool": I1,
    "None": NONE,
}
#: classes typeshed spells through typing aliases
ALIASES: Final[dict[str, str]] = {
    "typing.List": "builtins.list",
    "typing.Dict": "builtins.dict",
    "typing.Tuple": "builtins.tuple",
    "typing.Set": "builtins.set",
    "typing.FrozenSet": "builtins.frozenset",
    "typing_extensions.LiteralString": "builtins.str",
    "typing.LiteralString": "builtins.str",
    "typing.AnyStr": "",
}


def available() -> bool:
    """Whether typeshed's stubs can be read here."""
    try:
        import typeshed_client  # noqa: F401
    except ImportError:
        return False
    return True


def is_stdlib(module: str) -> bool:
    """Whether `module`'s top-level package is part of this Python's standard library."""
    top = module.partition(".")[0]
    return top in sys.stdlib_module_names or top == "builtins"


@functools.cache
def _names(module: str) -> dict[str, Any] | None:
    """typeshed's names of `module`, parsed once per interpreter and typeshed build and
    kept (pickled) under the cache root: parsing a stub costs 50-180 ms, loading 1 ms."""
    import pickle

    import typeshed_client

    store = _store()
    cached = store / f"{module}.pickle" if store else None
    if cached is not None and cached.is_file():
        try:
            return pickle.loads(cached.read_bytes())
        except Exception:
            pass
    try:
        names = typeshed_client.get_stub_names(module)
    except (SyntaxError, ValueError, OSError):
        return None
    if cached is not None and names is not None:
        _publish(cached, pickle.dumps(names))
    return names


@functools.lru_cache(maxsize=1)
def _store() -> Path | None:
    """`<cache root>/stdlib/<python>-<platform>-typeshed_client-<version>/`."""
    import importlib.metadata as md

    from ppy_core.cache.root import cache_root

    try:
        version = md.version("typeshed_client")
        root = (
            cache_root()
            / "stdlib"
            / (f"{sys.implementation.cache_tag}-{sys.platform}-typeshed_client-{version}")
        )
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
    except (OSError, md.PackageNotFoundError):
        return None
    return root


def _publish(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def _lookup(qualname: str) -> tuple[str, Any] | None:
    """The stub node of `module.name` (following re-exports), with its module."""
    module, _, name = qualname.rpartition(".")
    for _hop in range(6):
        names = _names(module) if module else None
        info = names.get(name) if names else None
        if info is None:
            return None
        source = getattr(info, "source_module", None)
        if source is not None:  # ImportedInfo: `from x import name` re-exported
            module, name = ".".join(source), info.info.name
            continue
        target = info.ast
        if type(target).__name__ == "ImportedName":
            module, name = ".".join(target.module_name), target.name or name
            continue
        return module, info
    return None


def _functions(node: Any) -> list[ast.FunctionDef]:
    definitions = getattr(node, "definitions", None)
    found = definitions if definitions is not None else [node]
    return [d for d in found if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef)]


def annotation_type(node: ast.expr | None, module: str) -> Type:
    """An annotation in the stub of `module` as an IR type (Unknown when it is not one)."""
    if node is None:
        return UNKNOWN
    if isinstance(node, ast.Constant) and node.value is None:
        return NONE
    if isinstance(node, ast.Subscript):
        base = node.value
        if isinstance(base, ast.Name) and base.id in ("Final", "ClassVar"):
            return annotation_type(node.slice, module)
        node = base  # list[str] is a list: the checker does not look at elements
    if isinstance(node, ast.Name):
        if node.id in SCALARS:
            return SCALARS[node.id]
        resolved = _lookup(f"{module}.{node.id}")
        if resolved is not None and isinstance(resolved[1].ast, ast.ClassDef):
            return OpaqueType(_canonical(f"{resolved[0]}.{node.id}"))
        builtin = _names("builtins") or {}
        if node.id in builtin and isinstance(builtin[node.id].ast, ast.ClassDef):
            return OpaqueType(f"builtins.{node.id}")
        alias = ALIASES.get(f"typing.{node.id}")
        return OpaqueType(alias) if alias else UNKNOWN
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        alias = ALIASES.get(f"{node.value.id}.{node.attr}")
        return OpaqueType(alias) if alias else UNKNOWN
    return UNKNOWN


def _canonical(name: str) -> str:
    return ALIASES.get(name) or name


def _returns(functions: list[ast.FunctionDef], module: str) -> Type:
    """One type if every overload returns it, else Unknown."""
    types = {annotation_type(f.returns, module) for f in functions}
    return types.pop() if len(types) == 1 else UNKNOWN


def call_type(qualname: str) -> Type | None:
    """What calling the stdlib name `qualname` returns: a function's return type, a
    class's instance; None if typeshed has no such name."""
    resolved = _lookup(qualname)
    if resolved is None:
        return None
    module, info = resolved
    node = info.ast
    if isinstance(node, ast.ClassDef):
        name = f"{module}.{qualname.rpartition('.')[2]}"
        return (
            SCALARS.get(node.name, OpaqueType(_canonical(name)))
            if module == "builtins"
            else (OpaqueType(_canonical(name)))
        )
    functions = _functions(node)
    return _returns(functions, module) if functions else UNKNOWN


def attribute_type(qualname: str) -> Type | None:
    """A module attribute (`math.pi`, `sys.argv`); None if typeshed has no such name."""
    resolved = _lookup(qualname)
    if resolved is None:
        return None
    module, info = resolved
    node = info.ast
    if isinstance(node, ast.AnnAssign):
        return annotation_type(node.annotation, module)
    if isinstance(node, ast.ClassDef):
        return OpaqueType("builtins.type")
    if _functions(node):
        return OpaqueType("builtins.function")
    return UNKNOWN


def _class(qualname: str) -> tuple[str, Any] | None:
    resolved = _lookup(qualname)
    if resolved is None or not isinstance(resolved[1].ast, ast.ClassDef):
        return None
    return resolved


def member(owner: str, name: str) -> tuple[str, Type] | None:
    """A member of the stdlib class `owner` (through its stub bases): ("method", what a
    call returns) or ("attribute", its type); None if the class has no such member."""
    seen: set[str] = set()
    queue = [owner]
    while queue:
        current = queue.pop(0)
        if current in seen:
            continue
        seen.add(current)
        resolved = _class(current)
        if resolved is None:
            continue
        module, info = resolved
        children = info.child_nodes or {}
        if name in children:
            node = children[name].ast
            functions = _functions(node)
            if functions:
                if any(_is_property(f) for f in functions):
                    return "attribute", _returns(functions, module)
                return "method", _returns(functions, module)
            if isinstance(node, ast.AnnAssign):
                return "attribute", annotation_type(node.annotation, module)
            return "attribute", UNKNOWN
        for base in info.ast.bases:
            target = base.value if isinstance(base, ast.Subscript) else base
            if isinstance(target, ast.Name):
                queue.append(f"{module}.{target.id}")
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                queue.append(f"{target.value.id}.{target.attr}")
    return None


def _is_property(function: ast.FunctionDef) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id == "property")
        or (isinstance(d, ast.Attribute) and d.attr in ("getter", "setter"))
        for d in function.decorator_list
    )


__all__ = ["available", "is_stdlib", "call_type", "attribute_type", "member", "annotation_type"]
