"""The key a file's findings are cached under, computed without loading a plugin.

Loading the plugins a file activates costs more than everything else a warm
`ppy check` does (their modules, their tables), and their answers cannot change
while what this key holds is unchanged: the file's bytes and path, the options, the
project files it imports, the core's code, the typeshed build, and for every plugin
that would be activated its entry point, its distribution's version, its package's
code (sizes and mtimes, so an edited editable install misses) and the libraries it
claims (their top-level files' sizes and mtimes: no metadata is parsed). A
third-party plugin's claims are learnt only by loading it, so a file that may
activate one gets no quick key and is keyed by `module_key`.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

from ppy_core import __version__
from ppy_core.project.config import Config

#: imports that are never a library a plugin claims (as `module_key` has it)
_NOT_LIBRARIES = frozenset({"ppy", "ppy_core", "__future__"})


def quick_key(path: Path, source: bytes, config: Config) -> str | None:
    """The findings key of `path` (its bytes `source`), or None when only loading the
    plugins can tell (a syntax error, an enabled third-party plugin)."""
    from ppy_core.cache.keys import imported_modules
    from ppy_core.cache.module_key import options_of
    from ppy_core.compiler.check import flatten, parse
    from ppy_core.project.scope import scan_module

    known = _facts(path, source)
    if known is not None:
        project_files, imported = known
    else:
        try:
            tree = parse(source, str(path))
        except (SyntaxError, ValueError):
            return None
        project_files = dict(scan_module(tree, path).project_files)
        # (of the import statements only, found in the walk the checks share)
        statements = [n for n in flatten(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
        imported = imported_modules(ast.Module(body=statements, type_ignores=[]))
        _keep_facts(path, source, project_files, imported)
    own = {name.partition(".")[0] for name in project_files}
    tops = {m.partition(".")[0] for m in imported} - _NOT_LIBRARIES - own
    plugins = _plugins(tops, config) if tops - sys.stdlib_module_names else []
    if plugins is None:
        return None
    files = {
        name: hashlib.sha256(file.read_bytes()).hexdigest()
        for name, file in sorted(project_files.items())
        if file.is_file()
    }
    from ppy_core.compiler.check import project_roots

    own_sources = {  # the project's own packages it imports, read from source
        f"{root}/{top}": _folder_id(root, top)
        for root in project_roots(path, config)
        for top in sorted({m.partition(".")[0] for m in imported})
        if (root / top / "__init__.py").is_file() or (root / f"{top}.py").is_file()
    }
    document = {
        "project sources": own_sources,
        "imported": {t: _version(t) for t in sorted(tops)},  # a py.typed package is read
        "core": __version__,
        "core code": _code_id("ppy_core"),
        "typeshed": _version("typeshed_client"),
        "python": sys.version,
        "source": hashlib.sha256(source).hexdigest(),
        "path": str(path),
        "options": options_of(config),
        "files": files,
        "plugins": plugins,
    }
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:32]


def claims_nothing(path: Path, source: bytes, config: Config) -> bool:
    """Whether no enabled plugin claims a module the file imports (after `quick_key`:
    what its tree says is kept, so this parses nothing)."""
    known = _facts(path, source)
    if known is None:
        return False
    project_files, imported = known
    own = {name.partition(".")[0] for name in project_files}
    tops = {m.partition(".")[0] for m in imported} - _NOT_LIBRARIES - own
    return not (tops - sys.stdlib_module_names) or _plugins(tops, config) == []


def _facts_entry(path: Path, source: bytes) -> Path | None:
    """Where what a file's tree says for its key is kept: under its bytes, its path and
    its folders' mtimes (a module created beside it may resolve an import)."""
    from ppy_core.compiler.check import _entry

    try:
        stamps = [path.parent.stat().st_mtime_ns, path.parent.parent.stat().st_mtime_ns]
    except OSError:
        return None
    digest = hashlib.sha256(source)
    digest.update(f"{path}\0{stamps}\0{__version__}".encode())
    return _entry(f"facts-{digest.hexdigest()[:32]}")


def _facts(path: Path, source: bytes) -> tuple[dict[str, Path], frozenset[str]] | None:
    """The project files a file imports and the modules it imports, as kept by
    `_keep_facts` (a warm check then parses nothing)."""
    entry = _facts_entry(path, source)
    if entry is None or not entry.is_file():
        return None
    try:
        document = json.loads(entry.read_text())
        files = {name: Path(p) for name, p in document["files"].items()}
        return files, frozenset(document["imported"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _keep_facts(
    path: Path, source: bytes, files: dict[str, Path], imported: frozenset[str]
) -> None:
    from ppy_core.compiler.check import _publish

    entry = _facts_entry(path, source)
    if entry is not None:
        document = {"files": {n: str(p) for n, p in files.items()}, "imported": sorted(imported)}
        _publish(entry, json.dumps(document))


def _plugins(tops: set[str], config: Config) -> list[list[str]] | None:
    from ppy_core.interface.discovery import discover, enablement

    found: list[list[str]] = []
    for name, entry in sorted(discover().plugins.items()):
        if not enablement(entry, config)[0]:
            continue
        if not entry.first_party:
            return None  # its claims are known only once it is loaded
        if not tops.intersection(entry.modules):
            continue
        package = entry.value.partition(":")[0].partition(".")[0]
        libraries = [f"{m}={_version(m)}" for m in entry.modules]
        found.append([name, entry.value, entry.distribution, entry.version,
                      _code_id(package), *libraries])  # fmt: skip
    return found


def _version(module: str) -> str:
    """An installed module's identity without importing it or parsing its metadata:
    the size and mtime of its top-level file (an upgrade rewrites it)."""
    try:
        spec = importlib.util.find_spec(module)
        st = Path(spec.origin).stat() if spec is not None and spec.origin else None
    except (ImportError, ValueError, OSError):
        return "none"
    return f"{st.st_size}@{st.st_mtime_ns}" if st is not None else "none"


def _folder_id(root: Path, top: str) -> str:
    single = root / f"{top}.py"
    if single.is_file():
        st = single.stat()
        return f"{st.st_size}@{st.st_mtime_ns}"
    return _tree_id(root / top)


@functools.cache
def _code_id(package: str) -> str:
    """Sizes and mtimes of a package's sources, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return "?"
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    if not locations:
        return "?"
    return _tree_id(Path(locations[0]))


def _tree_id(root: Path) -> str:
    """Sizes and mtimes of the sources under `root`."""
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*")):
        if file.suffix in (".py", ".c", ".h", ".cpp", ".pyi") and "__pycache__" not in file.parts:
            st = file.stat()
            digest.update(f"{file.relative_to(root)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


__all__ = ["claims_nothing", "quick_key"]
