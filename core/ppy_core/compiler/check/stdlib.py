"""Stubs of the standard library, read from typeshed (never written by hand), and the
annotated sources of packages that type themselves (the core's own `ppy`, PEP 561
`py.typed` packages no plugin claims).

`typeshed-client` bundles typeshed and resolves a qualified name over `ast`, honouring
typeshed's `VERSIONS` file and the stubs' `sys.version_info` / `sys.platform` branches
for the running interpreter. This module finds a name's stub node (following
re-exports); `signatures` turns annotations into types and resolves overloads.

typeshed is chosen over hand-written tables because it is maintained with CPython and
covers every stdlib module; over running mypy, because parsing a few stubs with `ast`
costs milliseconds.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from ppy_core.ir.types import F64, I1, I64, NONE, Type

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


def _names(module: str) -> dict[str, Any] | None:
    """The names of `module`'s stub or source; a project's own module is parsed again
    when its file changes (its size and mtime are part of the cache's key)."""
    top = module.partition(".")[0]
    if _project_package(top, _roots) is None:
        return _names_under(module, (), "")
    parts = module.split(".")
    stamp = ""
    for candidate in (Path(*parts).with_suffix(".py"), Path(*parts, "__init__.py")):
        for root in _roots:
            if (root / candidate).is_file():
                st = (root / candidate).stat()
                stamp = f"{root / candidate}:{st.st_size}:{st.st_mtime_ns}"
                break
    return _names_under(module, _roots, stamp)


@functools.lru_cache(maxsize=512)
def _names_under(module: str, roots: tuple[Path, ...], stamp: str) -> dict[str, Any] | None:
    """typeshed's names of `module` (or, for a package that types itself, its own
    source's), parsed once per process; a stdlib stub's are also kept (pickled) under
    the cache root: parsing one costs 50-180 ms, loading it 1 ms."""
    import pickle

    import typeshed_client

    own = typed_package(module.partition(".")[0])
    if own is not None:  # a package's own source: what typeshed_client cannot read
        import logging  # (a stub it finds invalid, a name defined twice) is not typed

        logger = logging.getLogger("typeshed_client")
        quiet, logger.disabled = logger.disabled, True
        try:
            return typeshed_client.get_stub_names(module, search_context=own)
        except Exception:
            return None
        finally:
            logger.disabled = quiet
    store = _store()
    cached = store / f"{module}.pickle" if store else None
    if cached is not None and cached.is_file():
        try:
            return pickle.loads(cached.read_bytes())
        except Exception:
            pass
    try:
        names = typeshed_client.get_stub_names(module, search_context=_default_context())
    except Exception:  # a stub typeshed_client finds invalid (a third party's): not typed
        return None
    if cached is not None and names is not None:
        _publish(cached, pickle.dumps(names))
    return names


@functools.cache
def _default_context() -> Any:
    """typeshed_client's default context over this Python's `sys.path`, made once: made
    per call, it asks a subprocess for the path (20-30 ms each)."""
    from typeshed_client import finder

    return finder.get_search_context(search_path=[Path(p) for p in sys.path if p])


#: packages whose public API is read from their own annotated source: the core's
#: (`ppy`, `ppy_core`), which no plugin claims, and any that ships `py.typed` (PEP 561)
CORE_PACKAGES: Final = frozenset({"ppy", "ppy_core"})


def typed_package(top: str) -> Any:
    """A search context over the folder holding package `top` when `top` is read from
    source: a package of the project being checked (under its root, as a checker puts
    the project on its path), the core's own, or a `py.typed` package; else None.
    Nothing is imported."""
    if is_stdlib(top):
        return None
    return _project_package(top, _roots) or _installed_package(top)


@functools.cache
def _project_package(top: str, roots: tuple[Path, ...]) -> Any:
    for root in roots:
        if (root / top / "__init__.py").is_file() or (root / f"{top}.py").is_file():
            from typeshed_client import finder

            return finder.get_search_context(search_path=[root], allow_py_files=True)
    return None


@functools.cache
def _installed_package(top: str) -> Any:
    import importlib.util

    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    if not locations:
        return None
    folder = Path(locations[0])
    if top not in CORE_PACKAGES and not (folder / "py.typed").is_file():
        return None
    from typeshed_client import finder

    return finder.get_search_context(search_path=[folder.parent], allow_py_files=True)


def has_types(module: str) -> bool:
    """Whether names in `module` are read from stubs: the standard library's, or a
    package's own annotated source (`typed_package`)."""
    return is_stdlib(module) or typed_package(module.partition(".")[0]) is not None


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


_claimed: frozenset[str] = frozenset()
_roots: tuple[Path, ...] = ()


@contextlib.contextmanager
def checking(claimed: frozenset[str], roots: tuple[Path, ...]) -> Iterator[None]:
    """While checking a file: the top-level modules its plugins claim are theirs to
    model, so their own sources or stubs are never read (nor imported); `roots` are
    the folders its project's own packages are found in."""
    global _claimed, _roots
    saved = _claimed, _roots
    _claimed, _roots = claimed, roots
    try:
        yield
    finally:
        _claimed, _roots = saved


def lookup(qualname: str) -> tuple[str, Any] | None:
    """The stub node of `module.name` (following re-exports), with its module."""
    module, _, name = qualname.rpartition(".")
    for _hop in range(6):
        if module.partition(".")[0] in _claimed:
            return None
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


def functions(node: Any) -> list[ast.FunctionDef]:
    definitions = getattr(node, "definitions", None)
    found = definitions if definitions is not None else [node]
    return [d for d in found if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef)]


def canonical(name: str) -> str:
    return ALIASES.get(name) or name


def class_info(qualname: str) -> tuple[str, Any] | None:
    resolved = lookup(qualname)
    if resolved is None or not isinstance(resolved[1].ast, ast.ClassDef):
        return None
    return resolved


__all__ = [
    "available",
    "canonical",
    "class_info",
    "functions",
    "has_types",
    "is_stdlib",
    "lookup",
    "checking",
    "typed_package",
]
